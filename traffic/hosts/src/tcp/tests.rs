//! Sender and receiver together over a model path: a bottleneck that serialises at a
//! rate with a drop-tail buffer and an optional CE threshold, fixed propagation
//! delays, and a hook that drops chosen data segments. Hand-computed expectations.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, VecDeque};

use super::cc::Algorithm;
use super::config::TcpConfig;
use super::receiver::TcpReceiver;
use super::segment::{ecn, Segment};
use super::sender::{SenderState, TcpSender};

const MS: u64 = 1_000_000;
const MSS: u64 = 1000;

#[derive(Clone, Copy)]
enum Ev {
    AtReceiver(Segment),
    AtSender(Segment),
    LinkDone,
    Wake,
}

/// Decides whether the n-th data segment the sender sends (0-based) is dropped.
type DropRule = Box<dyn FnMut(u64, &Segment) -> bool>;

/// What the path does.
struct Path {
    rate_bps: u64,
    one_way_ns: u64,
    buffer_bytes: u64,
    ce_above_bytes: Option<u64>,
    /// Drops the n-th data segment the sender sends (0-based) when it returns true.
    drop: DropRule,
}

struct Run {
    tx: TcpSender,
    rx: TcpReceiver,
    path: Path,
    now: u64,
    events: BinaryHeap<Reverse<(u64, u64, usize)>>,
    slots: Vec<Ev>,
    order: u64,
    queue: VecDeque<Segment>,
    queued_bytes: u64,
    link_busy: bool,
    sent: u64,
    /// (time, wire seq, payload) of every data segment the sender sent.
    log: Vec<(u64, u32, u32)>,
    /// cwnd (bytes) when each ACK had been processed, with the time.
    cwnds: Vec<(u64, u64)>,
    dropped: u64,
    max_queue: u64,
    wakes: BTreeSet<u64>,
}

impl Run {
    fn new(cfg: &TcpConfig, flow: Option<u64>, path: Path) -> Run {
        let mut run = Run {
            tx: TcpSender::new(cfg, 0, flow, 1000),
            rx: TcpReceiver::new(cfg, flow, 5000),
            path,
            now: 0,
            events: BinaryHeap::new(),
            slots: Vec::new(),
            order: 0,
            queue: VecDeque::new(),
            queued_bytes: 0,
            link_busy: false,
            sent: 0,
            log: Vec::new(),
            cwnds: Vec::new(),
            dropped: 0,
            max_queue: 0,
            wakes: BTreeSet::new(),
        };
        run.push(0, Ev::Wake);
        run
    }

    fn push(&mut self, t: u64, ev: Ev) {
        self.order += 1;
        self.slots.push(ev);
        self.events
            .push(Reverse((t, self.order, self.slots.len() - 1)));
    }

    fn serialise_ns(&self, seg: &Segment) -> u64 {
        (seg.frame_bytes() as u64 * 8 * 1_000_000_000).div_ceil(self.path.rate_bps)
    }

    fn enqueue(&mut self, mut seg: Segment) {
        let bytes = seg.frame_bytes() as u64;
        if self.queued_bytes + bytes > self.path.buffer_bytes {
            self.dropped += 1;
            return;
        }
        if let Some(k) = self.path.ce_above_bytes {
            if self.queued_bytes > k && seg.ecn != ecn::NOT_ECT {
                seg.ecn = ecn::CE;
            }
        }
        self.queued_bytes += bytes;
        self.max_queue = self.max_queue.max(self.queued_bytes);
        self.queue.push_back(seg);
        self.start_link();
    }

    fn start_link(&mut self) {
        if self.link_busy {
            return;
        }
        if let Some(seg) = self.queue.front().copied() {
            self.link_busy = true;
            let t = self.now + self.serialise_ns(&seg);
            self.push(t, Ev::LinkDone);
        }
    }

    fn pump(&mut self) {
        while let Some(seg) = self.tx.poll_transmit(self.now) {
            if seg.payload > 0 {
                self.log.push((self.now, seg.seq, seg.payload));
                let n = self.sent;
                self.sent += 1;
                if (self.path.drop)(n, &seg) {
                    continue;
                }
            }
            self.enqueue(seg);
        }
        while let Some(ack) = self.rx.poll_ack(self.now) {
            let t = self.now + self.path.one_way_ns;
            self.push(t, Ev::AtSender(ack));
        }
        for t in [
            self.tx.next_timer_ns(),
            self.rx.next_timer_ns(),
            self.tx.ready_ns(self.now),
        ]
        .into_iter()
        .flatten()
        {
            if t > self.now && self.wakes.insert(t) {
                self.push(t, Ev::Wake);
            }
        }
    }

    fn run_until(&mut self, until: u64) {
        self.pump();
        while let Some(Reverse((t, _, slot))) = self.events.peek().copied() {
            if t > until {
                break;
            }
            self.events.pop();
            self.now = t;
            match self.slots[slot] {
                Ev::AtReceiver(seg) => self.rx.on_segment(t, &seg),
                Ev::AtSender(seg) => {
                    self.tx.on_segment(t, &seg);
                    self.cwnds.push((t, self.tx.cwnd_bytes()));
                }
                Ev::LinkDone => {
                    self.link_busy = false;
                    if let Some(seg) = self.queue.pop_front() {
                        self.queued_bytes -= seg.frame_bytes() as u64;
                        self.push(t + self.path.one_way_ns, Ev::AtReceiver(seg));
                    }
                    self.start_link();
                }
                Ev::Wake => {
                    self.wakes.remove(&t);
                }
            }
            self.tx.on_timer(t);
            self.pump();
            if self.tx.state() == SenderState::Done && self.events.is_empty() {
                break;
            }
        }
    }

    /// cwnd in segments just before `t`.
    fn cwnd_at(&self, t: u64) -> u64 {
        self.cwnds
            .iter()
            .take_while(|(at, _)| *at < t)
            .last()
            .map_or(0, |c| c.1)
            / MSS
    }

    /// Send times of data segments carrying wire sequence number `seq`.
    fn sends_of(&self, seq: u32) -> Vec<u64> {
        self.log
            .iter()
            .filter(|l| l.1 == seq)
            .map(|l| l.0)
            .collect()
    }
}

/// Times within 10 µs of each other: the path adds ns of serialisation per frame.
fn near(got: &[u64], want: &[u64]) -> bool {
    got.len() == want.len() && got.iter().zip(want).all(|(g, w)| g.abs_diff(*w) < 10_000)
}

fn cfg(profile: &str) -> TcpConfig {
    TcpConfig {
        mss_bytes: MSS as u32,
        receive_window_bytes: 64 << 20,
        ..TcpConfig::profile(profile).unwrap()
    }
}

fn fat_path(one_way_ns: u64) -> Path {
    Path {
        rate_bps: 100_000_000_000,
        one_way_ns,
        buffer_bytes: u64::MAX / 2,
        ce_above_bytes: None,
        drop: Box::new(|_, _| false),
    }
}

/// Wire sequence number of data byte `offset` (the sender's ISN is 1000).
fn wire(offset: u64) -> u32 {
    1001 + offset as u32
}

#[test]
fn slow_start_doubles_the_window_every_rtt() {
    // RTT 10 ms (5 ms each way), a path too fast to queue: the SYN-ACK arrives at
    // 10 ms, then each RTT's ACKs add the bytes they acknowledge. With delayed ACKs
    // (one per two segments) an even window still doubles; IW 3 is checked with an ACK
    // per segment.
    for (profile, iw, delayed) in [("linux-today", 10, true), ("linux-2010", 3, false)] {
        let mut c = cfg(profile);
        c.quickack_segments = 0;
        c.delayed_ack = delayed;
        let mut run = Run::new(&c, None, fat_path(5 * MS));
        run.run_until(70 * MS);
        for k in 0..5 {
            // After the ACKs of round k returned (at 20 + 10·k ms, give or take).
            let t = 29 * MS + k * 10 * MS;
            assert_eq!(run.cwnd_at(t), iw << (k + 1), "{profile} after round {k}");
        }
        assert_eq!(run.tx.stats().retransmitted_segments, 0);
    }
}

#[test]
fn delayed_acks_come_every_second_segment_or_after_40_ms() {
    let mut c = cfg("linux-2010");
    c.quickack_segments = 0;
    // Three segments: two ACKed at once, the third after the 40 ms timer.
    let mut run = Run::new(&c, Some(3 * MSS), fat_path(5 * MS));
    run.run_until(200 * MS);
    assert_eq!(
        run.rx.stats().acks_sent,
        1 + 2,
        "SYN-ACK, one for two, one delayed"
    );
    // Data left at 10 ms, arrived at 15; the delayed ACK left at 55 and arrived at 60.
    assert!(near(&[run.tx.completed_ns().unwrap()], &[60 * MS]));
}

fn drop_first_send_of(offsets: Vec<u64>) -> DropRule {
    let mut pending: Vec<u32> = offsets.into_iter().map(wire).collect();
    Box::new(move |_, seg| {
        if let Some(i) = pending.iter().position(|&s| s == seg.seq) {
            pending.remove(i);
            true
        } else {
            false
        }
    })
}

#[test]
fn sack_fast_retransmit_after_three_segments_above_the_hole() {
    let mut c = cfg("linux-2010");
    c.quickack_segments = 1000;
    let path = Path {
        drop: drop_first_send_of(vec![4 * MSS]),
        ..fat_path(5 * MS)
    };
    let mut run = Run::new(&c, Some(30 * MSS), path);
    run.run_until(2000 * MS);
    let sends = run.sends_of(wire(4 * MSS));
    assert_eq!(sends.len(), 2, "sent once, retransmitted once");
    // IW 3 at 10 ms; ACKs at 20 ms grow cwnd to 6: segments 3..8 leave at 20 ms.
    // Segments 5, 6 and 7 arrive above the hole; the ACK for 7 (the third SACKed
    // segment) reaches the sender at 30 ms and segment 4 goes again then (RFC 6675
    // 5 (4.3): the first retransmission whatever pipe says).
    assert!(near(&sends, &[20 * MS, 30 * MS]), "{sends:?}");
    let s = run.tx.stats();
    assert_eq!(
        (s.fast_recoveries, s.timeouts, s.retransmitted_segments),
        (1, 0, 1)
    );
    assert!(run.tx.completed_ns().is_some());
}

#[test]
fn newreno_without_sack_retransmits_on_the_third_dupack_and_on_partial_acks() {
    let mut c = cfg("newreno");
    c.sack = false;
    c.rack_tlp = false;
    c.quickack_segments = 1000;
    let path = Path {
        drop: drop_first_send_of(vec![10 * MSS, 12 * MSS]),
        ..fat_path(5 * MS)
    };
    let mut run = Run::new(&c, Some(60 * MSS), path);
    run.run_until(3000 * MS);
    let s = *run.tx.stats();
    assert_eq!(s.fast_recoveries, 1, "both holes in one recovery");
    assert_eq!(s.timeouts, 0);
    assert_eq!(s.retransmitted_segments, 2);
    let first = run.sends_of(wire(10 * MSS))[1];
    let second = run.sends_of(wire(12 * MSS))[1];
    // The partial ACK for the first retransmission names the second hole one RTT later.
    assert!(near(&[second - first], &[10 * MS]));
    assert!(run.tx.completed_ns().is_some());
}

#[test]
fn rto_backs_off_doubling_and_the_window_restarts_at_one_segment() {
    let mut c = cfg("linux-2010");
    c.quickack_segments = 1000;
    // Drop every copy of segment 2 sent before 2 s.
    let path = Path {
        drop: Box::new(move |_, seg| seg.seq == wire(2 * MSS)),
        ..fat_path(5 * MS)
    };
    let mut run = Run::new(&c, Some(3 * MSS), path);
    run.run_until(3000 * MS);
    let sends = run.sends_of(wire(2 * MSS));
    // RTT 10 ms: Linux's RTO = 10 + max(200, 4·RTTVAR) = 210 ms, restarted by the ACK
    // of segments 0 and 1 at 20 ms: first timeout at 230 ms, then 420 and 840 ms later.
    assert!(
        near(&sends[..4], &[10 * MS, 230 * MS, 650 * MS, 1490 * MS]),
        "{sends:?}"
    );
    assert_eq!(run.tx.stats().timeouts, sends.len() as u64 - 1);
    assert_eq!(run.tx.cwnd_bytes(), MSS);
    assert_eq!(run.tx.stats().fast_recoveries, 0);
}

#[test]
fn a_tail_loss_probe_repairs_the_tail_without_a_timeout() {
    let mut c = cfg("linux-today");
    c.quickack_segments = 1000;
    let path = Path {
        drop: drop_first_send_of(vec![8 * MSS, 9 * MSS]),
        ..fat_path(5 * MS)
    };
    let mut run = Run::new(&c, Some(10 * MSS), path);
    run.run_until(3000 * MS);
    // All ten leave at 10 ms, eight ACKs arrive at 20 ms. PTO = 2·SRTT = 20 ms: at
    // 40 ms the probe resends the last segment; its SACK lets RACK mark segment 8
    // lost, resent at 50 ms; the flow completes at 60 ms, no timeout.
    assert!(near(&run.sends_of(wire(9 * MSS)), &[10 * MS, 40 * MS]));
    assert!(near(&run.sends_of(wire(8 * MSS)), &[10 * MS, 50 * MS]));
    let s = run.tx.stats();
    assert_eq!((s.tlp_probes, s.timeouts, s.fast_recoveries), (1, 0, 1));
    assert!(near(&[run.tx.completed_ns().unwrap()], &[60 * MS]));
    // linux-2010 has no TLP: the same losses cost an RTO (210 ms after the ACK at 20).
    let mut old = cfg("linux-2010");
    old.initial_window_segments = 10;
    old.quickack_segments = 1000;
    let path = Path {
        drop: drop_first_send_of(vec![8 * MSS, 9 * MSS]),
        ..fat_path(5 * MS)
    };
    let mut run = Run::new(&old, Some(10 * MSS), path);
    run.run_until(3000 * MS);
    assert_eq!(run.tx.stats().timeouts, 1);
    assert!(near(&run.sends_of(wire(8 * MSS)), &[10 * MS, 230 * MS]));
}

#[test]
fn rack_marks_a_hole_lost_once_a_later_segment_is_delivered_and_time_passes() {
    let mut c = cfg("linux-today");
    c.quickack_segments = 1000;
    let path = Path {
        drop: drop_first_send_of(vec![3 * MSS]),
        ..fat_path(5 * MS)
    };
    let mut run = Run::new(&c, Some(8 * MSS), path);
    run.run_until(3000 * MS);
    let sends = run.sends_of(wire(3 * MSS));
    // All 8 left at 10 ms; SACKs from 20 ms. With fewer than 3 SACKed segments the
    // reordering window is min_RTT/4 = 2.5 ms; with the 3rd SACK it is 0 and RACK.rtt
    // (10 ms) has passed since the hole was sent: retransmitted at 20 ms.
    assert!(near(&sends, &[10 * MS, 20 * MS]), "{sends:?}");
    assert_eq!(run.tx.stats().fast_recoveries, 1);
    assert_eq!(run.tx.stats().timeouts, 0);
}

#[test]
fn cubic_cuts_to_seventy_percent_and_newreno_to_half_on_a_loss() {
    for (profile, expect) in [("linux-2010", 0.7), ("newreno", 0.5)] {
        let mut c = cfg(profile);
        c.quickack_segments = 1000;
        c.initial_window_segments = 10;
        let path = Path {
            drop: drop_first_send_of(vec![100 * MSS]),
            ..fat_path(5 * MS)
        };
        let mut run = Run::new(&c, None, path);
        run.run_until(60 * MS);
        let before = run.tx.stats().max_cwnd_bytes;
        let ssthresh = run.tx.ssthresh_bytes();
        assert_eq!(run.tx.stats().fast_recoveries, 1, "{profile}");
        // The window at the loss was the largest so far (slow start, no cap).
        let ratio = ssthresh as f64 / before as f64;
        assert!(
            (ratio - expect).abs() < 0.03,
            "{profile}: {ssthresh} / {before} = {ratio}"
        );
    }
}

#[test]
fn dctcp_holds_the_queue_near_k_without_loss_and_alpha_settles() {
    let c = cfg("dctcp");
    // 1 Gbit/s, RTT 1 ms (BDP 125 kB), K = 30 kB, a buffer of 200 kB.
    let path = Path {
        rate_bps: 1_000_000_000,
        one_way_ns: 500_000,
        buffer_bytes: 200_000,
        ce_above_bytes: Some(30_000),
        drop: Box::new(|_, _| false),
    };
    let mut run = Run::new(&c, None, path);
    run.run_until(500 * MS);
    assert!(run.tx.ecn_negotiated());
    assert_eq!(run.dropped, 0, "DCTCP keeps the queue below the buffer");
    assert!(run.tx.stats().ecn_reductions > 10);
    assert_eq!(run.tx.stats().retransmitted_segments, 0);
    assert!(run.max_queue < 100_000, "queue peaked at {}", run.max_queue);
    let alpha = run.tx.alpha().unwrap();
    assert!(alpha > 0.0 && alpha < 0.5, "α = {alpha}");
    // Throughput near the link rate: delivered bytes over the last 400 ms.
    let delivered = run.rx.delivered_bytes() as f64 * 8.0 / 0.5;
    assert!(delivered > 0.85e9, "{delivered} bit/s");
    // CUBIC on the same path with ECN off fills the buffer and loses.
    let mut cubic = cfg("linux-today");
    cubic.algorithm = Algorithm::Cubic(Default::default());
    let path = Path {
        rate_bps: 1_000_000_000,
        one_way_ns: 500_000,
        buffer_bytes: 200_000,
        ce_above_bytes: Some(30_000),
        drop: Box::new(|_, _| false),
    };
    let mut run = Run::new(&cubic, None, path);
    run.run_until(500 * MS);
    assert!(run.dropped > 0);
    assert!(run.max_queue > 190_000);
}

/// Data segments the sender sent in reply to each of the first `acks` ACKs after the
/// fast retransmission of the segment at `offset`, and ssthresh (segments) after.
fn recovery_replies(prr: bool, offset: u64, acks: usize) -> (Vec<usize>, u64) {
    let mut c = cfg("linux-today");
    c.prr = prr;
    c.quickack_segments = 1_000_000;
    c.algorithm = Algorithm::Cubic(super::cc::CubicParams {
        hystart: false,
        ..Default::default()
    });
    let path = Path {
        drop: drop_first_send_of(vec![offset]),
        ..fat_path(5 * MS)
    };
    let mut run = Run::new(&c, None, path);
    run.run_until(200 * MS);
    let fast = run.sends_of(wire(offset))[1];
    let replies = run
        .cwnds
        .iter()
        .filter(|(t, _)| *t > fast)
        .take(acks)
        .map(|&(t, _)| run.log.iter().filter(|l| l.0 == t).count())
        .collect();
    (replies, run.tx.ssthresh_bytes() / MSS)
}

#[test]
fn prr_spreads_the_reduction_over_the_recovery_and_rfc6675_waits_for_pipe() {
    // Slow start from IW 10 with an ACK per segment on a path that never queues; the
    // segment at 150 kB is lost. When SACKs reveal it cwnd is 160 segments and CUBIC's
    // ssthresh 112. With PRR each delivered segment lets about
    // 0.7 of a segment go: in the 20 ACKs after the fast retransmission the sender sends
    // ceil(0.7 × k) in total, 14 (the retransmission went on the ACK that began the
    // recovery). Without PRR (RFC 6675: cwnd = ssthresh at once) pipe stays above cwnd
    // for those ACKs and nothing goes.
    let (with, ssthresh) = recovery_replies(true, 150 * MSS, 20);
    let sent: usize = with.iter().sum();
    assert!(
        (13..=15).contains(&sent),
        "PRR sent {sent} in 20 ACKs: {with:?}"
    );
    assert!(
        with.iter().all(|&n| n <= 1),
        "never more than one per ACK: {with:?}"
    );
    let (without, ssthresh_6675) = recovery_replies(false, 150 * MSS, 20);
    assert_eq!(without.iter().sum::<usize>(), 0, "{without:?}");
    assert_eq!(
        ssthresh, ssthresh_6675,
        "the same reduction, reached differently"
    );
}

/// Sizes of the bursts (segments sent at the same instant) between `from` and `to`, and
/// the gaps before each burst, ns.
fn bursts(run: &Run, from: u64, to: u64) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut last: Option<u64> = None;
    for &(t, _, _) in run.log.iter().filter(|l| (from..to).contains(&l.0)) {
        match out.last_mut() {
            Some(b) if last == Some(t) => b.0 += 1,
            _ => out.push((1, last.map_or(0, |l| t - l))),
        }
        last = Some(t);
    }
    out
}

#[test]
fn linux_gso_sends_a_millisecond_at_once_where_a_per_segment_sender_sends_per_ack() {
    // 100 Mbit/s, 10 ms RTT, 200 kB of buffer (189 frames; the BDP is 119): 1,054-byte
    // frames leave the bottleneck every 84 µs, so ACKs of two segments come every
    // 169 µs. Between 2 and 3 s CUBIC grows from ~283 to ~303 segments with no loss,
    // the flight queued: RTT ≈ 290 frames / 11,860 per s = 24.5 ms. A GSO buffer is
    // 120 % × 290,000 B / 24.5 ms >> 10 = 13.9 kB, 13 segments (12-15 over the second).
    let path = || Path {
        rate_bps: 100_000_000,
        buffer_bytes: 200_000,
        ..fat_path(5 * MS)
    };
    let mut per_segment = cfg("linux-today");
    per_segment.gso = false;
    let mut plain = Run::new(&per_segment, None, path());
    plain.run_until(3000 * MS);
    let plain = bursts(&plain, 2000 * MS, 3000 * MS);
    let most = plain.iter().map(|b| b.0).max().unwrap();
    assert!(most <= 3, "per ACK: 2 segments, 3 when cwnd grows ({most})");

    let mut gso = Run::new(&cfg("linux-today"), None, path());
    gso.run_until(3000 * MS);
    let cwnd = gso.cwnd_at(3000 * MS);
    assert!((280..=310).contains(&cwnd), "cwnd {cwnd}");
    assert_eq!(gso.tx.stats().fast_recoveries, 1, "one, in slow start");
    let bursts = bursts(&gso, 2000 * MS, 3000 * MS);
    let sent: u64 = bursts.iter().map(|b| b.0).sum();
    let plain_sent: u64 = plain.iter().map(|b| b.0).sum();
    assert!(
        sent.abs_diff(plain_sent) * 100 < plain_sent,
        "the same rate, the link's: {sent} and {plain_sent} segments in the second"
    );
    for &(size, gap) in &bursts[1..] {
        // Either a whole buffer (room for it came before the millisecond was up), or
        // what a millisecond and one ACK's wait (169 µs) of ACKs let go.
        assert!(
            (12..=15).contains(&size) || (gap > MS && gap <= MS + 170_000),
            "a burst of {size} after {gap} ns"
        );
        assert!(size <= 15, "at most one buffer at once: {size}");
    }
    let mean = sent as f64 / bursts.len() as f64;
    assert!(mean >= 10.0, "mean burst {mean}");
}
