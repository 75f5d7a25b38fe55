//! The rate a source is sending at, for a limiter that starts from the current rate.

/// Bytes sent in the window in progress and the one before it: the rate over the last
/// window is the current window's bytes plus the share of the previous window's bytes
/// that still lies inside it (bytes taken as spread evenly over their window).
#[derive(Debug, Clone, PartialEq)]
pub struct RateMeter {
    window_ns: u64,
    first_ns: Option<u64>,
    window_start_ns: u64,
    current_bytes: u64,
    previous_bytes: u64,
}

impl RateMeter {
    /// A meter over windows of `window_ns` (> 0) that has seen nothing.
    pub fn new(window_ns: u64) -> RateMeter {
        RateMeter {
            window_ns: window_ns.max(1),
            first_ns: None,
            window_start_ns: 0,
            current_bytes: 0,
            previous_bytes: 0,
        }
    }

    fn roll(&mut self, now_ns: u64) {
        let w = self.window_ns;
        let behind = now_ns.saturating_sub(self.window_start_ns);
        if behind >= 2 * w {
            self.previous_bytes = 0;
            self.current_bytes = 0;
            self.window_start_ns = now_ns - behind % w;
        } else if behind >= w {
            self.previous_bytes = self.current_bytes;
            self.current_bytes = 0;
            self.window_start_ns += w;
        }
    }

    /// `bytes` (as the limiter counts them, wire overhead included) left at `now_ns`.
    pub fn note(&mut self, now_ns: u64, bytes: u64) {
        if self.first_ns.is_none() {
            self.first_ns = Some(now_ns);
            self.window_start_ns = now_ns;
        }
        self.roll(now_ns);
        self.current_bytes += bytes;
    }

    /// The sending rate over the last window at `now_ns`, bit/s (over the time since the
    /// first byte while that is shorter than a window; 0 before anything was sent).
    pub fn rate_bps(&self, now_ns: u64) -> f64 {
        let Some(first) = self.first_ns else {
            return 0.0;
        };
        let mut at = self.clone();
        at.roll(now_ns);
        let w = at.window_ns as f64;
        let into = now_ns.saturating_sub(at.window_start_ns) as f64;
        let since_first = now_ns.saturating_sub(first);
        let (bytes, span) = if since_first < at.window_ns {
            (
                (at.current_bytes + at.previous_bytes) as f64,
                since_first.max(1) as f64,
            )
        } else {
            let inside = at.previous_bytes as f64 * (1.0 - into / w).max(0.0);
            (at.current_bytes as f64 + inside, w)
        };
        bytes * 8.0 * 1e9 / span
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_sending_reads_its_rate() {
        // A 1,500-byte frame every 2.4 µs is 5 Gbit/s.
        let mut m = RateMeter::new(100_000);
        let mut t = 1_000_000;
        for _ in 0..200 {
            m.note(t, 1500);
            t += 2400;
        }
        let r = m.rate_bps(t);
        assert!((r - 5e9).abs() < 0.05e9, "{r}");
    }

    #[test]
    fn before_a_window_it_measures_since_the_first_byte() {
        let mut m = RateMeter::new(1_000_000);
        assert_eq!(m.rate_bps(5), 0.0);
        m.note(0, 1500);
        m.note(10_000, 1500);
        // 3,000 bytes in 20 µs = 1.2 Gbit/s.
        assert!((m.rate_bps(20_000) - 1.2e9).abs() < 1.0);
    }

    #[test]
    fn silence_brings_it_to_zero() {
        let mut m = RateMeter::new(100_000);
        for k in 0..100 {
            m.note(k * 1200, 1500);
        }
        assert!(m.rate_bps(120_000) > 9e9);
        assert_eq!(m.rate_bps(500_000), 0.0);
        // Half a window after the last full one, half of its bytes still count.
        let mut m = RateMeter::new(100_000);
        m.note(0, 1000);
        m.note(100_000, 0);
        assert!((m.rate_bps(150_000) - 500.0 * 8.0 * 1e4).abs() < 1.0);
    }
}
