//! TCP/IPv4 frames as hosts put them on the wire and read them back: Ethernet II,
//! IPv4 (DSCP, ECN, DF, checksum), TCP with the options these models use (MSS, window
//! scale and SACK-permitted on a SYN; SACK blocks on an ACK), and a zero payload of
//! the segment's length — real headers, so a P4 program parses and marks them.

use crate::frame::ETHERTYPE_IPV4;

/// IP protocol number of TCP.
pub const IPPROTO_TCP: u8 = 6;
/// Ethernet header bytes.
pub const ETH_BYTES: usize = 14;
/// IPv4 header bytes (no options).
pub const IPV4_BYTES: usize = 20;
/// TCP header bytes without options.
pub const TCP_BYTES: usize = 20;
/// SACK blocks one segment carries at most (4 fit in the 40 option bytes).
pub const MAX_SACK_BLOCKS: usize = 4;

/// TCP flag bits.
pub mod flags {
    /// No more data from the sender.
    pub const FIN: u8 = 0x01;
    /// Synchronise sequence numbers.
    pub const SYN: u8 = 0x02;
    /// Push.
    pub const PSH: u8 = 0x08;
    /// The acknowledgment field is valid.
    pub const ACK: u8 = 0x10;
    /// ECN-Echo (RFC 3168).
    pub const ECE: u8 = 0x40;
    /// Congestion Window Reduced (RFC 3168).
    pub const CWR: u8 = 0x80;
}

/// ECN codepoints of the IP header's two low TOS bits (RFC 3168).
pub mod ecn {
    /// Not ECN-capable transport.
    pub const NOT_ECT: u8 = 0;
    /// ECN-capable transport (1).
    pub const ECT1: u8 = 1;
    /// ECN-capable transport (0), what TCP sends.
    pub const ECT0: u8 = 2;
    /// Congestion experienced.
    pub const CE: u8 = 3;
}

/// Addresses, ports and class of one direction of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoints {
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source IPv4 address.
    pub src_ip: [u8; 4],
    /// Destination IPv4 address.
    pub dst_ip: [u8; 4],
    /// Source TCP port.
    pub src_port: u16,
    /// Destination TCP port.
    pub dst_port: u16,
    /// DSCP (top six TOS bits).
    pub dscp: u8,
}

impl Endpoints {
    /// The other direction of the same connection.
    pub fn reversed(&self) -> Endpoints {
        Endpoints {
            src_mac: self.dst_mac,
            dst_mac: self.src_mac,
            src_ip: self.dst_ip,
            dst_ip: self.src_ip,
            src_port: self.dst_port,
            dst_port: self.src_port,
            dscp: self.dscp,
        }
    }
}

/// Options of a SYN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SynOptions {
    /// Maximum segment size, bytes.
    pub mss: u16,
    /// Window scale shift (RFC 7323).
    pub window_scale: u8,
    /// SACK permitted (RFC 2018).
    pub sack_permitted: bool,
}

/// One TCP segment as it travels: header fields in wire form and the payload length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Sequence number (wire).
    pub seq: u32,
    /// Acknowledgment number (wire; valid with `flags::ACK`).
    pub ack: u32,
    /// Flags (`flags::*`).
    pub flags: u8,
    /// Window field (before scaling).
    pub window: u16,
    /// SACK blocks `(left, right)` in wire numbers; the first `sack_count` are valid.
    pub sack: [(u32, u32); MAX_SACK_BLOCKS],
    /// SACK blocks carried.
    pub sack_count: u8,
    /// SYN options (on SYN segments).
    pub syn: Option<SynOptions>,
    /// ECN codepoint of the IP header (`ecn::*`).
    pub ecn: u8,
    /// Payload bytes.
    pub payload: u32,
}

impl Segment {
    /// A segment with no flags, options or payload.
    pub fn empty() -> Segment {
        Segment {
            seq: 0,
            ack: 0,
            flags: 0,
            window: 0,
            sack: [(0, 0); MAX_SACK_BLOCKS],
            sack_count: 0,
            syn: None,
            ecn: ecn::NOT_ECT,
            payload: 0,
        }
    }

    /// Whether `flag` is set.
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// The valid SACK blocks.
    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..usize::from(self.sack_count).min(MAX_SACK_BLOCKS)]
    }

    /// TCP option bytes this segment carries (padded to 4).
    pub fn option_bytes(&self) -> usize {
        let raw = if self.syn.is_some() {
            // MSS 4, window scale 3 + NOP, SACK-permitted 2 + 2 NOPs.
            12
        } else if self.sack_count > 0 {
            2 + 2 + 8 * usize::from(self.sack_count)
        } else {
            0
        };
        raw.div_ceil(4) * 4
    }

    /// Bytes of the whole frame (Ethernet header to payload end, no FCS).
    pub fn frame_bytes(&self) -> usize {
        ETH_BYTES + IPV4_BYTES + TCP_BYTES + self.option_bytes() + self.payload as usize
    }
}

/// Frame bytes a segment of `payload` bytes with `option_bytes` of options takes.
pub fn frame_bytes_for(payload: u32, option_bytes: usize) -> usize {
    ETH_BYTES + IPV4_BYTES + TCP_BYTES + option_bytes + payload as usize
}

fn fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

fn ones_sum(bytes: &[u8]) -> u32 {
    bytes
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)])))
        .sum()
}

/// Writes `seg` from `at` into `buf` (cleared first; reusing `buf` allocates nothing once
/// it has grown). The payload is zeros, so the TCP checksum covers headers only.
pub fn write_frame(buf: &mut Vec<u8>, at: &Endpoints, seg: &Segment) {
    let options = seg.option_bytes();
    let size = seg.frame_bytes();
    buf.clear();
    buf.resize(size, 0);
    buf[0..6].copy_from_slice(&at.dst_mac);
    buf[6..12].copy_from_slice(&at.src_mac);
    buf[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
    let ip_len = (size - ETH_BYTES) as u16;
    {
        let h = &mut buf[ETH_BYTES..ETH_BYTES + IPV4_BYTES];
        h[0] = 0x45;
        h[1] = (at.dscp << 2) | (seg.ecn & 3);
        h[2..4].copy_from_slice(&ip_len.to_be_bytes());
        h[6] = 0x40; // don't fragment
        h[8] = 64;
        h[9] = IPPROTO_TCP;
        h[12..16].copy_from_slice(&at.src_ip);
        h[16..20].copy_from_slice(&at.dst_ip);
        let checksum = !fold(ones_sum(h));
        h[10..12].copy_from_slice(&checksum.to_be_bytes());
    }
    let tcp = ETH_BYTES + IPV4_BYTES;
    let header_len = TCP_BYTES + options;
    {
        let t = &mut buf[tcp..tcp + header_len];
        t[0..2].copy_from_slice(&at.src_port.to_be_bytes());
        t[2..4].copy_from_slice(&at.dst_port.to_be_bytes());
        t[4..8].copy_from_slice(&seg.seq.to_be_bytes());
        t[8..12].copy_from_slice(&seg.ack.to_be_bytes());
        t[12] = ((header_len / 4) as u8) << 4;
        t[13] = seg.flags;
        t[14..16].copy_from_slice(&seg.window.to_be_bytes());
        let o = &mut t[TCP_BYTES..];
        if let Some(syn) = seg.syn {
            o[0..4].copy_from_slice(&[2, 4, (syn.mss >> 8) as u8, syn.mss as u8]);
            o[4..8].copy_from_slice(&[1, 3, 3, syn.window_scale]);
            o[8..12].copy_from_slice(&if syn.sack_permitted {
                [1, 1, 4, 2]
            } else {
                [1, 1, 1, 1]
            });
        } else if seg.sack_count > 0 {
            let n = usize::from(seg.sack_count);
            o[0..4].copy_from_slice(&[1, 1, 5, (2 + 8 * n) as u8]);
            for (i, (l, r)) in seg.sack_blocks().iter().enumerate() {
                o[4 + 8 * i..8 + 8 * i].copy_from_slice(&l.to_be_bytes());
                o[8 + 8 * i..12 + 8 * i].copy_from_slice(&r.to_be_bytes());
            }
        }
    }
    // Pseudo-header: addresses, protocol, TCP length; the zero payload adds nothing.
    let tcp_len = (size - tcp) as u32;
    let mut sum = ones_sum(&at.src_ip) + ones_sum(&at.dst_ip) + u32::from(IPPROTO_TCP) + tcp_len;
    sum += ones_sum(&buf[tcp..tcp + header_len]);
    let checksum = !fold(sum);
    buf[tcp + 16..tcp + 18].copy_from_slice(&checksum.to_be_bytes());
}

/// A TCP/IPv4 frame read back: who sent it to whom, and the segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Received {
    /// Source IPv4 address.
    pub src_ip: [u8; 4],
    /// Destination IPv4 address.
    pub dst_ip: [u8; 4],
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// The segment (its `ecn` as the frame arrived: a switch may have set CE).
    pub segment: Segment,
}

/// Reads an Ethernet II / IPv4 / TCP frame; None for anything else or anything cut short.
pub fn parse_frame(frame: &[u8]) -> Option<Received> {
    if frame.get(12..14)? != ETHERTYPE_IPV4.to_be_bytes() {
        return None;
    }
    let ip = frame.get(ETH_BYTES..)?;
    let ihl = usize::from(ip.first()? & 0x0f) * 4;
    if ip[0] >> 4 != 4 || ihl < IPV4_BYTES || *ip.get(9)? != IPPROTO_TCP {
        return None;
    }
    let total = usize::from(u16::from_be_bytes([*ip.get(2)?, *ip.get(3)?]));
    let t = ip.get(ihl..total.max(ihl))?;
    let data_offset = usize::from(t.get(12)? >> 4) * 4;
    if data_offset < TCP_BYTES || t.len() < data_offset {
        return None;
    }
    let be16 = |b: &[u8], at: usize| u16::from_be_bytes([b[at], b[at + 1]]);
    let be32 = |b: &[u8], at: usize| u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    let mut seg = Segment {
        seq: be32(t, 4),
        ack: be32(t, 8),
        flags: t[13],
        window: be16(t, 14),
        ecn: ip[1] & 3,
        payload: (t.len() - data_offset) as u32,
        ..Segment::empty()
    };
    let mut syn = SynOptions {
        mss: 536,
        window_scale: 0,
        sack_permitted: false,
    };
    let mut o = &t[TCP_BYTES..data_offset];
    while let Some(&kind) = o.first() {
        match kind {
            0 => break,
            1 => o = &o[1..],
            _ => {
                let len = usize::from(*o.get(1)?);
                if len < 2 || o.len() < len {
                    return None;
                }
                let body = &o[2..len];
                match (kind, len) {
                    (2, 4) => syn.mss = be16(body, 0),
                    (3, 3) => syn.window_scale = body[0].min(14),
                    (4, 2) => syn.sack_permitted = true,
                    (5, _) => {
                        for block in body.chunks_exact(8).take(MAX_SACK_BLOCKS) {
                            seg.sack[usize::from(seg.sack_count)] =
                                (be32(block, 0), be32(block, 4));
                            seg.sack_count += 1;
                        }
                    }
                    _ => {}
                }
                o = &o[len..];
            }
        }
    }
    if seg.has(flags::SYN) {
        seg.syn = Some(syn);
    }
    Some(Received {
        src_ip: ip[12..16].try_into().ok()?,
        dst_ip: ip[16..20].try_into().ok()?,
        src_port: be16(t, 0),
        dst_port: be16(t, 2),
        segment: seg,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ends() -> Endpoints {
        Endpoints {
            src_mac: [8, 0, 0, 0, 1, 1],
            dst_mac: [8, 0, 0, 0, 1, 2],
            src_ip: [10, 0, 1, 1],
            dst_ip: [10, 0, 1, 2],
            src_port: 40000,
            dst_port: 5201,
            dscp: 10,
        }
    }

    #[test]
    fn a_data_segment_is_a_real_tcp_ipv4_frame_with_valid_checksums() {
        let seg = Segment {
            seq: 1000,
            ack: 77,
            flags: flags::ACK | flags::CWR,
            window: 512,
            ecn: ecn::ECT0,
            payload: 1448,
            ..Segment::empty()
        };
        let mut buf = Vec::new();
        write_frame(&mut buf, &ends(), &seg);
        assert_eq!(buf.len(), 14 + 20 + 20 + 1448);
        assert_eq!(buf[15], (10 << 2) | 2, "DSCP and ECT(0) in the TOS byte");
        assert_eq!(buf[23], 6);
        assert_eq!(
            fold(ones_sum(&buf[14..34])),
            0xffff,
            "IPv4 checksum verifies"
        );
        let tcp_len = (buf.len() - 34) as u32;
        let pseudo = ones_sum(&[10, 0, 1, 1]) + ones_sum(&[10, 0, 1, 2]) + 6 + tcp_len;
        assert_eq!(
            fold(pseudo + ones_sum(&buf[34..])),
            0xffff,
            "TCP checksum verifies"
        );
        let back = parse_frame(&buf).unwrap();
        assert_eq!(back.segment, seg);
        assert_eq!((back.src_port, back.dst_port), (40000, 5201));
    }

    #[test]
    fn syn_options_and_sack_blocks_round_trip() {
        let syn = Segment {
            seq: 7,
            flags: flags::SYN | flags::ECE | flags::CWR,
            window: 65535,
            syn: Some(SynOptions {
                mss: 8948,
                window_scale: 9,
                sack_permitted: true,
            }),
            ..Segment::empty()
        };
        let mut buf = Vec::new();
        write_frame(&mut buf, &ends(), &syn);
        assert_eq!(buf.len(), 14 + 20 + 32);
        assert_eq!(parse_frame(&buf).unwrap().segment, syn);
        let mut ack = Segment {
            ack: 100,
            flags: flags::ACK,
            sack_count: 3,
            ..Segment::empty()
        };
        ack.sack[..3].copy_from_slice(&[(300, 400), (500, 600), (700, 800)]);
        write_frame(&mut buf, &ends(), &ack);
        assert_eq!(buf.len(), 14 + 20 + 20 + 28);
        assert_eq!(parse_frame(&buf).unwrap().segment, ack);
    }

    #[test]
    fn foreign_or_short_frames_are_none() {
        let mut buf = Vec::new();
        write_frame(&mut buf, &ends(), &Segment::empty());
        assert!(parse_frame(&buf[..40]).is_none());
        buf[23] = 17;
        assert!(parse_frame(&buf).is_none());
        assert!(parse_frame(&[0u8; 60]).is_none());
    }
}
