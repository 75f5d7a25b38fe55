//! The deparser: checksum updates, then valid headers in order and the payload.

use super::calc::{applies, calc_value};
use super::prims::run_body;
use super::State;
use crate::bits::{is_byte_field, put_bits, put_byte_field, BitWriter};
use crate::packet::Packet;
use crate::program::*;
use crate::trace_if;

/// Appends a field's wire form: a varbit field's slot holds its length in
/// bits, so its bytes come from the header's varbit buffer instead.
#[inline]
pub(super) fn emit_field(p: &Program, pkt: &Packet, f: FieldId, w: &mut BitWriter<'_>) {
    let wf = p.wire[f as usize];
    let v = pkt.phv.get(p, f);
    match wf.kind {
        WireKind::Plain => w.push(wf.width, v),
        WireKind::Varbit(slot) => {
            let bytes = &pkt.phv.varbits[slot as usize];
            w.push_bytes(&bytes[..(v as usize / 8).min(bytes.len())]);
        }
        WireKind::Wide(at) => {
            let at = at as usize;
            let bytes = &pkt.phv.wide[at..at + wf.width.div_ceil(8) as usize];
            crate::wide::push_bits(w, wf.width, bytes);
        }
    }
}

/// Appends a header's wire form.
pub(crate) fn emit_header(p: &Program, pkt: &Packet, h: HeaderId, w: &mut BitWriter<'_>) {
    let hi = &p.headers[h as usize];
    let fields = hi.first_field as usize..(hi.first_field + hi.num_fields) as usize;
    if hi.packed
        && w.push_packed(hi.fixed_bits as usize / 8, |buf| {
            if hi
                .native_emit
                .as_ref()
                .is_some_and(|n| n.pack(&pkt.phv.fields, buf))
            {
                return;
            }
            for (wf, &lo) in p.wire[fields.clone()]
                .iter()
                .zip(&pkt.phv.fields[fields.clone()])
            {
                if is_byte_field(wf.offset, wf.width) {
                    put_byte_field(buf, wf.offset as usize, wf.width, lo);
                    continue;
                }
                let hi = wf.high.map_or(0, |h| u128::from(pkt.phv.high[h as usize]));
                put_bits(buf, wf.offset as usize, wf.width, hi << 64 | u128::from(lo));
            }
        })
    {
        return;
    }
    for f in fields {
        emit_field(p, pkt, f as FieldId, w);
    }
}

/// Updates checksums, runs the deparser's primitives and deparses into
/// `pkt.out` (valid headers in order, by machine code when the JIT compiled
/// them, then the unparsed payload), applying truncation. `pkt.data` is
/// spent afterwards: when the headers take the bytes the parser consumed,
/// they are written over them and the frame buffer becomes `pkt.out`, so
/// the payload is not copied.
pub fn deparse(p: &Program, st: &mut State, pkt: &mut Packet) {
    if st.trace.is_some() {
        deparse_as::<true>(p, st, pkt);
    } else {
        deparse_as::<false>(p, st, pkt);
    }
}

/// [`deparse`], traced or not.
fn deparse_as<const TRACED: bool>(p: &Program, st: &mut State, pkt: &mut Packet) {
    trace_if!(
        TRACED,
        st,
        pkt,
        Debug,
        "Deparser '{}': start",
        p.trace_names.deparser
    );
    for (i, c) in p.checksums.iter().enumerate().filter(|(_, c)| c.update) {
        if !applies(p, st, pkt, i) {
            continue;
        }
        trace_if!(TRACED, st, pkt, Debug, "Updating checksum '{}'", c.name);
        let v = u128::from(calc_value(p, st, pkt, &p.calculations[c.calc as usize]));
        pkt.phv.set(p, c.target, v & st.fmask[c.target as usize]);
    }
    if !p.deparser_prims.is_empty() {
        run_body(p, st, pkt, &[], &p.deparser_prims);
    }
    let mut out = std::mem::take(&mut pkt.out);
    let native = p.native_deparser.as_ref().filter(|_| !TRACED);
    if !native.is_some_and(|n| n.emit(&pkt.phv.fields, &pkt.phv.valid, &mut out)) {
        out.clear();
        let mut w = BitWriter::new(&mut out);
        for &h in &p.deparse_order {
            if pkt.phv.valid[h as usize] {
                trace_if!(
                    TRACED,
                    st,
                    pkt,
                    Debug,
                    "Deparsing header '{}'",
                    p.headers[h as usize].name
                );
                emit_header(p, pkt, h, &mut w);
            }
        }
        w.finish();
    }
    let cursor = pkt.cursor.min(pkt.data.len());
    if out.len() == cursor {
        pkt.data[..cursor].copy_from_slice(&out);
        std::mem::swap(&mut pkt.data, &mut out);
    } else {
        out.extend_from_slice(&pkt.data[cursor..]);
    }
    if let Some(t) = pkt.flags.truncate {
        out.truncate(t as usize);
    }
    pkt.out = out;
    trace_if!(
        TRACED,
        st,
        pkt,
        Debug,
        "Deparser '{}': end",
        p.trace_names.deparser
    );
}
