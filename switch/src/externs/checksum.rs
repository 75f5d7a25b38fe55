//! Tofino's `Checksum`: a ones'-complement sum per instance that the parser adds
//! fields to and subtracts fields from (verification, residuals), and that the
//! deparser computes afresh over a list of fields (update).

use crate::exec::{pack_inputs, State};
use crate::packet::Packet;
use crate::program::{Calculation, HeaderId, Program};

/// Ones'-complement sum of `bytes` as big-endian 16-bit words (an odd tail padded
/// with zero), folded to 16 bits: the complement of the Internet checksum.
fn ones_sum(bytes: &[u8]) -> u16 {
    !(crate::hash::csum16(bytes) as u16)
}

/// Folds carries back into 16 bits.
fn fold(mut sum: u64) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// Ones'-complement addition of two sums.
fn plus(a: u16, b: u16) -> u16 {
    fold(u64::from(a) + u64::from(b))
}

/// Instance `inst`'s sum so far.
pub(super) fn sum(st: &State, inst: u32) -> u16 {
    st.externs.sums.get(inst as usize).copied().unwrap_or(0)
}

/// Adds (or, `negate`, subtracts) the packed `data` to instance `inst`'s sum.
pub(super) fn add(
    p: &Program,
    st: &mut State,
    pkt: &Packet,
    inst: u32,
    data: &Calculation,
    negate: bool,
) {
    let mut buf = std::mem::take(&mut st.hbuf);
    pack_inputs(p, pkt, data, &mut buf);
    let s = ones_sum(&buf);
    st.hbuf = buf;
    accumulate(st, inst, if negate { !s } else { s });
}

/// Subtracts header `h`'s wire bytes from instance `inst`'s sum.
pub(super) fn subtract_header(p: &Program, st: &mut State, pkt: &Packet, inst: u32, h: HeaderId) {
    let mut buf = std::mem::take(&mut st.hbuf);
    buf.clear();
    let mut w = crate::bits::BitWriter::new(&mut buf);
    crate::exec::emit_header_bits(p, pkt, h, &mut w);
    w.finish();
    let s = ones_sum(&buf);
    st.hbuf = buf;
    accumulate(st, inst, !s);
}

fn accumulate(st: &mut State, inst: u32, s: u16) {
    if let Some(cur) = st.externs.sums.get_mut(inst as usize) {
        *cur = plus(*cur, s);
    }
}

/// The checksum of the packed `data` (the complement of its sum); a result of 0 is
/// written as 0xFFFF when `zeros_as_ones` (UDP's rule).
pub(super) fn update(
    p: &Program,
    st: &mut State,
    pkt: &Packet,
    data: &Calculation,
    zeros_as_ones: bool,
) -> u16 {
    let mut buf = std::mem::take(&mut st.hbuf);
    pack_inputs(p, pkt, data, &mut buf);
    let v = !ones_sum(&buf);
    st.hbuf = buf;
    if v == 0 && zeros_as_ones {
        0xffff
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sum_of_a_correct_ipv4_header_is_all_ones() {
        // RFC 1071's example header with its checksum 0xb861 in place.
        let hdr = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(ones_sum(&hdr), 0xffff);
        let mut without = hdr;
        without[10] = 0;
        without[11] = 0;
        assert_eq!(!ones_sum(&without), 0xb861);
    }

    #[test]
    fn subtracting_a_word_undoes_adding_it() {
        let s = plus(0x1234, 0xfedc);
        assert_eq!(plus(s, !0xfedc), 0x1234);
        assert_eq!(
            ones_sum(&[0xab]),
            0xab00,
            "an odd byte is the high half of a word"
        );
    }
}
