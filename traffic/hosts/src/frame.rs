//! bufferlab data frames as a host builds and reads them: Ethernet (optionally
//! with the rate-limiter tag) / IPv4 / UDP / data header / zero payload.
//!
//! A frame keeps the size its source asked for: when the RLT is inserted, the
//! payload gives up its 10 bytes (a frame too small to do so grows to the
//! smallest that holds every header).

use crate::header::{DataHeader, HEADER_LEN};

/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of an 802.1Q tag.
pub const ETHERTYPE_VLAN: u16 = 0x8100;
/// EtherType of the rate-limiter tag.
pub const ETHERTYPE_RLT: u16 = 0x88B6;
/// Bytes the RLT adds after the source MAC: EtherType u16 + cpid u64.
pub const RLT_BYTES: usize = 10;
/// UDP port data frames are sent to and from unless a source says otherwise.
pub const DATA_UDP_PORT: u16 = 5000;
const ETH: usize = 14;
const IPV4: usize = 20;
const UDP: usize = 8;

/// The addresses and class of a flow's frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowAddress {
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source IPv4 address.
    pub src_ip: [u8; 4],
    /// Destination IPv4 address.
    pub dst_ip: [u8; 4],
    /// DSCP (the top six bits of the TOS byte).
    pub dscp: u8,
    /// UDP source port.
    pub udp_src: u16,
    /// UDP destination port.
    pub udp_dst: u16,
}

/// Smallest data frame with `rlt` (bytes, no FCS).
pub fn min_data_frame_bytes(rlt: bool) -> usize {
    ETH + IPV4 + UDP + HEADER_LEN + if rlt { RLT_BYTES } else { 0 }
}

fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Writes a data frame of `size` bytes into `buf` (cleared first; reusing `buf`
/// allocates nothing once it has grown), tagged with RLT(`rlt`) if given.
pub fn write_data_frame(
    buf: &mut Vec<u8>,
    flow: &FlowAddress,
    size: usize,
    rlt: Option<u64>,
    header: &DataHeader,
) {
    let size = size.max(min_data_frame_bytes(rlt.is_some()));
    buf.clear();
    buf.resize(size, 0);
    buf[0..6].copy_from_slice(&flow.dst_mac);
    buf[6..12].copy_from_slice(&flow.src_mac);
    let mut at = 12;
    if let Some(cpid) = rlt {
        buf[12..14].copy_from_slice(&ETHERTYPE_RLT.to_be_bytes());
        buf[14..22].copy_from_slice(&cpid.to_be_bytes());
        at += RLT_BYTES;
    }
    buf[at..at + 2].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
    let ip = at + 2;
    let ip_len = (size - ip) as u16;
    let h = &mut buf[ip..ip + IPV4];
    h[0] = 0x45;
    h[1] = flow.dscp << 2;
    h[2..4].copy_from_slice(&ip_len.to_be_bytes());
    h[8] = 64;
    h[9] = 17;
    h[12..16].copy_from_slice(&flow.src_ip);
    h[16..20].copy_from_slice(&flow.dst_ip);
    let checksum = ipv4_checksum(h);
    h[10..12].copy_from_slice(&checksum.to_be_bytes());
    let udp = ip + IPV4;
    let u = &mut buf[udp..udp + UDP];
    u[0..2].copy_from_slice(&flow.udp_src.to_be_bytes());
    u[2..4].copy_from_slice(&flow.udp_dst.to_be_bytes());
    u[4..6].copy_from_slice(&(ip_len - IPV4 as u16).to_be_bytes());
    header.write(&mut buf[udp + UDP..udp + UDP + HEADER_LEN]);
}

/// A received data frame: its header and the RLT it carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataFrame {
    /// The data header.
    pub header: DataHeader,
    /// The RLT's cpid, if tagged.
    pub rlt: Option<u64>,
    /// The DSCP.
    pub dscp: u8,
}

/// Reads a data frame (Ethernet, optional RLT, IPv4 without options, UDP, data header);
/// None for anything else.
pub fn parse_data_frame(frame: &[u8]) -> Option<DataFrame> {
    let be16 = |at: usize| -> Option<u16> {
        Some(u16::from_be_bytes(frame.get(at..at + 2)?.try_into().ok()?))
    };
    let mut at = 12;
    let mut rlt = None;
    if be16(at)? == ETHERTYPE_RLT {
        rlt = Some(u64::from_be_bytes(frame.get(14..22)?.try_into().ok()?));
        at += RLT_BYTES;
    }
    if be16(at)? != ETHERTYPE_IPV4 {
        return None;
    }
    let ip = at + 2;
    let h = frame.get(ip..ip + IPV4)?;
    if h[0] != 0x45 || h[9] != 17 {
        return None;
    }
    let payload = frame.get(ip + IPV4 + UDP..)?;
    Some(DataFrame {
        header: DataHeader::parse(payload)?,
        rlt,
        dscp: h[1] >> 2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow() -> FlowAddress {
        FlowAddress {
            src_mac: [8, 0, 0, 0, 1, 1],
            dst_mac: [8, 0, 0, 0, 1, 5],
            src_ip: [10, 0, 1, 1],
            dst_ip: [10, 0, 1, 5],
            dscp: 8,
            udp_src: 5000,
            udp_dst: 5000,
        }
    }

    #[test]
    fn a_data_frame_keeps_its_size_with_and_without_rlt_and_reads_back() {
        let h = DataHeader {
            flow: 3,
            seq: 9,
            tx_ns: 1234,
        };
        let mut buf = Vec::new();
        write_data_frame(&mut buf, &flow(), 1500, None, &h);
        assert_eq!(buf.len(), 1500);
        assert_eq!(&buf[12..14], &[0x08, 0x00]);
        assert_eq!(u16::from_be_bytes([buf[16], buf[17]]), 1486);
        assert_eq!(ipv4_checksum(&buf[14..34]), 0, "header checksum verifies");
        assert_eq!(
            parse_data_frame(&buf),
            Some(DataFrame {
                header: h,
                rlt: None,
                dscp: 8
            })
        );
        write_data_frame(&mut buf, &flow(), 1500, Some(0x1_0005_0000), &h);
        assert_eq!(buf.len(), 1500);
        assert_eq!(&buf[12..14], &[0x88, 0xb6]);
        assert_eq!(u16::from_be_bytes([buf[26], buf[27]]), 1476);
        assert_eq!(parse_data_frame(&buf).unwrap().rlt, Some(0x1_0005_0000));
    }

    #[test]
    fn small_frames_grow_to_hold_the_headers_and_foreign_frames_are_none() {
        let mut buf = Vec::new();
        write_data_frame(
            &mut buf,
            &flow(),
            60,
            Some(1),
            &DataHeader {
                flow: 0,
                seq: 0,
                tx_ns: 0,
            },
        );
        assert_eq!(buf.len(), 68);
        assert_eq!(parse_data_frame(&[0u8; 60]), None);
        assert_eq!(parse_data_frame(&buf[..40]), None);
    }
}
