//! DCTCP (RFC 8257): the sender estimates α, the fraction of bytes marked CE, once per
//! window of data, α ← (1 − g)·α + g·F, and on an ECN echo cuts cwnd by α/2 instead of
//! half. Growth and loss response are Reno's.

use super::{slow_start, AckSample, CongestionControl, RenoGrowth, Window};

/// DCTCP's sender state.
#[derive(Debug, Clone)]
pub struct Dctcp {
    g: f64,
    alpha: f64,
    growth: RenoGrowth,
    window_end: Option<u64>,
    acked_bytes: u64,
    marked_bytes: u64,
}

impl Dctcp {
    /// DCTCP with gain `g` (RFC 8257: 1/16) and α starting at `initial_alpha` (Linux: 1).
    pub fn new(g: f64, initial_alpha: f64) -> Self {
        Dctcp {
            g,
            alpha: initial_alpha,
            growth: RenoGrowth::default(),
            window_end: None,
            acked_bytes: 0,
            marked_bytes: 0,
        }
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        let rest = slow_start(w, ack.acked_bytes);
        if rest > 0 && w.cwnd >= w.ssthresh {
            self.growth.grow(w, rest);
        }
    }

    fn on_loss(&mut self, w: &Window, _now_ns: u64) -> u64 {
        self.growth.reset();
        (w.cwnd / 2).max(2 * w.mss)
    }

    fn on_ecn(&mut self, w: &Window, _now_ns: u64) -> u64 {
        self.growth.reset();
        ((w.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64).max(2 * w.mss)
    }

    fn observe(&mut self, ack: &AckSample) {
        let end = *self.window_end.get_or_insert(ack.snd_nxt);
        self.acked_bytes += ack.acked_bytes;
        if ack.ece {
            self.marked_bytes += ack.acked_bytes;
        }
        if ack.ack >= end && ack.acked_bytes > 0 {
            if self.acked_bytes > 0 {
                let f = self.marked_bytes as f64 / self.acked_bytes as f64;
                self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            }
            self.acked_bytes = 0;
            self.marked_bytes = 0;
            self.window_end = Some(ack.snd_nxt);
        }
    }

    fn alpha(&self) -> Option<f64> {
        Some(self.alpha)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u64, ece: bool, at: u64, nxt: u64) -> AckSample {
        AckSample {
            now_ns: 0,
            acked_bytes: acked,
            srtt_ns: None,
            rtt_ns: None,
            ece,
            ack: at,
            snd_nxt: nxt,
            paced: false,
        }
    }

    #[test]
    fn alpha_moves_by_g_times_the_marked_fraction_once_per_window() {
        let mut d = Dctcp::new(1.0 / 16.0, 1.0);
        // Ten segments of 1,000 bytes in flight: the ACK of byte i·1,000 finds snd_nxt
        // at i·1,000 + 10,000. Window 1 ends at the first ACK's snd_nxt, 11,000:
        // nothing marked, α = 15/16.
        let sample = |i: u64, ece| ack(1000, ece, i * 1000, i * 1000 + 10_000);
        for i in 1..=10 {
            d.observe(&sample(i, false));
        }
        assert_eq!(d.alpha(), Some(1.0), "α holds within a window");
        d.observe(&sample(11, false));
        assert_eq!(d.alpha(), Some(0.9375));
        // Window 2 ends at 21,000: 5 of its 10 ACKed segments marked.
        for i in 12..=21 {
            d.observe(&sample(i, i % 2 == 0));
        }
        assert_eq!(d.alpha(), Some(0.9375 * 15.0 / 16.0 + 0.5 / 16.0));
        d.observe(&sample(22, true));
        assert_eq!(d.alpha(), Some(0.9375 * 15.0 / 16.0 + 0.5 / 16.0));
    }

    #[test]
    fn an_echo_cuts_by_half_alpha_and_a_loss_by_half() {
        let mut d = Dctcp::new(1.0 / 16.0, 0.25);
        let w = Window {
            cwnd: 100_000,
            ssthresh: 50_000,
            mss: 1000,
            flight: 100_000,
        };
        assert_eq!(d.on_ecn(&w, 0), 87_500);
        assert_eq!(d.on_loss(&w, 0), 50_000);
    }
}
