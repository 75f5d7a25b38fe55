//! Links: their model, and what crossed each direction.

use bufferlab_hosts::bcn::ETHERTYPE_BCN;
use bufferlab_hosts::frame::{ETHERTYPE_IPV4, ETHERTYPE_RLT, RLT_BYTES};
use bufferlab_hosts::pause::ETHERTYPE_MAC_CONTROL;

/// Default bytes a link adds per frame: preamble and SFD 8, gap 12, FCS 4.
pub const ETHERNET_WIRE_OVERHEAD_BYTES: u32 = 24;

/// A link's model, the same both ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkModel {
    /// Rate, bit/s.
    pub rate_bps: u64,
    /// Propagation delay, ns.
    pub delay_ns: u64,
    /// Bytes the link adds to every frame (preamble, gap, FCS; 0 counts bare frames).
    pub wire_overhead_bytes: u32,
    /// Whether both ends' MACs stop sending when they receive 802.3x PAUSE or PFC.
    pub honour_pause: bool,
}

/// What kind of frame crossed, for the per-link counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// IPv4 (data), tagged with the RLT or not.
    Ipv4 = 0,
    /// BCN feedback.
    Bcn = 1,
    /// 802.3x PAUSE or PFC.
    MacControl = 2,
    /// Anything else.
    Other = 3,
}

/// Number of `FrameKind`s.
pub const FRAME_KINDS: usize = 4;

/// Classifies a frame by its EtherType (looking past an RLT).
pub fn frame_kind(frame: &[u8]) -> FrameKind {
    let be16 = |at: usize| {
        frame
            .get(at..at + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
    };
    let mut ethertype = be16(12);
    if ethertype == Some(ETHERTYPE_RLT) {
        ethertype = be16(12 + RLT_BYTES);
    }
    match ethertype {
        Some(ETHERTYPE_IPV4) => FrameKind::Ipv4,
        Some(ETHERTYPE_BCN) => FrameKind::Bcn,
        Some(ETHERTYPE_MAC_CONTROL) => FrameKind::MacControl,
        _ => FrameKind::Other,
    }
}

/// One direction of a link: who sends, who receives, what arrived.
#[derive(Debug, Clone)]
pub struct Direction {
    /// Name of the sending end (`h1`, `s1-p3`).
    pub from: String,
    /// Name of the receiving end.
    pub to: String,
    /// The link's model.
    pub model: LinkModel,
    /// Frames that arrived, by kind.
    pub frames: [u64; FRAME_KINDS],
    /// Bytes that arrived, by kind (frame bytes, no overhead).
    pub bytes: [u64; FRAME_KINDS],
}

impl Direction {
    /// A direction with nothing counted yet.
    pub fn new(from: String, to: String, model: LinkModel) -> Self {
        Direction {
            from,
            to,
            model,
            frames: [0; FRAME_KINDS],
            bytes: [0; FRAME_KINDS],
        }
    }

    /// Counts a frame that arrived.
    pub fn count(&mut self, frame: &[u8]) {
        let kind = frame_kind(frame) as usize;
        self.frames[kind] += 1;
        self.bytes[kind] += frame.len() as u64;
    }

    /// Bytes of every kind that arrived.
    pub fn total_bytes(&self) -> u64 {
        self.bytes.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_the_ethertype_past_an_rlt() {
        let mut f = vec![0u8; 40];
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        assert_eq!(frame_kind(&f), FrameKind::Ipv4);
        f[12..14].copy_from_slice(&[0x88, 0xb6]);
        f[22..24].copy_from_slice(&[0x08, 0x00]);
        assert_eq!(frame_kind(&f), FrameKind::Ipv4);
        f[12..14].copy_from_slice(&[0x88, 0xb5]);
        assert_eq!(frame_kind(&f), FrameKind::Bcn);
        f[12..14].copy_from_slice(&[0x88, 0x08]);
        assert_eq!(frame_kind(&f), FrameKind::MacControl);
        assert_eq!(frame_kind(&f[..5]), FrameKind::Other);
    }
}
