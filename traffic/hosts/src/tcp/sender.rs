//! The sending end of a connection: handshake, segments within the congestion and
//! receive windows, SACK-based loss recovery (RFC 6675) or NewReno's (RFC 6582), RACK-TLP
//! (RFC 8985), the retransmission timer (RFC 6298), ECN's reaction (RFC 3168, RFC 8257)
//! and pacing. Time comes in as `now_ns`; the sender never reads a clock.
//!
//! Use: `poll_transmit(now)` until it gives nothing, whenever the NIC can take a frame;
//! `on_segment(now, seg)` for every segment from the peer; `on_timer(now)` at
//! `next_timer_ns()`.

use super::cc::{AckSample, CongestionControl, Window};
use super::config::TcpConfig;
use super::pacing::{Pacer, Pacing};
use super::rack::Rack;
use super::rtt::RttEstimator;
use super::scoreboard::{Delivered, Scoreboard};
use super::segment::{ecn, flags, frame_bytes_for, Segment, SynOptions};
use super::seq::{unwrap, wrap};
use super::tso::{self, DeferCheck, Sizing};

/// Segments of cwnd a flight may leave unused and still count as filling it (Linux's
/// tcp_max_burst: the reordering degree, 3).
const MAX_BURST_SEGMENTS: u64 = 3;

/// Where the connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SenderState {
    /// Before its start time.
    Idle,
    /// SYN sent, waiting for the SYN-ACK.
    SynSent,
    /// Sending data.
    Established,
    /// A finite flow's last byte was acknowledged.
    Done,
}

/// Which recovery the sender is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryKind {
    /// Fast recovery after ACK-detected loss.
    Fast,
    /// After a retransmission timeout (Linux's Loss state: slow start from 1 segment).
    Timeout,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Recovery {
    kind: RecoveryKind,
    point: u64,
}

/// Proportional rate reduction's counters for one fast recovery (RFC 6937), bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Prr {
    /// cwnd when recovery began (RecoverFS's stand-in, as Linux's prior_cwnd).
    prior_cwnd: u64,
    /// Bytes the peer newly delivered (cumulatively or by SACK) since then.
    delivered: u64,
    /// Bytes sent since then.
    out: u64,
}

impl Prr {
    /// The window after an ACK that delivered `delivered` bytes, with `pipe` bytes in
    /// flight: Linux's tcp_cwnd_reduction. Above ssthresh the sender sends ssthresh /
    /// prior_cwnd of what was delivered; at or below it, what was delivered and one more
    /// segment when snd_una advanced without a new loss, up to ssthresh (the slow-start
    /// reduction bound). At least one segment goes out first: the fast retransmission.
    fn window(
        &mut self,
        delivered: u64,
        pipe: u64,
        w: &Window,
        una_advanced: bool,
        newly_lost: bool,
    ) -> Option<u64> {
        if delivered == 0 {
            return None;
        }
        self.delivered += delivered;
        let send = if pipe > w.ssthresh {
            // Linux counts whole segments and rounds the share up.
            let due = (u128::from(w.ssthresh) * u128::from(self.delivered))
                .div_ceil(u128::from(self.prior_cwnd.max(1)))
                .div_ceil(u128::from(w.mss))
                * u128::from(w.mss);
            u64::try_from(due)
                .unwrap_or(u64::MAX)
                .saturating_sub(self.out)
        } else {
            let mut send = self.delivered.saturating_sub(self.out).max(delivered);
            if una_advanced && !newly_lost {
                send += w.mss;
            }
            send.min(w.ssthresh - pipe)
        };
        let send = if self.out == 0 { send.max(w.mss) } else { send };
        Some((pipe + send).max(w.mss))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Probe {
    end: u64,
    retransmission: bool,
}

/// What a sender counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Data segments sent (first transmissions and retransmissions).
    pub segments_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Segments retransmitted (fast, timeout, probe).
    pub retransmitted_segments: u64,
    /// Retransmission timeouts (SYN's included).
    pub timeouts: u64,
    /// Fast recoveries entered.
    pub fast_recoveries: u64,
    /// Window reductions on ECN echoes.
    pub ecn_reductions: u64,
    /// Tail loss probes sent.
    pub tlp_probes: u64,
    /// Probes that repaired a loss (window reduced, RFC 8985 7.4).
    pub tlp_recoveries: u64,
    /// ACKs received.
    pub acks_received: u64,
    /// ACKs with ECN-Echo.
    pub ece_acks: u64,
    /// Largest congestion window, bytes.
    pub max_cwnd_bytes: u64,
}

/// The sender.
pub struct TcpSender {
    cfg: TcpConfig,
    state: SenderState,
    start_ns: u64,
    flow_bytes: Option<u64>,
    isn: u32,
    peer_isn: u32,
    syn_xmit_ns: u64,
    syn_due: bool,
    syn_retransmitted: bool,
    una: u64,
    nxt: u64,
    win: Window,
    cc: Box<dyn CongestionControl>,
    peer_window: u64,
    peer_scale: u8,
    sack_ok: bool,
    ecn_ok: bool,
    board: Scoreboard,
    rtt: RttEstimator,
    rack: Rack,
    recovery: Option<Recovery>,
    prr: Option<Prr>,
    timeout_una: Option<u64>,
    dupacks: u64,
    ecn_recover: u64,
    cwr_pending: bool,
    rto_at: Option<u64>,
    tlp_at: Option<u64>,
    reo_at: Option<u64>,
    probe: Option<Probe>,
    probe_due: bool,
    fast_retransmit_due: bool,
    pacer: Pacer,
    cwnd_limited: bool,
    /// Segments left of the GSO buffer being sent (`cfg.gso`).
    gso_left: u64,
    /// When the last data segment went, ns (Linux's tcp_wstamp_ns).
    last_sent_ns: u64,
    completed_ns: Option<u64>,
    stats: SenderStats,
}

impl TcpSender {
    /// A sender that opens its connection at `start_ns` and sends `flow_bytes` (None: for
    /// ever); `isn` is its initial sequence number (draw it from the flow's random stream).
    pub fn new(cfg: &TcpConfig, start_ns: u64, flow_bytes: Option<u64>, isn: u32) -> Self {
        let mss = u64::from(cfg.mss_bytes);
        TcpSender {
            state: SenderState::Idle,
            start_ns,
            flow_bytes,
            isn,
            peer_isn: 0,
            syn_xmit_ns: 0,
            syn_due: false,
            syn_retransmitted: false,
            una: 0,
            nxt: 0,
            win: Window {
                cwnd: u64::from(cfg.initial_window_segments) * mss,
                ssthresh: u64::MAX,
                mss,
                flight: 0,
            },
            cc: cfg.algorithm.build(),
            peer_window: mss,
            peer_scale: 0,
            sack_ok: false,
            ecn_ok: false,
            board: Scoreboard::default(),
            rtt: RttEstimator::new(
                cfg.rto_initial_ns,
                cfg.rto_min_ns,
                cfg.rto_max_ns,
                cfg.rto_formula,
            ),
            rack: Rack::default(),
            recovery: None,
            prr: None,
            timeout_una: None,
            dupacks: 0,
            ecn_recover: 0,
            cwr_pending: false,
            rto_at: None,
            tlp_at: None,
            reo_at: None,
            probe: None,
            probe_due: false,
            fast_retransmit_due: false,
            pacer: Pacer::default(),
            cwnd_limited: true,
            gso_left: 0,
            last_sent_ns: 0,
            completed_ns: None,
            stats: SenderStats::default(),
            cfg: cfg.clone(),
        }
    }

    /// Where the connection is.
    pub fn state(&self) -> SenderState {
        self.state
    }

    /// Congestion window, bytes.
    pub fn cwnd_bytes(&self) -> u64 {
        self.win.cwnd
    }

    /// Slow-start threshold, bytes (u64::MAX before the first reduction).
    pub fn ssthresh_bytes(&self) -> u64 {
        self.win.ssthresh
    }

    /// The sender's MSS, bytes (after the handshake: the smaller of both ends').
    pub fn mss_bytes(&self) -> u64 {
        self.win.mss
    }

    /// Bytes in flight as RFC 6675's pipe counts them.
    pub fn pipe_bytes(&self) -> u64 {
        let pipe = self.board.pipe();
        if self.sack_ok {
            pipe
        } else {
            // Without SACK each duplicate ACK stands for one segment that left the
            // network (Linux's SACK emulation for Reno).
            pipe.saturating_sub(self.dupacks * self.win.mss)
        }
    }

    /// The highest byte acknowledged cumulatively, plus one (stream offset).
    pub fn acked_bytes(&self) -> u64 {
        self.una
    }

    /// The next new byte to send (stream offset).
    pub fn next_byte(&self) -> u64 {
        self.nxt
    }

    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// Whether the sender is in recovery, and which.
    pub fn recovery(&self) -> Option<RecoveryKind> {
        self.recovery.map(|r| r.kind)
    }

    /// Whether ECN was negotiated.
    pub fn ecn_negotiated(&self) -> bool {
        self.ecn_ok
    }

    /// DCTCP's α (None for other algorithms).
    pub fn alpha(&self) -> Option<f64> {
        self.cc.alpha()
    }

    /// When a finite flow's last byte was acknowledged, ns.
    pub fn completed_ns(&self) -> Option<u64> {
        self.completed_ns
    }

    /// Counters.
    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }

    /// The scoreboard (for inspection).
    pub fn scoreboard(&self) -> &Scoreboard {
        &self.board
    }

    /// The earliest time a timer wants `on_timer`, or the start time before the start.
    pub fn next_timer_ns(&self) -> Option<u64> {
        if self.state == SenderState::Idle {
            return Some(self.start_ns);
        }
        [self.rto_at, self.tlp_at, self.reo_at]
            .into_iter()
            .flatten()
            .min()
    }

    /// When a segment could leave if the NIC were free: now if one is ready, the pacing
    /// release if pacing holds one back, None if the windows hold everything.
    pub fn ready_ns(&self, now_ns: u64) -> Option<u64> {
        match self.state {
            SenderState::Idle => Some(self.start_ns.max(now_ns)),
            SenderState::SynSent => self.syn_due.then_some(now_ns),
            SenderState::Done => None,
            SenderState::Established => {
                if !self.probe_due {
                    let next = self.what_next()?;
                    if !next.2 && self.defers_new_data(now_ns) {
                        return None;
                    }
                }
                Some(self.pacer.release_ns().max(now_ns))
            }
        }
    }

    fn unsent(&self) -> u64 {
        self.flow_bytes
            .map_or(u64::MAX, |b| b.saturating_sub(self.nxt))
    }

    fn can_send(&self) -> bool {
        let pipe = self.pipe_bytes();
        pipe == 0 || pipe + self.win.mss <= self.win.cwnd
    }

    /// The next data segment the windows allow: a retransmission or new data.
    fn what_next(&self) -> Option<(u64, u64, bool)> {
        if self.fast_retransmit_due {
            // RFC 6675 5 (4.3): the first retransmission goes whatever pipe says.
            if let Some((s, e)) = self.board.next_retransmission() {
                return Some((s, e, true));
            }
        }
        if !self.can_send() {
            return None;
        }
        if let Some((s, e)) = self.board.next_retransmission() {
            return Some((s, e, true));
        }
        self.new_data_range(false).map(|(s, e)| (s, e, false))
    }

    fn new_data_range(&self, ignore_window_space: bool) -> Option<(u64, u64)> {
        let unsent = self.unsent();
        if unsent == 0 {
            return None;
        }
        let window_end = self.una
            + self
                .peer_window
                .max(if ignore_window_space { self.win.mss } else { 0 });
        let room = window_end.saturating_sub(self.nxt);
        let len = self.win.mss.min(unsent).min(room);
        (len > 0).then_some((self.nxt, self.nxt + len))
    }

    /// The next segment to put on the wire now, if any.
    pub fn poll_transmit(&mut self, now_ns: u64) -> Option<Segment> {
        match self.state {
            SenderState::Idle => {
                if now_ns < self.start_ns {
                    return None;
                }
                self.state = SenderState::SynSent;
                self.syn_xmit_ns = now_ns;
                self.rto_at = Some(now_ns + self.rtt.rto_ns());
                Some(self.syn())
            }
            SenderState::SynSent => {
                if !self.syn_due {
                    return None;
                }
                self.syn_due = false;
                self.syn_xmit_ns = now_ns;
                Some(self.syn())
            }
            SenderState::Done => None,
            SenderState::Established => self.transmit_data(now_ns),
        }
    }

    fn syn(&self) -> Segment {
        let mut seg = Segment::empty();
        seg.seq = self.isn;
        seg.flags = flags::SYN;
        if self.cfg.ecn {
            seg.flags |= flags::ECE | flags::CWR;
        }
        seg.window = 65_535;
        seg.syn = Some(SynOptions {
            mss: self.cfg.mss_bytes.min(65_535) as u16,
            window_scale: 0,
            sack_permitted: self.cfg.sack,
        });
        seg
    }

    fn transmit_data(&mut self, now_ns: u64) -> Option<Segment> {
        if self.pacing_rate().is_some() && self.pacer.release_ns() > now_ns {
            return None;
        }
        let (start, end, retransmission, probe) = if self.probe_due {
            self.probe_due = false;
            match self.new_data_range(true) {
                Some((s, e)) => (s, e, false, true),
                None => {
                    let last = *self.board.segments().back()?;
                    (last.start, last.end, true, true)
                }
            }
        } else {
            match self.what_next() {
                Some(next) if !next.2 && self.defers_new_data(now_ns) => {
                    // Linux's TSO deferral: held by cwnd unless the receive window
                    // holds it tighter.
                    self.cwnd_limited = self.cwnd_room() <= self.window_room();
                    return None;
                }
                Some(next) => {
                    if !next.2 && self.cfg.gso {
                        if self.gso_left == 0 {
                            self.gso_left = self
                                .gso_buffer_segments()
                                .min(self.cwnd_room().min(self.window_room()) / self.win.mss);
                        }
                        self.gso_left = self.gso_left.saturating_sub(1);
                    }
                    (next.0, next.1, next.2, false)
                }
                None => {
                    // Held by cwnd (limited) or by the receive window / the application.
                    self.cwnd_limited = self.can_send_ignoring_cwnd();
                    return None;
                }
            }
        };
        if retransmission {
            self.fast_retransmit_due = false;
            self.board.retransmitted(start, now_ns, !probe);
            self.stats.retransmitted_segments += 1;
        } else {
            self.board.push(start, end, now_ns);
            self.nxt = end;
        }
        if probe {
            // A probe restarts the retransmission timer (RFC 8985 7.3).
            self.rto_at = Some(now_ns + self.rtt.rto_ns());
            self.stats.tlp_probes += 1;
            self.probe = Some(Probe {
                end,
                retransmission,
            });
        }
        self.cwnd_limited = true;
        self.last_sent_ns = now_ns;
        if let Some(prr) = self.prr.as_mut() {
            prr.out += end - start;
        }
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += end - start;
        let mut seg = Segment::empty();
        seg.seq = wrap(self.isn, start);
        seg.ack = wrap(self.peer_isn, 0);
        seg.flags = flags::ACK;
        if self.unsent() == 0 && !retransmission {
            seg.flags |= flags::PSH;
        }
        if self.cwr_pending && !retransmission {
            seg.flags |= flags::CWR;
            self.cwr_pending = false;
        }
        let dctcp = self.cc.alpha().is_some();
        if self.ecn_ok && (!retransmission || dctcp) {
            seg.ecn = ecn::ECT0;
        }
        seg.window = 65_535;
        seg.payload = (end - start) as u32;
        let rate = self.pacing_rate();
        self.pacer
            .sent(now_ns, frame_bytes_for(seg.payload, 0) as u64, rate);
        if self.rto_at.is_none() {
            self.rto_at = Some(now_ns + self.rtt.rto_ns());
        }
        self.arm_tlp(now_ns);
        self.stats.max_cwnd_bytes = self.stats.max_cwnd_bytes.max(self.win.cwnd);
        Some(seg)
    }

    /// Whether the flight, with what the sender may send now (Linux would have queued it
    /// at the NIC, counted in packets_out), fills cwnd to within `MAX_BURST_SEGMENTS`:
    /// Linux's tcp_is_cwnd_limited, the condition for cwnd to grow. A sender held by the
    /// receive window or the application does not fill it, and a window grown there would
    /// make a later loss cut nothing.
    fn cwnd_filled(&self) -> bool {
        let ready = self.window_room().min(self.unsent()).min(self.cwnd_room());
        self.pipe_bytes() + ready + MAX_BURST_SEGMENTS * self.win.mss >= self.win.cwnd
    }

    /// What cwnd leaves for new segments now, bytes.
    fn cwnd_room(&self) -> u64 {
        self.win.cwnd.saturating_sub(self.pipe_bytes())
    }

    /// What the receive window leaves for new data now, bytes.
    fn window_room(&self) -> u64 {
        (self.una + self.peer_window).saturating_sub(self.nxt)
    }

    /// Segments in one of Linux's GSO buffers now (`tso::autosize_segments`).
    fn gso_buffer_segments(&self) -> u64 {
        let srtt = self.rtt.srtt_ns().unwrap_or(self.cfg.rto_initial_ns);
        tso::autosize_segments(&Sizing {
            cwnd: self.win.cwnd,
            ssthresh: self.win.ssthresh,
            outstanding: self.nxt - self.una,
            srtt_ns: srtt,
            min_rtt_ns: self.rtt.min_rtt_ns().unwrap_or(srtt),
            mss: self.win.mss,
        })
    }

    /// Whether Linux's TSO deferral holds the next new segment back at `now_ns`: with
    /// `cfg.gso`, unpaced, outside recovery, between GSO buffers, and not the flow's
    /// last data (Linux sends the buffer that carries the FIN at once).
    fn defers_new_data(&self, now_ns: u64) -> bool {
        if !self.cfg.gso
            || self.gso_left > 0
            || self.cfg.pacing != Pacing::Off
            || self.recovery.is_some()
        {
            return false;
        }
        let Some(srtt_ns) = self.rtt.srtt_ns() else {
            return false;
        };
        let room = self.cwnd_room().min(self.window_room());
        if self.unsent() <= room {
            return false;
        }
        tso::should_defer(&DeferCheck {
            now_ns,
            last_sent_ns: self.last_sent_ns,
            oldest_sent_ns: self.board.segments().front().map(|s| s.xmit_ns),
            room,
            cwnd: self.win.cwnd,
            peer_window: self.peer_window,
            buffer: self.gso_buffer_segments() * self.win.mss,
            srtt_ns,
        })
    }

    fn can_send_ignoring_cwnd(&self) -> bool {
        !self.can_send()
            && (self.board.next_retransmission().is_some() || self.new_data_range(false).is_some())
    }

    fn pacing_rate(&self) -> Option<f64> {
        match self.cfg.pacing {
            Pacing::Off => None,
            Pacing::Rate(bps) => Some(bps as f64),
            Pacing::Linux { ss_ratio, ca_ratio } => {
                let srtt = self.rtt.srtt_ns()?.max(1) as f64;
                let ratio = if self.win.cwnd < self.win.ssthresh / 2 {
                    ss_ratio
                } else {
                    ca_ratio
                };
                Some(ratio * self.win.cwnd as f64 * 8e9 / srtt)
            }
        }
    }

    fn arm_tlp(&mut self, now_ns: u64) {
        self.tlp_at = None;
        if !self.cfg.rack_tlp
            || self.recovery.is_some()
            || self.probe.is_some()
            || self.una == self.nxt
        {
            return;
        }
        let Some(srtt) = self.rtt.srtt_ns() else {
            return;
        };
        let mut pto = 2 * srtt;
        if self.nxt - self.una <= self.win.mss {
            pto += self.cfg.tlp_max_ack_delay_ns;
        }
        // As Linux does: a PTO later than the pending RTO fires at the RTO's time, as a
        // probe rather than a timeout.
        let at = self
            .rto_at
            .map_or(now_ns + pto, |rto| rto.min(now_ns + pto));
        self.tlp_at = Some(at);
    }

    /// Runs the timers that are due at `now_ns` (a call at any other time does nothing).
    pub fn on_timer(&mut self, now_ns: u64) {
        if self.state == SenderState::SynSent && self.rto_at.is_some_and(|t| t <= now_ns) {
            self.stats.timeouts += 1;
            self.rtt.back_off();
            self.syn_due = true;
            self.syn_retransmitted = true;
            self.rto_at = Some(now_ns + self.rtt.rto_ns());
            return;
        }
        if self.state != SenderState::Established {
            return;
        }
        if self.reo_at.is_some_and(|t| t <= now_ns) {
            self.reo_at = None;
            self.detect_loss(now_ns);
            self.maybe_enter_recovery(now_ns);
        }
        if self.tlp_at.is_some_and(|t| t <= now_ns) {
            self.tlp_at = None;
            self.probe_due = true;
            // The probe goes instead of a timeout due at the same time.
            if self.rto_at.is_some_and(|t| t <= now_ns) {
                self.rto_at = Some(now_ns + self.rtt.rto_ns());
            }
        }
        if self.rto_at.is_some_and(|t| t <= now_ns) {
            self.on_rto(now_ns);
        }
    }

    fn on_rto(&mut self, now_ns: u64) {
        self.stats.timeouts += 1;
        let repeat = self
            .recovery
            .is_some_and(|r| r.kind == RecoveryKind::Timeout)
            && self.timeout_una == Some(self.una);
        if !repeat {
            self.win.flight = self.pipe_bytes();
            self.win.ssthresh = self.cc.on_rto(&self.win, now_ns);
        }
        self.timeout_una = Some(self.una);
        self.prr = None;
        self.win.cwnd = self.win.mss;
        self.board.mark_all_lost();
        self.dupacks = 0;
        self.recovery = Some(Recovery {
            kind: RecoveryKind::Timeout,
            point: self.nxt,
        });
        self.ecn_recover = self.nxt;
        self.rtt.back_off();
        self.rto_at = Some(now_ns + self.rtt.rto_ns());
        self.tlp_at = None;
        self.reo_at = None;
        self.probe = None;
        self.probe_due = false;
        self.fast_retransmit_due = false;
    }

    /// Takes a segment from the peer (SYN-ACK or ACK).
    pub fn on_segment(&mut self, now_ns: u64, seg: &Segment) {
        match self.state {
            SenderState::SynSent => self.on_syn_ack(now_ns, seg),
            SenderState::Established => self.on_ack(now_ns, seg),
            _ => {}
        }
    }

    fn on_syn_ack(&mut self, now_ns: u64, seg: &Segment) {
        if !seg.has(flags::SYN) || !seg.has(flags::ACK) || seg.ack != self.isn.wrapping_add(1) {
            return;
        }
        self.peer_isn = seg.seq;
        if let Some(opts) = seg.syn {
            self.win.mss = self.win.mss.min(u64::from(opts.mss).max(64));
            self.peer_scale = opts.window_scale;
            self.sack_ok = self.cfg.sack && opts.sack_permitted;
        }
        self.ecn_ok = self.cfg.ecn && seg.has(flags::ECE) && !seg.has(flags::CWR);
        if !self.syn_retransmitted {
            self.rtt.sample(now_ns - self.syn_xmit_ns);
        }
        let iw = if self.syn_retransmitted {
            1
        } else {
            u64::from(self.cfg.initial_window_segments)
        };
        self.win.cwnd = iw * self.win.mss;
        // A SYN-ACK's window is never scaled (RFC 7323 2.2).
        self.peer_window = u64::from(seg.window);
        self.rto_at = None;
        self.state = SenderState::Established;
        self.stats.max_cwnd_bytes = self.win.cwnd;
        if self.flow_bytes == Some(0) {
            self.finish(now_ns);
        }
    }

    fn on_ack(&mut self, now_ns: u64, seg: &Segment) {
        if !seg.has(flags::ACK) {
            return;
        }
        self.stats.acks_received += 1;
        let ack = unwrap(self.isn, seg.ack, self.una);
        if ack > self.nxt || ack < self.una {
            return;
        }
        let before = self.una;
        let filled_before = self.cwnd_filled();
        self.peer_window = u64::from(seg.window) << self.peer_scale;
        let flight_before = self.pipe_bytes();
        let min_rtt = self.rtt.min_rtt_ns();
        // SACK blocks; a first block below the ACK or inside the second is a D-SACK.
        let mut newly_sacked = 0;
        let mut dsack_of_probe = false;
        let mut sack_sample: Option<Delivered> = None;
        if self.sack_ok {
            let blocks = seg.sack_blocks();
            for (i, &(l, r)) in blocks.iter().enumerate() {
                let (l, r) = (unwrap(self.isn, l, self.una), unwrap(self.isn, r, self.una));
                let inside_next = blocks.get(1).is_some_and(|&(l2, r2)| {
                    let (l2, r2) = (
                        unwrap(self.isn, l2, self.una),
                        unwrap(self.isn, r2, self.una),
                    );
                    l >= l2 && r <= r2
                });
                if i == 0 && (r <= ack || inside_next) {
                    dsack_of_probe |= self.probe.is_some_and(|p| p.retransmission && r >= p.end);
                    continue;
                }
                let rack = &mut self.rack;
                newly_sacked += self.board.sack(l, r, |d| {
                    rack.delivered(d, now_ns, min_rtt);
                    if !d.retransmitted && sack_sample.is_none_or(|s| d.xmit_ns > s.xmit_ns) {
                        sack_sample = Some(d);
                    }
                });
            }
        }
        let sacked_before_ack = self.board.sacked_bytes();
        let out = if ack > self.una {
            self.board.ack(ack)
        } else {
            Default::default()
        };
        // What this ACK newly delivered, as Linux counts it for PRR: SACKed now, or
        // acknowledged cumulatively without having been SACKed before; without SACK a
        // duplicate ACK stands for one segment.
        let delivered = if self.sack_ok {
            let sacked_earlier = sacked_before_ack - self.board.sacked_bytes();
            newly_sacked + out.acked_bytes - sacked_earlier.min(out.acked_bytes)
        } else if ack == self.una && seg.payload == 0 && self.una < self.nxt {
            self.win.mss
        } else {
            out.acked_bytes
        };
        if let Some(d) = out.newest {
            self.rack.delivered(d, now_ns, min_rtt);
        }
        let rtt_ns = out
            .newest_clean
            .or(sack_sample)
            .map(|d| now_ns.saturating_sub(d.xmit_ns));
        if let Some(rtt) = rtt_ns {
            self.rtt.sample(rtt);
        }
        let ece = self.ecn_ok && seg.has(flags::ECE);
        if ece {
            self.stats.ece_acks += 1;
        }
        let sample = AckSample {
            now_ns,
            acked_bytes: out.acked_bytes,
            srtt_ns: self.rtt.srtt_ns(),
            rtt_ns,
            ece,
            ack,
            snd_nxt: self.nxt,
            paced: self.cfg.pacing != Pacing::Off,
        };
        self.cc.observe(&sample);
        if rtt_ns.is_some() {
            self.cc.acked(&mut self.win, &sample);
        }
        if ack > self.una {
            self.una = ack;
            if !self.sack_ok && self.recovery.is_some_and(|r| r.kind == RecoveryKind::Fast) {
                self.dupacks = self.dupacks.saturating_sub(out.acked_bytes / self.win.mss);
            } else {
                self.dupacks = 0;
            }
            self.rto_at = (self.una < self.nxt).then(|| now_ns + self.rtt.rto_ns());
            if let Some(p) = self.probe {
                if ack >= p.end {
                    self.probe = None;
                    if p.retransmission && !dsack_of_probe && self.recovery.is_none() {
                        // The probe repaired a loss: respond as to a loss (RFC 8985 7.4).
                        self.stats.tlp_recoveries += 1;
                        self.reduce_for_loss(now_ns, flight_before);
                    }
                }
            }
        } else if seg.payload == 0 && self.una < self.nxt && newly_sacked == 0 && !self.sack_ok {
            self.dupacks += 1;
        }
        let mut reduced = false;
        if ece && ack > self.ecn_recover && self.recovery.is_none() {
            self.win.flight = flight_before;
            self.win.ssthresh = self.cc.on_ecn(&self.win, now_ns);
            self.win.cwnd = self.win.ssthresh;
            self.ecn_recover = self.nxt;
            self.cwr_pending = true;
            self.stats.ecn_reductions += 1;
            reduced = true;
        }
        // Loss detection.
        let lost_before = self.board.lost_bytes();
        if self.sack_ok {
            self.detect_loss(now_ns);
        } else {
            let fast = self.recovery.is_some_and(|r| r.kind == RecoveryKind::Fast);
            if !fast && self.dupacks >= u64::from(self.cfg.dupthresh) {
                self.board.mark_head_lost();
            }
            if fast && ack > before && self.recovery.is_some_and(|r| ack < r.point) {
                // RFC 6582: a partial ACK means the next hole is lost too.
                self.board.mark_head_lost();
            }
        }
        if let Some(r) = self.recovery {
            if ack >= r.point && ack > before {
                self.recovery = None;
                if r.kind == RecoveryKind::Fast {
                    // Linux's tcp_end_cwnd_reduction: PRR ends at ssthresh.
                    self.win.cwnd = if self.prr.take().is_some() {
                        self.win.ssthresh
                    } else {
                        self.win.cwnd.min(self.win.ssthresh)
                    }
                    .max(self.win.mss);
                }
                self.dupacks = 0;
            }
        }
        if !reduced && self.maybe_enter_recovery_with(now_ns, flight_before) {
            reduced = true;
        }
        let newly_lost = self.board.lost_bytes() > lost_before;
        self.proportional_rate_reduction(delivered, ack > before, newly_lost);
        let growing = self
            .recovery
            .is_none_or(|r| r.kind == RecoveryKind::Timeout);
        if out.acked_bytes > 0 && !reduced && growing && self.cwnd_limited && filled_before {
            self.win.flight = self.pipe_bytes();
            self.cc.on_ack(&mut self.win, &sample);
        }
        self.stats.max_cwnd_bytes = self.stats.max_cwnd_bytes.max(self.win.cwnd);
        if self.flow_bytes.is_some_and(|b| self.una >= b) {
            self.finish(now_ns);
            return;
        }
        if ack > before {
            self.arm_tlp(now_ns);
        }
    }

    fn finish(&mut self, now_ns: u64) {
        self.state = SenderState::Done;
        self.completed_ns = Some(now_ns);
        self.rto_at = None;
        self.tlp_at = None;
        self.reo_at = None;
    }

    fn detect_loss(&mut self, now_ns: u64) {
        if !self.sack_ok {
            return;
        }
        if self.cfg.rack_tlp {
            if !self.rack.active {
                return;
            }
            let srtt = self.rtt.srtt_ns().unwrap_or(0);
            let min_rtt = self.rtt.min_rtt_ns().unwrap_or(srtt);
            let sacked_segments = self.board.sacked_bytes() / self.win.mss.max(1);
            let reo = self.rack.reo_wnd_ns(
                self.recovery.is_some(),
                sacked_segments,
                u64::from(self.cfg.dupthresh),
                min_rtt,
                srtt,
            );
            let (_, wait) = self.board.mark_lost_by_time(
                self.rack.xmit_ns,
                self.rack.end,
                self.rack.rtt_ns + reo,
                now_ns,
            );
            self.reo_at = wait.map(|w| now_ns + w);
        } else {
            self.board
                .mark_lost_by_sack(u64::from(self.cfg.dupthresh), self.win.mss);
        }
    }

    fn maybe_enter_recovery(&mut self, now_ns: u64) {
        let flight = self.pipe_bytes();
        if self.maybe_enter_recovery_with(now_ns, flight) {
            // Linux's RACK reordering timer counts one segment delivered when it starts a
            // recovery (tcp_rack_reo_timeout), so PRR lets the retransmission go.
            self.proportional_rate_reduction(self.win.mss, false, false);
        }
    }

    /// PRR's window for an ACK (or timer) that delivered `delivered` bytes, in a fast
    /// recovery that runs PRR; nothing otherwise.
    fn proportional_rate_reduction(
        &mut self,
        delivered: u64,
        una_advanced: bool,
        newly_lost: bool,
    ) {
        let pipe = self.pipe_bytes();
        if let Some(prr) = self.prr.as_mut() {
            if let Some(cwnd) = prr.window(delivered, pipe, &self.win, una_advanced, newly_lost) {
                self.win.cwnd = cwnd;
            }
        }
    }

    fn maybe_enter_recovery_with(&mut self, now_ns: u64, flight: u64) -> bool {
        if self.recovery.is_some() || self.board.lost_bytes() == 0 {
            return false;
        }
        if self.cfg.prr {
            // PRR brings cwnd down from here, ACK by ACK; ssthresh is set now.
            let prior_cwnd = self.win.cwnd;
            self.reduce_for_loss(now_ns, flight);
            self.win.cwnd = prior_cwnd;
            self.prr = Some(Prr {
                prior_cwnd,
                delivered: 0,
                out: 0,
            });
        } else {
            self.reduce_for_loss(now_ns, flight);
        }
        self.recovery = Some(Recovery {
            kind: RecoveryKind::Fast,
            point: self.nxt,
        });
        self.stats.fast_recoveries += 1;
        self.fast_retransmit_due = true;
        self.tlp_at = None;
        true
    }

    fn reduce_for_loss(&mut self, now_ns: u64, flight: u64) {
        self.win.flight = flight;
        self.win.ssthresh = self.cc.on_loss(&self.win, now_ns);
        self.win.cwnd = self.win.ssthresh;
        self.ecn_recover = self.nxt;
        if self.ecn_ok {
            self.cwr_pending = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn window(ssthresh_segments: u64) -> Window {
        Window {
            cwnd: 0,
            ssthresh: ssthresh_segments * MSS,
            mss: MSS,
            flight: 0,
        }
    }

    #[test]
    fn prr_sends_ssthresh_over_prior_cwnd_of_each_delivery_above_ssthresh() {
        // prior_cwnd 20, ssthresh 14 (CUBIC's 0.7), one segment lost: pipe 19. Each ACK
        // SACKs one segment; the sender then sends what cwnd = pipe + sndcnt allows.
        // sndcnt = ceil(14 k / 20) − sent so far: 1, 1, 1, 0, 1, 1, 0, 1, 1, 0; pipe
        // stays above 14 throughout.
        let mut prr = Prr {
            prior_cwnd: 20 * MSS,
            delivered: 0,
            out: 0,
        };
        let w = window(14);
        let mut pipe = 19 * MSS;
        let mut sends = Vec::new();
        for _ in 0..10 {
            pipe -= MSS;
            let cwnd = prr.window(MSS, pipe, &w, false, false).unwrap();
            let send = (cwnd - pipe) / MSS;
            prr.out += send * MSS;
            pipe += send * MSS;
            sends.push(send);
        }
        assert_eq!(sends, [1, 1, 1, 0, 1, 1, 0, 1, 1, 0]);
        assert_eq!(pipe, 16 * MSS);
    }

    #[test]
    fn prr_below_ssthresh_sends_what_was_delivered_and_one_more_when_una_advances() {
        // ssthresh 14, pipe 10 (more was lost), 5 segments sent and 4 delivered so far;
        // an ACK delivers 2 more. Conservation sends max(6 − 5, 2) = 2; with snd_una
        // advanced and no new loss one more (3); never past ssthresh.
        let w = window(14);
        let state = Prr {
            prior_cwnd: 20 * MSS,
            delivered: 4 * MSS,
            out: 5 * MSS,
        };
        let mut advanced = state;
        assert_eq!(
            advanced.window(2 * MSS, 10 * MSS, &w, true, false),
            Some(13 * MSS)
        );
        let mut held = state;
        assert_eq!(
            held.window(2 * MSS, 10 * MSS, &w, false, false),
            Some(12 * MSS)
        );
        let mut lossy = state;
        assert_eq!(
            lossy.window(2 * MSS, 10 * MSS, &w, true, true),
            Some(12 * MSS)
        );
        // The bound: pipe 13 leaves room for one segment whatever was delivered.
        let mut bound = state;
        assert_eq!(
            bound.window(2 * MSS, 13 * MSS, &w, true, false),
            Some(14 * MSS)
        );
        // An ACK that delivers nothing leaves cwnd alone.
        let mut nothing = state;
        assert_eq!(nothing.window(0, 10 * MSS, &w, true, false), None);
        assert_eq!(nothing, state);
    }

    #[test]
    fn prr_lets_the_fast_retransmission_go_first() {
        // Entering recovery far above ssthresh: ceil(14 × 1 / 100) = 1, and even a
        // delivery that earns nothing yet sends one segment while none has gone out.
        let w = window(14);
        let mut prr = Prr {
            prior_cwnd: 1000 * MSS,
            delivered: 0,
            out: 0,
        };
        assert_eq!(
            prr.window(MSS, 500 * MSS, &w, false, false),
            Some(501 * MSS)
        );
    }
}
