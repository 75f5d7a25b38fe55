//! HyStart, Linux CUBIC's way out of slow start before the first loss (Ha and Rhee, "Taming
//! the elephants", 2011; Linux's `tcp_cubic.c` since 2.6.29). Once cwnd reaches 16
//! segments, each round of ACKs (a window of data) is watched two ways:
//!
//! * **ACK train**: ACKs arriving within 2 ms of each other that keep coming for longer
//!   than half the path's least RTT (plus a little for the sender's own bursts; the whole
//!   RTT when the sender paces): the round's data already fills the path.
//! * **Delay increase**: the least of the round's first 8 RTT samples exceeds the path's
//!   least RTT by an eighth of it, clamped to 4-16 ms: a queue is building.
//!
//! Either sets ssthresh to cwnd, ending slow start without a loss. Without it a sender
//! doubles into the bottleneck's buffer and loses up to half of the last round.

use super::{AckSample, Window};

/// Slow start below this many segments of cwnd is left alone (Linux's hystart_low_window).
pub const LOW_WINDOW_SEGMENTS: u64 = 16;
/// ACKs closer than this belong to one train, ns (hystart_ack_delta_us: 2 ms).
pub const ACK_DELTA_NS: u64 = 2_000_000;
/// RTT samples taken at the start of a round before the delay test (HYSTART_MIN_SAMPLES).
pub const MIN_SAMPLES: u32 = 8;
/// The delay test's threshold is the least RTT / 8, clamped to these, ns.
pub const DELAY_MIN_NS: u64 = 4_000_000;
/// See `DELAY_MIN_NS`.
pub const DELAY_MAX_NS: u64 = 16_000_000;
/// Bytes Linux allows for the sender's own bursts in the train test: four 64 KiB GSO
/// packets at the pacing rate, at most 1 ms.
const BURST_ALLOWANCE_BYTES: u64 = 4 * 65_536;
const BURST_ALLOWANCE_MAX_NS: u64 = 1_000_000;

/// Which of HyStart's tests ended slow start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The ACK train outlasted half the least RTT (the whole of it, paced).
    AckTrain,
    /// The round's RTT rose above the least RTT by the threshold.
    Delay,
}

/// HyStart's state for one connection.
#[derive(Debug, Clone, Default)]
pub struct HyStart {
    found: Option<Exit>,
    delay_min_ns: Option<u64>,
    round_end: u64,
    round_start_ns: u64,
    last_ack_ns: u64,
    curr_rtt_ns: u64,
    samples: u32,
    started: bool,
}

impl HyStart {
    /// How slow start ended, if HyStart ended it.
    pub fn exit(&self) -> Option<Exit> {
        self.found
    }

    /// Forgets a found exit, the round and the least RTT (after a timeout slow start
    /// runs again; Linux's bictcp_reset clears delay_min with the rest).
    pub fn restart(&mut self) {
        self.found = None;
        self.started = false;
        self.delay_min_ns = None;
    }

    fn new_round(&mut self, now_ns: u64, snd_nxt: u64) {
        self.round_start_ns = now_ns;
        self.last_ack_ns = now_ns;
        self.round_end = snd_nxt;
        self.curr_rtt_ns = u64::MAX;
        self.samples = 0;
        self.started = true;
    }

    /// One ACK with an RTT sample (``ack.rtt_ns``; an ACK without one is ignored, as
    /// Linux's pkts_acked ignores it). Sets ``w.ssthresh`` to cwnd when a test fires;
    /// returns which one.
    ///
    /// As Linux's `hystart_update`: a round begins at the first ACK past the ``snd_nxt``
    /// of the previous round's beginning, whatever the window (the round is counted below
    /// the low window too); the tests run from 16 segments; the ACK train's threshold is
    /// the least RTT plus the burst allowance, halved when the sender does not pace (a
    /// paced sender's own spacing may stretch a round's ACKs by up to half an RTT).
    pub fn on_ack(&mut self, w: &mut Window, ack: &AckSample) -> Option<Exit> {
        let rtt_ns = ack.rtt_ns?.max(1);
        let now_ns = ack.now_ns;
        if self.delay_min_ns.is_none_or(|m| rtt_ns < m) {
            self.delay_min_ns = Some(rtt_ns);
        }
        let slow_start = w.cwnd < w.ssthresh;
        if self.found.is_some() || !slow_start {
            return None;
        }
        if !self.started || ack.ack > self.round_end {
            self.new_round(now_ns, ack.snd_nxt);
        }
        if w.cwnd < LOW_WINDOW_SEGMENTS * w.mss {
            return None;
        }
        let delay_min = self.delay_min_ns.unwrap_or(rtt_ns);
        let mut exit = None;
        if now_ns.saturating_sub(self.last_ack_ns) <= ACK_DELTA_NS {
            self.last_ack_ns = now_ns;
            let mut threshold = delay_min + burst_allowance_ns(w, ack.srtt_ns);
            if !ack.paced {
                threshold /= 2;
            }
            if now_ns - self.round_start_ns > threshold {
                exit = Some(Exit::AckTrain);
            }
        }
        self.curr_rtt_ns = self.curr_rtt_ns.min(rtt_ns);
        if self.samples < MIN_SAMPLES {
            self.samples += 1;
        } else if exit.is_none()
            && self.curr_rtt_ns > delay_min + (delay_min / 8).clamp(DELAY_MIN_NS, DELAY_MAX_NS)
        {
            exit = Some(Exit::Delay);
        }
        if exit.is_some() {
            self.found = exit;
            w.ssthresh = w.cwnd;
        }
        exit
    }
}

/// The time four 64 KiB bursts take at Linux's slow-start pacing rate (2 × cwnd / SRTT),
/// at most 1 ms; 0 before an RTT is known.
fn burst_allowance_ns(w: &Window, srtt_ns: Option<u64>) -> u64 {
    let Some(srtt) = srtt_ns.filter(|&s| s > 0) else {
        return 0;
    };
    // rate = 2·cwnd/srtt bytes per ns; time = bytes / rate = bytes·srtt / (2·cwnd).
    let ns = u128::from(BURST_ALLOWANCE_BYTES) * u128::from(srtt) / (2 * u128::from(w.cwnd.max(1)));
    u64::try_from(ns)
        .unwrap_or(u64::MAX)
        .min(BURST_ALLOWANCE_MAX_NS)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const MSS: u64 = 1000;

    fn window(segments: u64) -> Window {
        Window {
            cwnd: segments * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
            flight: segments * MSS,
        }
    }

    /// An ACK at `now` with RTT sample `rtt`, cumulative `ack`, `nxt` the next new byte.
    fn ack(now: u64, rtt: u64, ack: u64, nxt: u64, srtt: Option<u64>, paced: bool) -> AckSample {
        AckSample {
            now_ns: now,
            acked_bytes: MSS,
            srtt_ns: srtt,
            rtt_ns: Some(rtt),
            ece: false,
            ack,
            snd_nxt: nxt,
            paced,
        }
    }

    #[test]
    fn a_rising_rtt_ends_slow_start_at_the_delay_threshold() {
        // Least RTT 10 ms (learnt below 16 segments): the threshold is max(10/8, 4) =
        // 4 ms. ACKs 3 ms apart (no train): a round whose first 8 samples are 13.9 ms
        // does not fire, the next round's at 14.1 ms does.
        let mut h = HyStart::default();
        let srtt = Some(12 * MS);
        h.on_ack(&mut window(10), &ack(0, 10 * MS, 0, 10 * MSS, srtt, false));
        let mut w = window(40);
        let mut now = 0;
        for i in 1..=9 {
            now += 3 * MS;
            let a = ack(now, 13_900_000, i * MSS, 40 * MSS, srtt, false);
            assert_eq!(h.on_ack(&mut w, &a), None);
        }
        assert_eq!(w.ssthresh, u64::MAX);
        // A new round (ACKs past the 10 segments sent when the first round began).
        let mut fired = None;
        for i in 0..9 {
            now += 3 * MS;
            let a = ack(now, 14_100_000, (41 + i) * MSS, 80 * MSS, srtt, false);
            fired = fired.or(h.on_ack(&mut w, &a));
        }
        assert_eq!(fired, Some(Exit::Delay));
        assert_eq!(w.ssthresh, w.cwnd, "ssthresh = cwnd: slow start is over");
        assert_eq!(h.exit(), Some(Exit::Delay));
    }

    /// The ACK (index) at which ACKs 1 ms apart from the round's start end slow start.
    fn train_fires_at(paced: bool) -> Option<(u64, Exit)> {
        let mut h = HyStart::default();
        let mut w = window(100);
        for i in 0..20u64 {
            let a = ack(
                100 * MS + i * MS,
                10 * MS,
                i * MSS,
                100 * MSS,
                Some(10 * MS),
                paced,
            );
            if let Some(e) = h.on_ack(&mut w, &a) {
                return Some((i, e));
            }
        }
        None
    }

    #[test]
    fn an_ack_train_longer_than_half_the_rtt_ends_slow_start() {
        // Least RTT 10 ms, cwnd 100 segments, SRTT 10 ms: the burst allowance is
        // 262,144 B × 10 ms / 200,000 B = 13 ms, capped at 1 ms; threshold (10 + 1) / 2 =
        // 5.5 ms. ACKs every 1 ms from the round's start: the 6th (6 ms) fires.
        assert_eq!(train_fires_at(false), Some((6, Exit::AckTrain)));
    }

    #[test]
    fn a_paced_sender_waits_for_a_train_of_the_whole_rtt() {
        // Linux halves the threshold only for a socket that does not pace: paced, it is
        // 10 + 1 = 11 ms, so the ACK 12 ms into the round fires.
        assert_eq!(train_fires_at(true), Some((12, Exit::AckTrain)));
    }

    /// Where a round that begins at cwnd 10, ACKs `spacing_ns` apart each growing cwnd by
    /// a segment, ends slow start: (ACK index, cwnd in segments).
    fn round_from_ten_segments(spacing_ns: u64) -> Option<(u64, u64)> {
        let mut h = HyStart::default();
        let mut w = window(10);
        for i in 0..60u64 {
            w.cwnd = (10 + i) * MSS;
            let a = ack(i * spacing_ns, 10 * MS, i * MSS, 1000 * MSS, None, false);
            if h.on_ack(&mut w, &a).is_some() {
                return Some((i, w.ssthresh / MSS));
            }
        }
        None
    }

    #[test]
    fn rounds_are_counted_from_the_first_ack_below_the_low_window() {
        // Least RTT 10 ms, no SRTT yet (no burst allowance): threshold 5 ms. The round
        // begins with the first ACK, at cwnd 10; the tests start at 16 segments, but the
        // train is timed from the round's first ACK. ACKs 0.25 ms apart: 16 segments
        // 1.5 ms in, the ACK 5.25 ms in fires, at cwnd 31 (timed from the 16th segment it
        // would wait to 6.75 ms and cwnd 37).
        assert_eq!(round_from_ten_segments(250_000), Some((21, 31)));
        // As in Linux, the ACKs below 16 segments do not extend the train: ACKs 0.5 ms
        // apart reach 16 segments 3 ms after the round's first ACK, more than 2 ms after
        // the train's last ACK, so this round has no train (and its RTT is flat).
        assert_eq!(round_from_ten_segments(500_000), None);
    }

    #[test]
    fn a_gap_breaks_the_train_and_small_windows_are_left_alone() {
        let mut h = HyStart::default();
        let mut w = window(100);
        // ACKs 2.5 ms apart never form a train; RTT flat: nothing fires.
        for i in 0..20u64 {
            let a = ack(
                i * 2_500_000,
                10 * MS,
                i * MSS,
                100 * MSS,
                Some(10 * MS),
                false,
            );
            assert_eq!(h.on_ack(&mut w, &a), None);
        }
        let mut small = HyStart::default();
        let mut w = window(15);
        for i in 0..20u64 {
            let a = ack(i * 100_000, 50 * MS, i, 15 * MSS, Some(10 * MS), false);
            assert_eq!(
                small.on_ack(&mut w, &a),
                None,
                "below 16 segments HyStart only learns the least RTT"
            );
        }
        assert_eq!(small.delay_min_ns, Some(50 * MS));
    }

    #[test]
    fn after_a_restart_it_watches_slow_start_again() {
        let mut h = HyStart::default();
        let mut w = window(100);
        for i in 0..10u64 {
            h.on_ack(
                &mut w,
                &ack(i * MS, 10 * MS, i * MSS, 100 * MSS, Some(10 * MS), false),
            );
        }
        assert!(h.exit().is_some());
        h.restart();
        assert_eq!(h.exit(), None);
        let mut w = window(20);
        for i in 0..10u64 {
            let a = ack(
                200 * MS + i * MS,
                10 * MS,
                1000 * MSS + i * MSS,
                1100 * MSS,
                Some(10 * MS),
                false,
            );
            h.on_ack(&mut w, &a);
        }
        assert_eq!(h.exit(), Some(Exit::AckTrain));
    }
}
