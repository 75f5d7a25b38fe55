//! BCN frames and the reaction point (RP) at a host (congestion.md §1.2–1.4,
//! p4src/README.md "BCN frame"): this module reads the frame, `reaction` acts on it,
//! `features` holds the parts of the 2006 RP that are off or on, `meter` measures the
//! sending rate a limiter may start from.

use crate::frame::ETHERTYPE_VLAN;

pub mod features;
pub mod meter;
mod reaction;

pub use features::{
    Drift, FeatureOptions, InitialRate, PositiveFrom, Quantisation, RpFeatures, Severe,
};
pub use reaction::{RateChange, ReactionPoint, RpConfig};

/// EtherType of BCN frames.
pub const ETHERTYPE_BCN: u16 = 0x88B5;
/// Bytes of the BCN header after the EtherType, before the sample.
pub const BCN_HEADER_BYTES: usize = 24;

/// The fields of a BCN frame the RP acts on (qoff, qdelta, fb in 64-byte pages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BcnFeedback {
    /// Congestion point id: switch id u32 ‖ port u16 ‖ queue u16.
    pub cpid: u64,
    /// Q − Qeq, pages.
    pub qoff_pages: i16,
    /// Q − Qold, pages.
    pub qdelta_pages: i16,
    /// −(Qoff + W·Qdelta), pages.
    pub fb_pages: i32,
    /// Q ≥ Qsc.
    pub severe: bool,
    /// Low 32 bits of the sampled frame's ingress time at the CP, µs.
    pub timestamp_us: u32,
    /// Where the sampled frame starts in the BCN frame, bytes.
    pub sample_offset: usize,
    /// Bytes of the sampled frame carried.
    pub sample_len: usize,
}

impl BcnFeedback {
    /// The sampled frame's bytes carried in `frame` (the BCN frame this was parsed from).
    pub fn sample<'a>(&self, frame: &'a [u8]) -> &'a [u8] {
        let end = (self.sample_offset + self.sample_len).min(frame.len());
        frame.get(self.sample_offset..end).unwrap_or(&[])
    }
}

fn be16(frame: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(frame.get(at..at + 2)?.try_into().ok()?))
}

/// Decodes a BCN frame (untagged or with one 802.1Q tag); None for anything else,
/// a version other than 0 included.
pub fn parse_bcn(frame: &[u8]) -> Option<BcnFeedback> {
    let mut at = 12;
    if be16(frame, at)? == ETHERTYPE_VLAN {
        at = 16;
    }
    if be16(frame, at)? != ETHERTYPE_BCN {
        return None;
    }
    let h = frame.get(at + 2..at + 2 + BCN_HEADER_BYTES)?;
    let ver_flags = h[0];
    if ver_flags >> 4 != 0 {
        return None;
    }
    let sample_offset = at + 2 + BCN_HEADER_BYTES;
    let carried = usize::from(u16::from_be_bytes([h[22], h[23]]));
    Some(BcnFeedback {
        cpid: u64::from_be_bytes(h[2..10].try_into().ok()?),
        qoff_pages: i16::from_be_bytes([h[10], h[11]]),
        qdelta_pages: i16::from_be_bytes([h[12], h[13]]),
        fb_pages: i32::from_be_bytes(h[14..18].try_into().ok()?),
        severe: ver_flags & 1 != 0,
        timestamp_us: u32::from_be_bytes(h[18..22].try_into().ok()?),
        sample_offset,
        sample_len: carried.min(frame.len() - sample_offset),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_p4_programs_bcn_frame() {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&ETHERTYPE_BCN.to_be_bytes());
        f.push(0x01); // version 0, severe
        f.push(0);
        f.extend_from_slice(&0x0000_0001_0005_0000u64.to_be_bytes());
        f.extend_from_slice(&(-3i16).to_be_bytes());
        f.extend_from_slice(&4i16.to_be_bytes());
        f.extend_from_slice(&(-5i32).to_be_bytes());
        // A timestamp whose low half reads as a small length: the sample length is the
        // field after it.
        f.extend_from_slice(&0x0004_0001u32.to_be_bytes());
        f.extend_from_slice(&3u16.to_be_bytes());
        f.extend_from_slice(&[9, 8, 7, 6, 5]);
        let b = parse_bcn(&f).unwrap();
        assert_eq!(
            (b.cpid, b.qoff_pages, b.qdelta_pages, b.fb_pages),
            (0x1_0005_0000, -3, 4, -5)
        );
        assert!(b.severe);
        assert_eq!(b.timestamp_us, 0x0004_0001);
        assert_eq!(b.sample(&f), &[9, 8, 7]);
        f[14] = 0x10; // version 1
        assert_eq!(parse_bcn(&f), None);
        assert_eq!(parse_bcn(&f[..20]), None);
    }
}
