//! NewReno's window (RFC 5681): slow start, one MSS per RTT in congestion avoidance,
//! ssthresh = max(FlightSize / 2, 2·MSS) on a loss. (Its recovery without SACK,
//! RFC 6582, is the sender's.)

use super::{slow_start, AckSample, CongestionControl, RenoGrowth, Window};

/// NewReno.
#[derive(Debug, Clone, Default)]
pub struct NewReno {
    growth: RenoGrowth,
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        let rest = slow_start(w, ack.acked_bytes);
        if rest > 0 && w.cwnd >= w.ssthresh {
            self.growth.grow(w, rest);
        }
    }

    fn on_loss(&mut self, w: &Window, _now_ns: u64) -> u64 {
        self.growth.reset();
        (w.flight / 2).max(2 * w.mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_halves_the_flight_and_never_goes_below_two_segments() {
        let mut r = NewReno::default();
        let w = Window {
            cwnd: 20_000,
            ssthresh: u64::MAX,
            mss: 1000,
            flight: 18_000,
        };
        assert_eq!(r.on_loss(&w, 0), 9000);
        assert_eq!(r.on_loss(&Window { flight: 1000, ..w }, 0), 2000);
    }
}
