//! Values wider than 128 bits. BMv2 holds every field as an arbitrary-precision
//! integer; here only fields wider than a `u128` pay for that: their values
//! are big-endian byte strings in [`crate::packet::Phv::wide`], copied,
//! compared, extracted and emitted in place, so narrower fields keep their
//! `u128` fast path and nothing is allocated per packet.

use crate::bits::{get_bits, mask, BitWriter};
use crate::exec::{eval, State};
use crate::packet::Packet;
use crate::program::{Program, WideAssign, WideOperand};

/// Bits held by the most significant of the `len` bytes of a `width`-bit value.
#[inline]
fn head_bits(width: u32, len: usize) -> u32 {
    width.saturating_sub(8 * (len as u32).saturating_sub(1))
}

/// Reads `width` bits at bit `offset` of `buf` into `out` (right-aligned,
/// big-endian); callers check the bits lie inside `buf`.
pub fn read_bits_into(buf: &[u8], offset: usize, width: u32, out: &mut [u8]) {
    let head = head_bits(width, out.len());
    let Some((first, rest)) = out.split_first_mut() else {
        return;
    };
    if head == 8 && offset.is_multiple_of(8) {
        let start = offset / 8;
        *first = buf[start];
        rest.copy_from_slice(&buf[start + 1..start + 1 + rest.len()]);
        return;
    }
    *first = get_bits(buf, offset, head) as u8;
    let mut off = offset + head as usize;
    for b in rest {
        *b = get_bits(buf, off, 8) as u8;
        off += 8;
    }
}

/// Appends the `width`-bit value held right-aligned in `bytes` to `w`.
pub fn push_bits(w: &mut BitWriter<'_>, width: u32, bytes: &[u8]) {
    let head = head_bits(width, bytes.len());
    if let Some((first, rest)) = bytes.split_first() {
        w.push(head, u128::from(*first));
        w.push_bytes(rest);
    }
}

/// The integer held by at most 16 big-endian bytes.
#[inline]
pub fn be_int(bytes: &[u8]) -> u128 {
    bytes.iter().fold(0, |v, &b| v << 8 | u128::from(b))
}

/// Whether two big-endian byte strings hold the same integer (their lengths may differ).
pub fn int_eq(a: &[u8], b: &[u8]) -> bool {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let (high, low) = long.split_at(long.len() - short.len());
    high.iter().all(|&x| x == 0) && low == short
}

/// Writes the integer `src` into the `width`-bit destination `dst`
/// right-aligned; bits above `width` are dropped, as P4 assignment does.
pub fn store_int(dst: &mut [u8], width: u32, src: &[u8]) {
    let n = src.len().min(dst.len());
    let split = dst.len() - n;
    dst[..split].fill(0);
    dst[split..].copy_from_slice(&src[src.len() - n..]);
    let head = head_bits(width, dst.len());
    if let Some(top) = dst.first_mut() {
        *top &= mask(head) as u8;
    }
}

/// The bytes of a wide operand now (`buf` receives a narrow value's bytes).
fn operand<'a>(
    p: &Program,
    st: &State,
    pkt: &'a Packet,
    data: &[u128],
    op: &'a WideOperand,
    buf: &'a mut [u8; 16],
) -> &'a [u8] {
    match op {
        WideOperand::Field { at, len } => &pkt.phv.wide[*at as usize..(*at + *len) as usize],
        WideOperand::Const(bytes) => bytes,
        WideOperand::Narrow(e) => {
            *buf = eval(p, st, pkt, data, e).to_be_bytes();
            &buf[..]
        }
    }
}

/// Evaluates `a == b` where an operand is wider than 128 bits.
pub fn eq(
    p: &Program,
    st: &State,
    pkt: &Packet,
    data: &[u128],
    a: &WideOperand,
    b: &WideOperand,
) -> bool {
    let (mut ba, mut bb) = ([0u8; 16], [0u8; 16]);
    int_eq(
        operand(p, st, pkt, data, a, &mut ba),
        operand(p, st, pkt, data, b, &mut bb),
    )
}

/// Executes an assignment into a field wider than 128 bits.
pub fn assign(p: &Program, st: &State, pkt: &mut Packet, data: &[u128], a: &WideAssign) {
    let (at, len) = (a.at as usize, a.len as usize);
    match &a.src {
        // Same width (checked at load time): a plain byte copy.
        WideOperand::Field { at: src, .. } => {
            let src = *src as usize;
            pkt.phv.wide.copy_within(src..src + len, at);
        }
        WideOperand::Const(bytes) => store_int(&mut pkt.phv.wide[at..at + len], a.width, bytes),
        WideOperand::Narrow(e) => {
            let v = eval(p, st, pkt, data, e).to_be_bytes();
            store_int(&mut pkt.phv.wide[at..at + len], a.width, &v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_unaligned_wide_values() {
        // 12 bits of padding, then a 140-bit value of all ones but its top bit.
        let mut frame = vec![];
        let mut w = BitWriter::new(&mut frame);
        w.push(12, 0);
        let mut value = [0xffu8; 18];
        value[0] = 0x07; // 140 = 4 + 17 * 8 bits: the top byte holds 4 bits
        push_bits(&mut w, 140, &value);
        w.finish();
        assert_eq!(frame.len(), 19);
        let mut out = [0u8; 18];
        read_bits_into(&frame, 12, 140, &mut out);
        assert_eq!(out, value);
    }

    #[test]
    fn integers_compare_and_store_across_lengths() {
        assert!(int_eq(&[0, 0, 1, 2], &[1, 2]));
        assert!(!int_eq(&[1, 0, 1, 2], &[1, 2]));
        let mut dst = [0xaau8; 18];
        store_int(&mut dst, 140, &[0xff; 20]);
        assert_eq!(dst[0], 0x0f);
        assert!(dst[1..].iter().all(|&b| b == 0xff));
        store_int(&mut dst, 140, &[5]);
        assert!(int_eq(&dst, &[5]));
    }
}
