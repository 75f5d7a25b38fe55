//! bufferlab's data header and the frame-size convention shared by sender and receiver.
//!
//! Frame sizes follow RFC 2544: an Ethernet frame *including* its 4-byte FCS, so a
//! 64-byte frame is 60 bytes handed to Linux (which never sees the FCS). Rates are
//! line bit/s: every frame costs `frame_size + 20` bytes on the wire (8 preamble/SFD
//! + 12 inter-frame gap), i.e. the Linux frame plus 24 bytes.

/// Magic value opening every data header.
pub const MAGIC: u16 = 0xB1AB;
/// Bytes of the data header at the start of the UDP payload.
pub const HEADER_LEN: usize = 16;
/// Ethernet FCS bytes, counted in RFC 2544 frame sizes but absent from Linux frames.
pub const FCS_LEN: usize = 4;
/// Ethernet (14) + IPv4 (20) + UDP (8) header bytes in front of the UDP payload.
pub const L2_L4_HEADERS_LEN: usize = 14 + 20 + 8;
/// Preamble/SFD (8) + inter-frame gap (12) bytes a frame occupies on the wire beyond its FCS.
pub const WIRE_GAP_LEN: usize = 20;
/// Smallest frame (incl. FCS) the generator sends: Ethernet's minimum.
pub const MIN_FRAME: usize = 64;
/// Largest frame (incl. FCS) the generator sends: a 9000-byte jumbo frame.
pub const MAX_FRAME: usize = 9000;

/// UDP payload bytes that make an Ethernet frame of `frame_size` bytes incl. FCS.
pub fn udp_payload_len(frame_size: usize) -> usize {
    frame_size - FCS_LEN - L2_L4_HEADERS_LEN
}

/// Frame size incl. FCS of a frame whose UDP payload is `payload_len` bytes.
pub fn frame_size_of_payload(payload_len: usize) -> usize {
    payload_len + FCS_LEN + L2_L4_HEADERS_LEN
}

/// Bits a frame of `frame_size` bytes (incl. FCS) occupies on the wire, gap included.
pub fn wire_bits(frame_size: usize) -> f64 {
    8.0 * (frame_size + WIRE_GAP_LEN) as f64
}

/// Check a frame size is within the generator's range.
pub fn check_frame_size(frame_size: usize) -> Result<(), String> {
    if (MIN_FRAME..=MAX_FRAME).contains(&frame_size) {
        Ok(())
    } else {
        Err(format!(
            "frame size {frame_size} bytes is outside {MIN_FRAME}..={MAX_FRAME} (sizes include the 4-byte FCS)"
        ))
    }
}

/// The fields of a data header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataHeader {
    /// Flow identifier chosen by the sender.
    pub flow: u16,
    /// Per-flow sequence number, from 0.
    pub seq: u32,
    /// Sender's CLOCK_REALTIME at send, ns.
    pub tx_ns: u64,
}

impl DataHeader {
    /// Write the header big-endian into the first 16 bytes of `buf`.
    pub fn write(&self, buf: &mut [u8]) {
        buf[0..2].copy_from_slice(&MAGIC.to_be_bytes());
        buf[2..4].copy_from_slice(&self.flow.to_be_bytes());
        buf[4..8].copy_from_slice(&self.seq.to_be_bytes());
        buf[8..16].copy_from_slice(&self.tx_ns.to_be_bytes());
    }

    /// Parse a header from a UDP payload; `None` if it is too short or lacks the magic.
    pub fn parse(payload: &[u8]) -> Option<DataHeader> {
        if payload.len() < HEADER_LEN || payload[0..2] != MAGIC.to_be_bytes() {
            return None;
        }
        let mut seq = [0u8; 4];
        seq.copy_from_slice(&payload[4..8]);
        let mut tx = [0u8; 8];
        tx.copy_from_slice(&payload[8..16]);
        Some(DataHeader {
            flow: u16::from_be_bytes([payload[2], payload[3]]),
            seq: u32::from_be_bytes(seq),
            tx_ns: u64::from_be_bytes(tx),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_big_endian() {
        let h = DataHeader {
            flow: 0x0102,
            seq: 0x0304_0506,
            tx_ns: 0x0708_090a_0b0c_0d0e,
        };
        let mut buf = [0u8; 18];
        h.write(&mut buf);
        assert_eq!(
            &buf[..16],
            &[0xB1, 0xAB, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]
        );
        assert_eq!(DataHeader::parse(&buf), Some(h));
    }

    #[test]
    fn parse_rejects_short_or_foreign_payloads() {
        assert_eq!(DataHeader::parse(&[0xB1, 0xAB, 0, 0]), None);
        assert_eq!(DataHeader::parse(&[0u8; 16]), None);
    }

    #[test]
    fn sizes_follow_rfc2544_with_fcs() {
        assert_eq!(udp_payload_len(64), 18);
        assert_eq!(frame_size_of_payload(18), 64);
        assert_eq!(udp_payload_len(1518), 1472);
        assert_eq!(wire_bits(64), 672.0);
        assert!(check_frame_size(63).is_err());
        assert!(check_frame_size(9001).is_err());
        assert!(check_frame_size(9000).is_ok());
    }
}
