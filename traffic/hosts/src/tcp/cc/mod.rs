//! Congestion control: how the congestion window grows on ACKs and what a loss or an
//! ECN echo does to it. The sender owns recovery (which segments, when); an algorithm
//! only answers "how much".

mod cubic;
mod dctcp;
pub mod hystart;
mod newreno;

pub use cubic::{Cubic, CubicParams};
pub use dctcp::Dctcp;
pub use newreno::NewReno;

/// The window an algorithm works on (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Slow-start threshold, bytes.
    pub ssthresh: u64,
    /// Sender maximum segment size, bytes.
    pub mss: u64,
    /// Bytes in flight (RFC 5681's FlightSize).
    pub flight: u64,
}

/// What an ACK told the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckSample {
    /// When it arrived, ns.
    pub now_ns: u64,
    /// Bytes it newly acknowledged cumulatively.
    pub acked_bytes: u64,
    /// Smoothed RTT, ns (None before the first sample).
    pub srtt_ns: Option<u64>,
    /// This ACK's RTT sample, ns (None when it acknowledged only retransmitted data, or
    /// nothing new).
    pub rtt_ns: Option<u64>,
    /// Its ECN-Echo flag.
    pub ece: bool,
    /// Cumulative acknowledgment (stream offset).
    pub ack: u64,
    /// The sender's next new byte (stream offset).
    pub snd_nxt: u64,
    /// Whether the sender paces (Linux: the socket's pacing status is not NONE, from
    /// internal pacing, fq or SO_MAX_PACING_RATE); HyStart's ACK train depends on it.
    pub paced: bool,
}

/// A congestion-control algorithm.
pub trait CongestionControl: Send + Sync {
    /// Name as profiles and results spell it.
    fn name(&self) -> &'static str;
    /// Grows the window on an ACK of new data outside recovery, while cwnd-limited.
    fn on_ack(&mut self, w: &mut Window, ack: &AckSample);
    /// The slow-start threshold after a loss detected by ACKs, bytes.
    fn on_loss(&mut self, w: &Window, now_ns: u64) -> u64;
    /// The slow-start threshold after a retransmission timeout, bytes.
    fn on_rto(&mut self, w: &Window, now_ns: u64) -> u64 {
        self.on_loss(w, now_ns)
    }
    /// The window after an ECN echo (at most once per window of data), bytes; classic
    /// ECN (RFC 3168) treats it as a loss.
    fn on_ecn(&mut self, w: &Window, now_ns: u64) -> u64 {
        self.on_loss(w, now_ns)
    }
    /// Sees every ACK, in recovery too (DCTCP counts marked bytes here).
    fn observe(&mut self, _ack: &AckSample) {}
    /// Sees every ACK with an RTT sample, in any state, before the window grows (Linux's
    /// pkts_acked): CUBIC's HyStart may end slow start here by setting ssthresh.
    fn acked(&mut self, _w: &mut Window, _ack: &AckSample) {}
    /// DCTCP's α, for recording (None for algorithms without one).
    fn alpha(&self) -> Option<f64> {
        None
    }
}

/// Slow start with byte counting as Linux does it (`tcp_slow_start`): cwnd grows by the
/// bytes acknowledged, up to ssthresh; returns the acknowledged bytes left over for
/// congestion avoidance.
pub fn slow_start(w: &mut Window, acked: u64) -> u64 {
    if w.cwnd >= w.ssthresh {
        return acked;
    }
    let grown = (w.cwnd + acked).min(w.ssthresh);
    let used = grown - w.cwnd;
    w.cwnd = grown;
    acked - used
}

/// Reno's congestion avoidance with appropriate byte counting (RFC 5681 3.1, RFC 3465):
/// one MSS more per cwnd of bytes acknowledged.
#[derive(Debug, Clone, Default)]
pub struct RenoGrowth {
    counted: u64,
}

impl RenoGrowth {
    /// Counts `acked` bytes in congestion avoidance.
    pub fn grow(&mut self, w: &mut Window, acked: u64) {
        self.counted += acked;
        while self.counted >= w.cwnd && w.cwnd > 0 {
            self.counted -= w.cwnd;
            w.cwnd += w.mss;
        }
    }

    /// Forgets partial progress (after a reduction).
    pub fn reset(&mut self) {
        self.counted = 0;
    }
}

/// Which algorithm a flow runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Algorithm {
    /// NewReno (RFC 5681 growth, RFC 6582 recovery without SACK).
    NewReno,
    /// CUBIC (RFC 9438).
    Cubic(CubicParams),
    /// DCTCP (RFC 8257) with gain `g` and initial α.
    Dctcp {
        /// Estimation gain g.
        g: f64,
        /// α before the first window.
        initial_alpha: f64,
    },
}

impl Algorithm {
    /// A fresh instance.
    pub fn build(&self) -> Box<dyn CongestionControl> {
        match *self {
            Algorithm::NewReno => Box::new(NewReno::default()),
            Algorithm::Cubic(p) => Box::new(Cubic::new(p)),
            Algorithm::Dctcp { g, initial_alpha } => Box::new(Dctcp::new(g, initial_alpha)),
        }
    }

    /// Name as profiles and results spell it.
    pub fn name(&self) -> &'static str {
        match self {
            Algorithm::NewReno => "newreno",
            Algorithm::Cubic(_) => "cubic",
            Algorithm::Dctcp { .. } => "dctcp",
        }
    }

    /// Whether the algorithm needs ECN (DCTCP does).
    pub fn needs_ecn(&self) -> bool {
        matches!(self, Algorithm::Dctcp { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_stops_at_ssthresh_and_hands_over_the_rest() {
        let mut w = Window {
            cwnd: 10_000,
            ssthresh: 12_000,
            mss: 1000,
            flight: 0,
        };
        assert_eq!(slow_start(&mut w, 3000), 1000);
        assert_eq!(w.cwnd, 12_000);
        assert_eq!(slow_start(&mut w, 500), 500);
    }

    #[test]
    fn reno_adds_one_mss_per_window_of_acked_bytes() {
        let mut w = Window {
            cwnd: 10_000,
            ssthresh: 5_000,
            mss: 1000,
            flight: 0,
        };
        let mut g = RenoGrowth::default();
        for _ in 0..9 {
            g.grow(&mut w, 1000);
        }
        assert_eq!(w.cwnd, 10_000);
        g.grow(&mut w, 1000);
        assert_eq!(w.cwnd, 11_000);
    }
}
