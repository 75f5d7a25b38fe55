//! The receiving end: answers the SYN, takes data in order or out of order, and ACKs
//! with SACK blocks (RFC 2018, D-SACK per RFC 2883), delayed (RFC 5681 4.2: at least
//! every second full segment — as Linux, once more than one MSS is unacknowledged —
//! a timer otherwise, at once for anything out of order),
//! echoing congestion as classic ECN (RFC 3168: ECE until CWR) or DCTCP (RFC 8257 3.2:
//! ECE mirrors CE, an immediate ACK when the CE state changes). The application reads
//! in-order data at once, so the window is the buffer less what waits out of order.

use std::collections::VecDeque;

use super::config::TcpConfig;
use super::ranges::RangeSet;
use super::segment::{ecn, flags, Segment, SynOptions, MAX_SACK_BLOCKS};
use super::seq::{unwrap, wrap};

/// How the receiver echoes CE marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EcnEcho {
    /// No ECN.
    Off,
    /// RFC 3168: ECE on every ACK from a CE mark until a CWR.
    Classic,
    /// RFC 8257: ECE says whether the ACKed segments were marked.
    Dctcp,
}

/// What a receiver counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Data segments received.
    pub segments: u64,
    /// Of those, with CE.
    pub ce_segments: u64,
    /// Of those, entirely duplicate.
    pub duplicate_segments: u64,
    /// Of those, out of order.
    pub out_of_order_segments: u64,
    /// ACKs sent (SYN-ACKs included).
    pub acks_sent: u64,
}

/// The receiver.
pub struct TcpReceiver {
    echo: EcnEcho,
    sack: bool,
    delayed_ack: bool,
    delayed_ack_ns: u64,
    quickack: u32,
    buffer: u64,
    scale: u8,
    mss: u32,
    isn: u32,
    peer_isn: u32,
    established: bool,
    ecn_ok: bool,
    peer_sack: bool,
    rcv_nxt: u64,
    ooo: RangeSet,
    recent: [(u64, u64); MAX_SACK_BLOCKS],
    recent_len: usize,
    dsack: Option<(u64, u64)>,
    unacked: u32,
    unacked_bytes: u64,
    ack_now: bool,
    delack_at: Option<u64>,
    queued: VecDeque<Segment>,
    ece_latched: bool,
    ce_state: bool,
    flow_bytes: Option<u64>,
    completed_ns: Option<u64>,
    stats: ReceiverStats,
}

impl TcpReceiver {
    /// A receiver with the connection's settings, expecting `flow_bytes` (None: for ever);
    /// `isn` is its own initial sequence number.
    pub fn new(cfg: &TcpConfig, flow_bytes: Option<u64>, isn: u32) -> Self {
        let echo = match (cfg.ecn, cfg.algorithm.needs_ecn()) {
            (false, _) => EcnEcho::Off,
            (true, false) => EcnEcho::Classic,
            (true, true) => EcnEcho::Dctcp,
        };
        TcpReceiver {
            echo,
            sack: cfg.sack,
            delayed_ack: cfg.delayed_ack,
            delayed_ack_ns: cfg.delayed_ack_ns,
            quickack: cfg.quickack_segments,
            buffer: cfg.receive_window_bytes,
            scale: cfg.window_scale(),
            mss: cfg.mss_bytes,
            isn,
            peer_isn: 0,
            established: false,
            ecn_ok: false,
            peer_sack: false,
            rcv_nxt: 0,
            ooo: RangeSet::default(),
            recent: [(0, 0); MAX_SACK_BLOCKS],
            recent_len: 0,
            dsack: None,
            unacked: 0,
            unacked_bytes: 0,
            ack_now: false,
            delack_at: None,
            queued: VecDeque::with_capacity(4),
            ece_latched: false,
            ce_state: false,
            flow_bytes,
            completed_ns: None,
            stats: ReceiverStats::default(),
        }
    }

    /// Bytes received in order (what the application has read).
    pub fn delivered_bytes(&self) -> u64 {
        self.rcv_nxt
    }

    /// When the last byte of a finite flow arrived, ns.
    pub fn completed_ns(&self) -> Option<u64> {
        self.completed_ns
    }

    /// Counters.
    pub fn stats(&self) -> &ReceiverStats {
        &self.stats
    }

    /// The window the receiver advertises, bytes.
    pub fn window_bytes(&self) -> u64 {
        self.buffer.saturating_sub(self.ooo.bytes())
    }

    /// When the delayed-ACK timer wants `poll_ack`, ns.
    pub fn next_timer_ns(&self) -> Option<u64> {
        self.delack_at
    }

    /// Whether an ACK is ready to go now.
    pub fn has_ack(&self, now_ns: u64) -> bool {
        !self.queued.is_empty() || self.ack_now || self.delack_at.is_some_and(|t| t <= now_ns)
    }

    /// Takes a segment from the sender.
    pub fn on_segment(&mut self, now_ns: u64, seg: &Segment) {
        if seg.has(flags::SYN) {
            self.peer_isn = seg.seq;
            self.established = true;
            self.ecn_ok = self.echo != EcnEcho::Off && seg.has(flags::ECE) && seg.has(flags::CWR);
            self.peer_sack = self.sack && seg.syn.is_some_and(|o| o.sack_permitted);
            let syn_ack = self.syn_ack();
            self.queued.push_back(syn_ack);
            return;
        }
        if !self.established || seg.payload == 0 {
            return;
        }
        self.stats.segments += 1;
        let ce = seg.ecn == ecn::CE;
        if ce {
            self.stats.ce_segments += 1;
        }
        if self.ecn_ok {
            match self.echo {
                EcnEcho::Classic => {
                    if seg.has(flags::CWR) {
                        self.ece_latched = false;
                    }
                    if ce {
                        self.ece_latched = true;
                    }
                }
                EcnEcho::Dctcp => {
                    if ce != self.ce_state {
                        if self.unacked > 0 {
                            // ACK what came before with the old state (RFC 8257 3.2).
                            let ack = self.build_ack();
                            self.queued.push_back(ack);
                        }
                        self.ce_state = ce;
                    }
                }
                EcnEcho::Off => {}
            }
        }
        let start = unwrap(self.peer_isn, seg.seq, self.rcv_nxt);
        let end = start + u64::from(seg.payload);
        if end <= self.rcv_nxt || self.ooo.covers(start, end) {
            self.stats.duplicate_segments += 1;
            self.dsack = Some((start, end));
            self.ack_now = true;
        } else if start <= self.rcv_nxt {
            let had_holes = !self.ooo.is_empty();
            self.rcv_nxt = end;
            if let Some((_, e)) = self.ooo.containing(self.rcv_nxt) {
                self.rcv_nxt = e;
            }
            self.ooo.remove_below(self.rcv_nxt);
            self.unacked += 1;
            self.unacked_bytes += u64::from(seg.payload);
            // Linux's rule for "every second full-sized segment": more than one MSS
            // of data not yet acknowledged.
            let enough = self.unacked_bytes > u64::from(self.mss);
            if had_holes || !self.delayed_ack || self.quickack > 0 || enough {
                self.ack_now = true;
            } else if self.delack_at.is_none() {
                self.delack_at = Some(now_ns + self.delayed_ack_ns);
            }
        } else {
            self.stats.out_of_order_segments += 1;
            self.ooo.insert(start, end, |_, _| {});
            if let Some(block) = self.ooo.containing(start) {
                self.remember(block);
            }
            self.ack_now = true;
        }
        if self.completed_ns.is_none() && self.flow_bytes.is_some_and(|b| self.rcv_nxt >= b) {
            self.completed_ns = Some(now_ns);
        }
    }

    fn remember(&mut self, block: (u64, u64)) {
        // The block that holds the newest segment goes first (RFC 2018 4).
        let mut kept = [(0, 0); MAX_SACK_BLOCKS];
        kept[0] = block;
        let mut n = 1;
        for &b in &self.recent[..self.recent_len] {
            let overlaps = b.0 <= block.1 && block.0 <= b.1;
            if !overlaps && n < MAX_SACK_BLOCKS {
                kept[n] = b;
                n += 1;
            }
        }
        self.recent = kept;
        self.recent_len = n;
    }

    /// The next ACK to send now, if one is due.
    pub fn poll_ack(&mut self, now_ns: u64) -> Option<Segment> {
        if let Some(seg) = self.queued.pop_front() {
            self.stats.acks_sent += 1;
            return Some(seg);
        }
        if !self.has_ack(now_ns) {
            return None;
        }
        let ack = self.build_ack();
        self.stats.acks_sent += 1;
        Some(ack)
    }

    fn syn_ack(&self) -> Segment {
        let mut seg = Segment::empty();
        seg.seq = self.isn;
        seg.ack = self.peer_isn.wrapping_add(1);
        seg.flags = flags::SYN | flags::ACK;
        if self.ecn_ok {
            seg.flags |= flags::ECE;
        }
        seg.window = self.buffer.min(65_535) as u16;
        seg.syn = Some(SynOptions {
            mss: self.mss.min(65_535) as u16,
            window_scale: self.scale,
            sack_permitted: self.peer_sack,
        });
        seg
    }

    fn build_ack(&mut self) -> Segment {
        let mut seg = Segment::empty();
        seg.seq = wrap(self.isn, 0);
        seg.ack = wrap(self.peer_isn, self.rcv_nxt);
        seg.flags = flags::ACK;
        let echo = match self.echo {
            EcnEcho::Classic => self.ece_latched,
            EcnEcho::Dctcp => self.ce_state,
            EcnEcho::Off => false,
        };
        if self.ecn_ok && echo {
            seg.flags |= flags::ECE;
        }
        if self.ecn_ok && self.echo == EcnEcho::Dctcp {
            seg.ecn = ecn::ECT0;
        }
        seg.window = (self.window_bytes() >> self.scale).min(65_535) as u16;
        if self.peer_sack {
            let mut n = 0;
            if let Some((l, r)) = self.dsack.take() {
                seg.sack[0] = (wrap(self.peer_isn, l), wrap(self.peer_isn, r));
                n = 1;
            }
            // Blocks still above rcv_nxt, as they stand now.
            let mut kept = [(0, 0); MAX_SACK_BLOCKS];
            let mut k = 0;
            for &(l, _) in &self.recent[..self.recent_len] {
                if let Some(b) = self.ooo.containing(l.max(self.rcv_nxt)) {
                    if !kept[..k].contains(&b) {
                        kept[k] = b;
                        k += 1;
                    }
                }
            }
            self.recent = kept;
            self.recent_len = k;
            for &(l, r) in &kept[..k] {
                if n == MAX_SACK_BLOCKS {
                    break;
                }
                seg.sack[n] = (wrap(self.peer_isn, l), wrap(self.peer_isn, r));
                n += 1;
            }
            seg.sack_count = n as u8;
        }
        self.unacked = 0;
        self.unacked_bytes = 0;
        self.ack_now = false;
        self.delack_at = None;
        self.quickack = self.quickack.saturating_sub(1);
        seg
    }
}
