//! Pacing: spacing a sender's segments in time instead of sending a window at once.

/// How a sender paces.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pacing {
    /// No pacing: segments leave as fast as the window and the NIC allow.
    Off,
    /// Linux's internal pacing (`tcp_update_pacing_rate`): rate = ratio · cwnd / SRTT,
    /// with `ss_ratio` in slow start (2.0) and `ca_ratio` after (1.2).
    Linux {
        /// Ratio in slow start.
        ss_ratio: f64,
        /// Ratio in congestion avoidance.
        ca_ratio: f64,
    },
    /// A fixed rate, bit/s of frame bytes (what an HTB class or `fq maxrate` gives).
    Rate(u64),
}

/// When the next paced segment may leave.
#[derive(Debug, Clone, Default)]
pub struct Pacer {
    next_ns: u64,
}

impl Pacer {
    /// The earliest time the next segment may leave, ns.
    pub fn release_ns(&self) -> u64 {
        self.next_ns
    }

    /// A frame of `bytes` left at `now_ns` paced at `rate_bps` (None: unpaced).
    pub fn sent(&mut self, now_ns: u64, bytes: u64, rate_bps: Option<f64>) {
        match rate_bps {
            Some(rate) if rate > 0.0 => {
                let gap = (bytes as f64 * 8e9 / rate).ceil() as u64;
                self.next_ns = self.next_ns.max(now_ns) + gap;
            }
            _ => self.next_ns = now_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_spaced_by_their_bits_at_the_rate() {
        let mut p = Pacer::default();
        // 1,500 bytes at 1 Gbit/s: 12 µs apart; a late send starts a fresh gap.
        p.sent(0, 1500, Some(1e9));
        assert_eq!(p.release_ns(), 12_000);
        p.sent(12_000, 1500, Some(1e9));
        assert_eq!(p.release_ns(), 24_000);
        p.sent(100_000, 1500, Some(1e9));
        assert_eq!(p.release_ns(), 112_000);
        p.sent(200_000, 1500, None);
        assert_eq!(p.release_ns(), 200_000);
    }
}
