//! CUBIC (RFC 9438). After a congestion event at window W_max the window follows
//! W_cubic(t) = C·(t − K)³ + W_max, K = ∛((W_max − cwnd_epoch)/C), in segments and
//! seconds since the epoch began; per ACK cwnd moves a share of the way to
//! W_cubic(t + RTT), and never below the Reno-friendly estimate W_est. Windows are
//! computed in segments (f64) and applied in bytes with the remainder carried.
//!
//! Where Linux's `tcp_cubic.c` (the `linux-*` profiles' CUBIC) says more than RFC 9438,
//! the model does what Linux does: the RTT of the look-ahead is the least RTT seen
//! (`delay_min`), not SRTT; until the first congestion event the window grows by at least
//! 5 % per RTT (Linux caps `cnt` at 20 while `last_max_cwnd` is 0: the path's capacity is
//! not known yet); and a retransmission timeout forgets W_max (`bictcp_reset` in the Loss
//! state), so the growth after it is that of a fresh connection.

use super::hystart::{Exit, HyStart};
use super::{slow_start, AckSample, CongestionControl, Window};

/// CUBIC's constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CubicParams {
    /// C, segments/s³ (RFC 9438: 0.4).
    pub c: f64,
    /// β_cubic, the multiplicative decrease (RFC 9438: 0.7).
    pub beta: f64,
    /// Fast convergence (RFC 9438 4.7).
    pub fast_convergence: bool,
    /// The Reno-friendly region (RFC 9438 4.3).
    pub reno_friendly: bool,
    /// HyStart's exit from slow start before a loss (Linux's default since 2.6.29).
    pub hystart: bool,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            reno_friendly: true,
            hystart: true,
        }
    }
}

/// Least growth per acknowledged segment before the first congestion event (Linux:
/// cnt at most 20, 5 % per RTT).
const UNKNOWN_CAPACITY_GROWTH: f64 = 1.0 / 20.0;

/// K, s: how long W_cubic takes from `cwnd_epoch` back to `w_max` (segments).
pub fn k_seconds(w_max: f64, cwnd_epoch: f64, c: f64) -> f64 {
    ((w_max - cwnd_epoch).max(0.0) / c).cbrt()
}

/// W_cubic(t), segments.
pub fn w_cubic(t_s: f64, k_s: f64, w_max: f64, c: f64) -> f64 {
    c * (t_s - k_s).powi(3) + w_max
}

/// CUBIC's state.
#[derive(Debug, Clone)]
pub struct Cubic {
    p: CubicParams,
    w_max: f64,
    k_s: f64,
    epoch_start_ns: Option<u64>,
    w_est: f64,
    carry_bytes: f64,
    hystart: HyStart,
    /// A congestion event has set W_max (Linux: last_max_cwnd is not 0).
    w_max_known: bool,
    /// The least RTT sample, ns (Linux's delay_min).
    delay_min_ns: Option<u64>,
}

impl Cubic {
    /// CUBIC with `params`.
    pub fn new(params: CubicParams) -> Self {
        Cubic {
            p: params,
            w_max: 0.0,
            k_s: 0.0,
            epoch_start_ns: None,
            w_est: 0.0,
            carry_bytes: 0.0,
            hystart: HyStart::default(),
            w_max_known: false,
            delay_min_ns: None,
        }
    }

    /// How HyStart ended slow start, if it did.
    pub fn hystart_exit(&self) -> Option<Exit> {
        self.hystart.exit()
    }

    /// W_max, segments.
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// K of the current epoch, s.
    pub fn k(&self) -> f64 {
        self.k_s
    }

    fn congestion(&mut self, w: &Window) -> u64 {
        let cwnd = w.cwnd as f64 / w.mss as f64;
        self.w_max = if self.p.fast_convergence && cwnd < self.w_max {
            cwnd * (1.0 + self.p.beta) / 2.0
        } else {
            cwnd
        };
        self.w_max_known = true;
        self.epoch_start_ns = None;
        self.carry_bytes = 0.0;
        ((w.cwnd as f64 * self.p.beta) as u64).max(2 * w.mss)
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        let rest = slow_start(w, ack.acked_bytes);
        if rest == 0 || w.cwnd < w.ssthresh {
            return;
        }
        let mss = w.mss as f64;
        let cwnd = w.cwnd as f64 / mss;
        let epoch = *self.epoch_start_ns.get_or_insert_with(|| {
            if self.w_max > cwnd {
                self.k_s = k_seconds(self.w_max, cwnd, self.p.c);
            } else {
                self.k_s = 0.0;
                self.w_max = cwnd;
            }
            self.w_est = cwnd;
            ack.now_ns
        });
        let t = ack.now_ns.saturating_sub(epoch) as f64 / 1e9;
        let rtt = self.delay_min_ns.or(ack.srtt_ns).unwrap_or(0) as f64 / 1e9;
        let target = w_cubic(t + rtt, self.k_s, self.w_max, self.p.c).clamp(cwnd, 1.5 * cwnd);
        let acked = rest as f64 / mss;
        let mut per_acked = (target - cwnd) / cwnd;
        if !self.w_max_known {
            per_acked = per_acked.max(UNKNOWN_CAPACITY_GROWTH);
        }
        let mut next = cwnd + per_acked * acked;
        if self.p.reno_friendly {
            let beta = self.p.beta;
            let alpha = if self.w_est >= self.w_max {
                1.0
            } else {
                3.0 * (1.0 - beta) / (1.0 + beta)
            };
            self.w_est += alpha * acked / cwnd;
            if w_cubic(t, self.k_s, self.w_max, self.p.c) < self.w_est {
                next = next.max(self.w_est);
            }
        }
        let grow = (next - cwnd) * mss + self.carry_bytes;
        let whole = grow.floor().max(0.0);
        self.carry_bytes = grow - whole;
        w.cwnd += whole as u64;
    }

    fn on_loss(&mut self, w: &Window, _now_ns: u64) -> u64 {
        self.congestion(w)
    }

    fn on_rto(&mut self, w: &Window, _now_ns: u64) -> u64 {
        // Slow start runs again after a timeout, and Linux watches it again.
        self.hystart.restart();
        let ssthresh = self.congestion(w);
        // Linux's Loss state resets CUBIC (bictcp_reset): W_max and the least RTT are
        // forgotten.
        self.w_max = 0.0;
        self.k_s = 0.0;
        self.w_max_known = false;
        self.delay_min_ns = None;
        ssthresh
    }

    fn acked(&mut self, w: &mut Window, ack: &AckSample) {
        if let Some(rtt) = ack.rtt_ns {
            let rtt = rtt.max(1);
            if self.delay_min_ns.is_none_or(|m| rtt < m) {
                self.delay_min_ns = Some(rtt);
            }
        }
        if self.p.hystart {
            self.hystart.on_ack(w, ack);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn k_and_w_of_t_by_hand() {
        // W_max 100 segments, β 0.7: cwnd_epoch 70, K = ∛(30 / 0.4) = ∛75 = 4.2172 s.
        let k = k_seconds(100.0, 70.0, 0.4);
        assert!((k - 4.217163).abs() < 1e-6, "K = {k}");
        assert!((w_cubic(0.0, k, 100.0, 0.4) - 70.0).abs() < 1e-9);
        assert_eq!(w_cubic(k, k, 100.0, 0.4), 100.0);
        // One second past K: 100 + 0.4 = 100.4; two seconds before: 100 − 3.2.
        assert!((w_cubic(k + 1.0, k, 100.0, 0.4) - 100.4).abs() < 1e-9);
        assert!((w_cubic(k - 2.0, k, 100.0, 0.4) - 96.8).abs() < 1e-9);
    }

    #[test]
    fn a_loss_sets_w_max_and_the_window_returns_to_it_after_k() {
        let mss = 1000;
        let mut cubic = Cubic::new(CubicParams {
            reno_friendly: false,
            ..CubicParams::default()
        });
        let mut w = Window {
            cwnd: 100 * mss,
            ssthresh: u64::MAX,
            mss,
            flight: 100 * mss,
        };
        let ssthresh = cubic.on_loss(&w, 0);
        assert_eq!(ssthresh, 70 * mss);
        assert_eq!(cubic.w_max(), 100.0);
        w.cwnd = ssthresh;
        w.ssthresh = ssthresh;
        // RTT 100 ms, one ACK of one segment per 1/cwnd of an RTT: after K the
        // window is back at W_max (to within what one RTT of lookahead adds).
        let rtt = S / 10;
        let mut now = 0;
        let mut acks = Vec::new();
        while now < 4_217_163_000 {
            let per_ack = rtt / (w.cwnd / mss);
            now += per_ack;
            cubic.on_ack(
                &mut w,
                &AckSample {
                    now_ns: now,
                    acked_bytes: mss,
                    srtt_ns: Some(rtt),
                    rtt_ns: Some(rtt),
                    ece: false,
                    ack: 0,
                    snd_nxt: 0,
                    paced: false,
                },
            );
            acks.push(w.cwnd);
        }
        assert!((cubic.k() - 4.217163).abs() < 1e-6);
        let at_k = w.cwnd as f64 / mss as f64;
        assert!(
            (99.0..=100.5).contains(&at_k),
            "cwnd at K = {at_k} segments"
        );
        // Concave: it grew faster at the start than near W_max.
        let first = acks[700] - acks[0];
        let last = acks[acks.len() - 1] - acks[acks.len() - 701];
        assert!(first > 3 * last, "{first} vs {last}");
    }

    /// cwnd (segments) after `acks` ACKs of one segment each in congestion avoidance,
    /// `gap_ns` apart from `start_ns`, with RTT sample `rtt_ns` and SRTT `srtt_ns`.
    fn grow(
        cubic: &mut Cubic,
        w: &mut Window,
        start_ns: u64,
        acks: u64,
        gap_ns: u64,
        rtt_ns: u64,
        srtt_ns: u64,
    ) -> f64 {
        for i in 0..acks {
            let a = AckSample {
                now_ns: start_ns + i * gap_ns,
                acked_bytes: w.mss,
                srtt_ns: Some(srtt_ns),
                rtt_ns: Some(rtt_ns),
                ece: false,
                ack: 0,
                snd_nxt: 0,
                paced: false,
            };
            cubic.acked(w, &a);
            cubic.on_ack(w, &a);
        }
        w.cwnd as f64 / w.mss as f64
    }

    fn ca_window(segments: u64) -> Window {
        Window {
            cwnd: segments * 1000,
            ssthresh: segments * 1000,
            mss: 1000,
            flight: segments * 1000,
        }
    }

    #[test]
    fn before_the_first_loss_the_window_grows_at_least_five_percent_per_rtt() {
        // Slow start left at 100 segments without a loss (HyStart): W_max unknown, so
        // Linux grows cwnd by at least 1/20 of a segment per acknowledged segment: one
        // RTT of ACKs (100) adds 5. After a loss at 100 segments, the same ACKs at 100
        // segments (W_max: CUBIC's plateau, W(0.2 s) = 100.003) add nothing.
        let p = CubicParams {
            reno_friendly: false,
            hystart: false,
            ..CubicParams::default()
        };
        let mut fresh = Cubic::new(p);
        let grown = grow(
            &mut fresh,
            &mut ca_window(100),
            S,
            100,
            1_000_000,
            100_000_000,
            100_000_000,
        );
        assert!((104.9..105.1).contains(&grown), "{grown}");
        let mut after_loss = Cubic::new(p);
        after_loss.on_loss(&ca_window(100), 0);
        let mut w = ca_window(100);
        let grown = grow(
            &mut after_loss,
            &mut w,
            S,
            100,
            1_000_000,
            100_000_000,
            100_000_000,
        );
        assert!(grown < 100.01, "{grown}");
        // A timeout forgets W_max (Linux's Loss state): the 5 % floor is back.
        after_loss.on_rto(&w, 0);
        assert_eq!(after_loss.w_max(), 0.0);
        let mut w = ca_window(100);
        let grown = grow(
            &mut after_loss,
            &mut w,
            3 * S,
            100,
            1_000_000,
            100_000_000,
            100_000_000,
        );
        assert!((104.9..105.1).contains(&grown), "{grown}");
    }

    #[test]
    fn the_look_ahead_is_the_least_rtt_not_srtt() {
        // W_max 100, cwnd 70 at the epoch's start (K = 4.2172 s). The target one RTT
        // ahead is W(0.01 s) = 70.216 with the least RTT of 10 ms, W(0.1 s) = 72.09 with
        // the SRTT of 100 ms. 70 ACKs at the epoch's start (1 µs apart), each moving cwnd
        // 1/cwnd of the way to the target, close 1 − e⁻¹ of the gap: 0.137 segments, not
        // 1.32.
        let p = CubicParams {
            reno_friendly: false,
            hystart: false,
            ..CubicParams::default()
        };
        let mut cubic = Cubic::new(p);
        let mut w = ca_window(100);
        w.cwnd = cubic.on_loss(&w, 0);
        w.ssthresh = w.cwnd;
        let grown = grow(&mut cubic, &mut w, S, 70, 1_000, 10_000_000, 100_000_000);
        assert!((70.13..70.14).contains(&grown), "{grown}");
    }

    #[test]
    fn fast_convergence_lowers_w_max_when_losing_below_it() {
        let mut cubic = Cubic::new(CubicParams::default());
        let w = Window {
            cwnd: 100_000,
            ssthresh: u64::MAX,
            mss: 1000,
            flight: 0,
        };
        cubic.on_loss(&w, 0);
        cubic.on_loss(&Window { cwnd: 80_000, ..w }, 0);
        assert!((cubic.w_max() - 80.0 * 1.7 / 2.0).abs() < 1e-9);
    }
}
