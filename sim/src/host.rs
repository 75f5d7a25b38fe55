//! Hosts: their link (NIC), their sources with rate-limiter queues, and what they received.

use bufferlab_hosts::frame::FlowAddress;
use bufferlab_hosts::pause::{PauseTimer, PfcTimers};
use bufferlab_hosts::rlq::RateLimiterQueue;
use bufferlab_hosts::sink::FlowAccount;
use bufferlab_hosts::source::Source;
use bufferlab_hosts::wire::Serialiser;

use crate::event::NodeRef;
use crate::link::LinkModel;
use crate::reaction::Reaction;

/// The other end of a link as seen from one end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    /// The node at the other end.
    pub node: NodeRef,
    /// Its port (0 for a host).
    pub port: u16,
    /// The direction index towards it.
    pub link: u32,
}

/// A host's network interface: one link, paced at its rate, stopped by PAUSE/PFC.
pub struct Nic {
    /// Where frames go.
    pub peer: Peer,
    /// The link's model.
    pub model: LinkModel,
    /// Serialisation at the link rate.
    pub serialiser: Serialiser,
    /// The link is busy with a frame until then, ns.
    pub busy_until_ns: u64,
    /// 802.3x timer.
    pub pause: PauseTimer,
    /// PFC timers.
    pub pfc: PfcTimers,
}

/// What happens to a frame its source offers when the rate-limiter queue is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenFull {
    /// The frame is dropped and counted (seed 003's RLQ).
    Drop,
    /// The source stops until there is room (seed 001's "source stops, no drops").
    BackPressure,
}

/// A frame waiting in a rate-limiter queue (its bytes are built when it is sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueuedFrame {
    /// Sequence number in its flow.
    pub seq: u32,
    /// When the source offered it, ns.
    pub offered_ns: u64,
    /// Size, bytes.
    pub size: u32,
}

/// Counters of one source (frames and bytes, no wire overhead).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SourceCounters {
    /// Frames the source offered.
    pub offered_frames: u64,
    /// Their bytes.
    pub offered_bytes: u64,
    /// Frames the rate-limiter queue took.
    pub accepted_frames: u64,
    /// Their bytes.
    pub accepted_bytes: u64,
    /// Frames dropped because the queue was full.
    pub dropped_frames: u64,
    /// Their bytes.
    pub dropped_bytes: u64,
    /// Times the source was held by a full queue (back-pressure).
    pub held: u64,
    /// Frames that went onto the link.
    pub sent_frames: u64,
    /// Their bytes.
    pub sent_bytes: u64,
    /// Feedback frames that reached its reaction model.
    pub feedback_frames: u64,
    /// Of those, frames that changed its rate or tag.
    pub feedback_applied: u64,
}

/// A source on a host, with its rate-limiter queue and reaction model.
pub struct SimSource {
    /// Name, for results.
    pub name: String,
    /// The host it runs on.
    pub host: u32,
    /// Flow id in its frames' data header (= its index).
    pub flow: u16,
    /// Addresses and DSCP of its frames.
    pub address: FlowAddress,
    /// PFC priority that pauses it.
    pub priority: u8,
    /// When frames are offered.
    pub generator: Source,
    /// The next frame, `(start ns, size)`, offered at its Generate event.
    pub next: Option<(u64, u32)>,
    /// Host buffer and regulator.
    pub rlq: RateLimiterQueue<QueuedFrame>,
    /// Full queue: drop or hold the source.
    pub when_full: WhenFull,
    /// The frame a held source waits to enqueue.
    pub blocked: Option<QueuedFrame>,
    /// Reaction to feedback.
    pub reaction: Reaction,
    /// Time between a feedback frame's arrival and the reaction, ns.
    pub response_ns: u64,
    /// When the BCN reaction point's timer is scheduled, ns.
    pub rp_timer_ns: Option<u64>,
    /// RLT cpid its frames carry.
    pub tag: Option<u64>,
    /// Next sequence number.
    pub seq: u32,
    /// Counters.
    pub counters: SourceCounters,
}

impl SimSource {
    /// The rate the source is regulated to, bit/s (its link's rate when unlimited).
    pub fn regulated_rate_bps(&self, line_rate_bps: u64) -> f64 {
        match &self.reaction {
            Reaction::Bcn(rp) => rp.rate_bps(),
            _ => self.rlq.rate_bps().unwrap_or(line_rate_bps) as f64,
        }
    }
}

/// Counters of what a host received (frames).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostCounters {
    /// Data frames.
    pub data_frames: u64,
    /// BCN frames.
    pub bcn_frames: u64,
    /// PAUSE and PFC frames with a non-zero time.
    pub pause_frames: u64,
    /// PAUSE and PFC frames with time 0 (XON).
    pub xon_frames: u64,
    /// Anything else.
    pub other_frames: u64,
}

/// One data frame a capturing host received: what per-frame latency and loss need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CapturedFrame {
    /// Flow id (the sending source's index).
    pub flow: u16,
    /// The source's sequence number.
    pub seq: u32,
    /// When the source offered it, ns (the data header's timestamp).
    pub tx_ns: u64,
    /// When it arrived here, ns.
    pub rx_ns: u64,
}

impl CapturedFrame {
    /// Bytes of one record in [`CapturedFrame::write_le`]'s layout.
    pub const RECORD_BYTES: usize = 24;

    /// Writes the record little-endian into `out` (one record's bytes): flow u32, seq u32,
    /// tx_ns u64, rx_ns u64.
    pub fn write_le(&self, out: &mut [u8; Self::RECORD_BYTES]) {
        out[0..4].copy_from_slice(&u32::from(self.flow).to_le_bytes());
        out[4..8].copy_from_slice(&self.seq.to_le_bytes());
        out[8..16].copy_from_slice(&self.tx_ns.to_le_bytes());
        out[16..24].copy_from_slice(&self.rx_ns.to_le_bytes());
    }
}

/// A host: one NIC, sources, and per-flow receive accounting.
pub struct Host {
    /// Name.
    pub name: String,
    /// MAC address.
    pub mac: [u8; 6],
    /// IPv4 address.
    pub ip: [u8; 4],
    /// Its link, once connected.
    pub nic: Option<Nic>,
    /// Its sources (indexes), served round robin.
    pub sources: Vec<u32>,
    /// Where the round robin goes on.
    pub next_source: usize,
    /// A wake-up is scheduled for then, ns.
    pub wake_ns: Option<u64>,
    /// Receive accounting by flow id.
    pub flows: Vec<FlowAccount>,
    /// Every data frame received, in arrival order, once capture is on.
    pub capture: Option<Vec<CapturedFrame>>,
    /// Counters.
    pub counters: HostCounters,
}

impl Host {
    /// A host with no link yet.
    pub fn new(name: String, mac: [u8; 6], ip: [u8; 4]) -> Host {
        Host {
            name,
            mac,
            ip,
            nic: None,
            sources: Vec::new(),
            next_source: 0,
            wake_ns: None,
            flows: Vec::new(),
            capture: None,
            counters: HostCounters::default(),
        }
    }
}
