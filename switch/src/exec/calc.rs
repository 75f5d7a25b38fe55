//! Calculations: hashes and checksums over fields of the packet.

use super::deparser::{emit_field, emit_header};
use super::State;
use crate::bits::{is_byte_field, put_bits, put_byte_field, BitWriter};
use crate::flat::Condition;
use crate::hash::{csum16, identity, xor16, xor32, xor8};
use crate::packet::Packet;
use crate::program::*;

/// Packs a calculation's inputs into `buf` (cleared first) as BMv2 does: most
/// significant bit first, fields of invalid headers skipped.
pub(crate) fn pack_inputs(p: &Program, pkt: &Packet, c: &Calculation, buf: &mut Vec<u8>) {
    buf.clear();
    if !c.symmetric.is_empty() {
        return pack_symmetric(p, pkt, c, buf);
    }
    let mut w = BitWriter::new(buf);
    let packed = match &c.packed {
        // Fields of an invalid header are skipped: with it, all of them.
        Some(pk) if !pkt.phv.valid[pk.header as usize] => true,
        Some(pk) => w.push_packed(pk.bytes as usize, |b| {
            if pk
                .native
                .as_ref()
                .is_some_and(|n| n.pack(&pkt.phv.fields, b))
            {
                return;
            }
            // Offsets grow in input order, so a whole-byte field may be one 8-byte
            // store (which zeroes the bytes after it, not yet written).
            for &(f, at) in &pk.fields {
                let width = p.wire[f as usize].width;
                if is_byte_field(at, width) {
                    put_byte_field(b, at as usize, width, pkt.phv.get(p, f) as u64);
                } else {
                    put_bits(b, at as usize, width, pkt.phv.get(p, f));
                }
            }
        }),
        None => false,
    };
    let inputs = if packed { &[][..] } else { &c.inputs[..] };
    for inp in inputs {
        emit_input(p, pkt, inp, &mut w);
    }
    w.finish();
}

/// Appends one calculation input, as BMv2 does: fields and headers of invalid headers
/// are skipped, the payload is what the parser left.
#[inline]
fn emit_input(p: &Program, pkt: &Packet, inp: &CalcInput, w: &mut BitWriter<'_>) {
    match inp {
        CalcInput::Field(f) => {
            if pkt.phv.valid[p.fields[*f as usize].header as usize] {
                emit_field(p, pkt, *f, w);
            }
        }
        CalcInput::Const(v, width) => w.push(*width, *v),
        CalcInput::Header(h) => {
            if pkt.phv.valid[*h as usize] {
                emit_header(p, pkt, *h, w);
            }
        }
        CalcInput::Payload => {
            w.finish();
            w.push_bytes(&pkt.data[pkt.cursor.min(pkt.data.len())..]);
        }
    }
}

/// Packs a calculation with `@symmetric` pairs: each pair's inputs (fields of one
/// width, checked at load time) swap places when the first is the larger.
fn pack_symmetric(p: &Program, pkt: &Packet, c: &Calculation, buf: &mut Vec<u8>) {
    let value = |k: u16| match c.inputs.get(usize::from(k)) {
        Some(CalcInput::Field(f)) => pkt.phv.get(p, *f),
        _ => 0,
    };
    let mut w = BitWriter::new(buf);
    for k in 0..c.inputs.len() {
        let mut src = k;
        for &(a, b) in &c.symmetric {
            let k16 = k as u16;
            if (k16 == a || k16 == b) && value(a) > value(b) {
                src = usize::from(if k16 == a { b } else { a });
            }
        }
        emit_input(p, pkt, &c.inputs[src], &mut w);
    }
    w.finish();
}

/// Computes a calculation (hash or checksum) over the packet.
pub fn calc_value(p: &Program, st: &mut State, pkt: &Packet, c: &Calculation) -> u64 {
    let mut buf = std::mem::take(&mut st.hbuf);
    pack_inputs(p, pkt, c, &mut buf);
    let v = match c.algo {
        HashAlgo::Crc16 => st.crc16.compute(&buf),
        HashAlgo::Crc32 => st.crc32.compute(&buf),
        HashAlgo::Crc16Custom => st.crc16_custom.compute(&buf),
        HashAlgo::Crc32Custom => st.crc32_custom.compute(&buf),
        HashAlgo::Csum16 => csum16(&buf),
        HashAlgo::Xor16 => xor16(&buf),
        HashAlgo::Identity => identity(&buf),
        HashAlgo::Random => st.rng.next_u64(),
        HashAlgo::CrcCcitt => st.crc_ccitt.compute(&buf),
        HashAlgo::Xor32 => xor32(&buf),
        HashAlgo::Xor8 => xor8(&buf),
        HashAlgo::RoundRobin => {
            st.round_robin = st.round_robin.wrapping_add(1);
            st.round_robin - 1
        }
        HashAlgo::Crc(i) => p.crcs[i as usize].compute(&buf),
    };
    st.hbuf = buf;
    v
}

/// Whether checksum `i`'s condition holds (true for one without), as
/// [`crate::flat::Flat::conditions`] has it.
#[inline(always)]
pub(super) fn applies(p: &Program, st: &mut State, pkt: &mut Packet, i: usize) -> bool {
    match p.flat.conditions.get(i) {
        Some(Condition::Always) => true,
        Some(Condition::Valid(h)) => pkt.phv.valid.get(*h as usize).is_some_and(|&v| v),
        _ => run_condition(p, st, pkt, i),
    }
}

/// [`applies`] for a condition that is a block (or a tree): kept out of
/// line, so that the common validity test costs its callers no more than
/// the load.
#[inline(never)]
fn run_condition(p: &Program, st: &mut State, pkt: &mut Packet, i: usize) -> bool {
    if let Some(Condition::Block(code)) = p.flat.conditions.get(i) {
        return crate::flat::holds(p, st, pkt, code);
    }
    // A program whose checksums changed after its straight-line form was built.
    p.checksums[i]
        .cond
        .as_ref()
        .is_none_or(|e| super::eval::eval(p, st, pkt, &[], e) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bits::mask;
    use crate::hash::Rng;

    #[test]
    fn packed_calculation_inputs_hash_as_the_bit_writer_does() {
        let p = crate::load::load(include_str!("../../../sim/tests/fixtures/forward.json"))
            .expect("fixture loads");
        let mut st = State::new(&p, 1);
        let mut rng = Rng::new(3);
        let packed: Vec<&Calculation> = p
            .calculations
            .iter()
            .filter(|c| c.packed.is_some())
            .collect();
        assert!(!packed.is_empty(), "the IPv4 checksum's inputs are packed");
        for round in 0..500 {
            let mut pkt = Packet::new(&p);
            for f in 0..p.fields.len() as u32 {
                let v = u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64());
                pkt.phv.set(&p, f, v & mask(p.fields[f as usize].width));
            }
            for v in pkt.phv.valid.iter_mut() {
                *v = round % 5 != 0;
            }
            for c in &packed {
                let bitwise = Calculation {
                    packed: None,
                    ..(*c).clone()
                };
                assert_eq!(
                    calc_value(&p, &mut st, &pkt, c),
                    calc_value(&p, &mut st, &pkt, &bitwise),
                    "{}",
                    c.name
                );
            }
        }
    }
}
