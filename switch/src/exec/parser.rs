//! The parser: the state machine, header extraction and checksum verification.

use super::calc::{applies, calc_value};
use super::eval::{eval, store};
use super::prims::{exec_prim, set_valid};
use super::State;
use crate::bits::{fits_window, get_bits, get_window, mask, BitReader};
use crate::jit::ParseEnd;
use crate::packet::Packet;
use crate::program::*;
use crate::trace::hex_bytes;
use crate::{trace_if, trace_pkt};

/// Most parse states one packet may visit before the parser gives up
/// (protects against loops in the state graph).
pub(crate) const MAX_PARSE_STEPS: u32 = 4096;

enum ParseOutcome {
    Done,
    Error(u32),
    /// TNA's `$reject` state was reached.
    Rejected,
}

fn extract(p: &Program, pkt: &mut Packet, h: HeaderId, vl_bits: Option<u32>) -> Result<(), u32> {
    let hi = &p.headers[h as usize];
    let ec = p.error_codes;
    let vl = vl_bits.unwrap_or(0);
    if let Some(bits) = vl_bits {
        if bits % 8 != 0 {
            return Err(ec.parser_invalid_argument);
        }
        // BMv2's max_length bounds the whole header, fixed fields included.
        if hi.fixed_bits + bits > hi.varbit_max_bytes * 8 {
            return Err(ec.header_too_short);
        }
    }
    let total_bits = (hi.fixed_bits + vl) as usize;
    let start = pkt.cursor * 8;
    if start + total_bits > pkt.data.len() * 8 {
        return Err(ec.packet_too_short);
    }
    if vl_bits.is_none() {
        if let Some(native) = &hi.native_extract {
            let input = pkt.data.get(pkt.cursor..).unwrap_or(&[]);
            if native.extract(input, &mut pkt.phv.fields) {
                set_valid(p, pkt, h);
                pkt.cursor += total_bits / 8;
                return Ok(());
            }
        }
    }
    let mut off = start;
    let first = hi.first_field as usize;
    for (k, wf) in p.wire[first..first + hi.num_fields as usize]
        .iter()
        .enumerate()
    {
        let f = first + k;
        match wf.kind {
            WireKind::Plain => {
                // Its place in the frame, not in the header: a varbit before it
                // may have a length other than its maximum.
                match fits_window((off % 8) as u32, wf.width)
                    .then(|| get_window(&pkt.data, off, wf.width))
                    .flatten()
                {
                    Some(v) => pkt.phv.fields[f] = v,
                    None => pkt
                        .phv
                        .set(p, f as FieldId, get_bits(&pkt.data, off, wf.width)),
                }
                off += wf.width as usize;
            }
            WireKind::Varbit(vs) => {
                let vb = &mut pkt.phv.varbits[vs as usize];
                vb.clear();
                if off.is_multiple_of(8) {
                    vb.extend_from_slice(&pkt.data[off / 8..off / 8 + (vl / 8) as usize]);
                } else {
                    let mut r = BitReader::new(&pkt.data, off / 8);
                    r.read((off % 8) as u32);
                    vb.extend((0..vl / 8).map(|_| r.read(8) as u8));
                }
                pkt.phv.fields[f] = u64::from(vl);
                off += vl as usize;
            }
            WireKind::Wide(at) => {
                let at = at as usize;
                let out = &mut pkt.phv.wide[at..at + wf.width.div_ceil(8) as usize];
                crate::wide::read_bits_into(&pkt.data, off, wf.width, out);
                off += wf.width as usize;
            }
        }
    }
    set_valid(p, pkt, h);
    pkt.cursor += total_bits / 8;
    Ok(())
}

/// The header instance an extract into `t` fills (a stack's next element), for the trace.
fn target_name<'p>(p: &'p Program, pkt: &Packet, t: &ExtractTarget) -> &'p str {
    let h = match t {
        ExtractTarget::Header(h) => Some(*h),
        ExtractTarget::Stack(s) => {
            let next = pkt.phv.stack_next[*s as usize] as usize;
            p.stacks[*s as usize].headers.get(next).copied()
        }
        ExtractTarget::UnionStack(us, member) => {
            let next = pkt.phv.ustack_next[*us as usize] as usize;
            p.union_stacks[*us as usize]
                .unions
                .get(next)
                .map(|&u| p.unions[u as usize].headers[*member as usize])
        }
    };
    h.map_or("(stack full)", |h| p.headers[h as usize].name.as_str())
}

fn extract_target(
    p: &Program,
    pkt: &mut Packet,
    t: &ExtractTarget,
    vl: Option<u32>,
) -> Result<(), u32> {
    match t {
        ExtractTarget::Header(h) => extract(p, pkt, *h, vl),
        ExtractTarget::Stack(s) => {
            let next = pkt.phv.stack_next[*s as usize];
            let Some(&h) = p.stacks[*s as usize].headers.get(next as usize) else {
                return Err(p.error_codes.stack_out_of_bounds);
            };
            extract(p, pkt, h, vl)?;
            pkt.phv.stack_next[*s as usize] += 1;
            Ok(())
        }
        ExtractTarget::UnionStack(us, member) => {
            let next = pkt.phv.ustack_next[*us as usize];
            let Some(&u) = p.union_stacks[*us as usize].unions.get(next as usize) else {
                return Err(p.error_codes.stack_out_of_bounds);
            };
            extract(p, pkt, p.unions[u as usize].headers[*member as usize], vl)?;
            pkt.phv.ustack_next[*us as usize] += 1;
            Ok(())
        }
    }
}

/// Lookahead bits an expression needs past the cursor (0 if none), so the
/// parser can raise PacketTooShort before reading beyond the frame.
pub(crate) fn lookahead_need(e: &Expr) -> usize {
    match e {
        Expr::Lookahead { offset, width } => (*offset + *width) as usize,
        Expr::Bin(_, a, b) => lookahead_need(a).max(lookahead_need(b)),
        Expr::Not(a)
        | Expr::BitNot(a)
        | Expr::D2B(a)
        | Expr::TwoCompMod(a, _)
        | Expr::SatCast(a, _)
        | Expr::USatCast(a, _) => lookahead_need(a),
        Expr::Cond(a, b, c) => lookahead_need(a)
            .max(lookahead_need(b))
            .max(lookahead_need(c)),
        _ => 0,
    }
}

fn run_parser<const TRACED: bool>(
    p: &Program,
    st: &mut State,
    pkt: &mut Packet,
    init: Option<u32>,
) -> ParseOutcome {
    let ec = p.error_codes;
    let (mut state, mut steps) = (init, 0);
    // The compiled parser goes as far as it can; while tracing, the
    // interpreter parses alone, so that every state is traced.
    if let (false, Some(native), Some(start)) = (TRACED, &p.native_parser, init) {
        match native.parse(pkt, start) {
            Some(ParseEnd::Accepted) => return ParseOutcome::Done,
            Some(ParseEnd::Rejected) => return ParseOutcome::Rejected,
            Some(ParseEnd::Resume {
                state: at,
                steps: n,
            }) => (state, steps) = (Some(at), n),
            None => {}
        }
    }
    while let Some(si) = state {
        steps += 1;
        if steps > MAX_PARSE_STEPS {
            return ParseOutcome::Error(
                p.errors
                    .iter()
                    .find(|(n, _)| n == "ParserTimeout")
                    .map_or(5, |e| e.1),
            );
        }
        let s = &p.parse_states[si as usize];
        if s.reject {
            return ParseOutcome::Rejected;
        }
        trace_if!(
            TRACED,
            st,
            pkt,
            Debug,
            "Parser '{}' entering state '{}'",
            p.trace_names.parser,
            s.name
        );
        for op in &s.ops {
            let r = match op {
                ParserOp::Extract(t) => {
                    trace_if!(
                        TRACED,
                        st,
                        pkt,
                        Debug,
                        "Extracting header '{}'",
                        target_name(p, pkt, t)
                    );
                    let r = extract_target(p, pkt, t, None);
                    if let (Ok(()), ExtractTarget::Header(h), Some(_)) = (r, t, &st.externs.deposit)
                    {
                        crate::externs::on_extract(p, st, pkt, *h);
                    }
                    r
                }
                ParserOp::ExtractVl(t, len) => {
                    trace_if!(
                        TRACED,
                        st,
                        pkt,
                        Debug,
                        "Extracting header '{}'",
                        target_name(p, pkt, t)
                    );
                    let bits = eval(p, st, pkt, &[], len);
                    let bits = u32::try_from(bits).unwrap_or(u32::MAX);
                    extract_target(p, pkt, t, Some(bits))
                }
                ParserOp::Set(lv, e) => {
                    if pkt.cursor * 8 + lookahead_need(e) > pkt.data.len() * 8 {
                        Err(ec.packet_too_short)
                    } else {
                        let v = eval(p, st, pkt, &[], e);
                        store(p, st, pkt, &[], lv, v);
                        Ok(())
                    }
                }
                ParserOp::Verify(c, e) => {
                    if eval(p, st, pkt, &[], c) == 0 {
                        Err(eval(p, st, pkt, &[], e) as u32)
                    } else {
                        Ok(())
                    }
                }
                ParserOp::Advance(bits) => {
                    let bits = eval(p, st, pkt, &[], bits);
                    if !bits.is_multiple_of(8) {
                        Err(ec.parser_invalid_argument)
                    } else if (pkt.cursor as u128) * 8 + bits > (pkt.data.len() as u128) * 8 {
                        Err(ec.packet_too_short)
                    } else {
                        pkt.cursor += (bits / 8) as usize;
                        Ok(())
                    }
                }
                ParserOp::Primitive(prim) => {
                    exec_prim(p, st, pkt, &[], prim);
                    Ok(())
                }
            };
            if let Err(code) = r {
                return ParseOutcome::Error(code);
            }
        }
        if s.transitions.is_empty() {
            break;
        }
        if pkt.cursor * 8 + s.key_lookahead > pkt.data.len() * 8 {
            return ParseOutcome::Error(ec.packet_too_short);
        }
        st.key.clear();
        for k in &s.key {
            let v = eval(p, st, pkt, &[], &k.expr) & mask(k.width);
            st.key.push(v);
        }
        if TRACED {
            trace_transition_key(st, pkt, s);
        }
        state = None;
        for t in &s.transitions {
            let hit = match &t.on {
                TransitionMatch::Default => true,
                TransitionMatch::Value(vm) => vm.iter().zip(&st.key).all(|((v, m), k)| k & m == *v),
                TransitionMatch::ValueSet(vs, vmask) => {
                    let cat = crate::load::concat_components(&st.key, &s.key)
                        & vmask.unwrap_or(u128::MAX);
                    st.vsets[*vs as usize].iter().any(|(v, m)| cat & m == *v)
                }
            };
            if hit {
                state = t.next;
                break;
            }
        }
    }
    ParseOutcome::Done
}

/// Traces the key a state's transitions match on, as BMv2 prints it (each component's
/// bytes in hex, concatenated).
fn trace_transition_key(st: &mut State, pkt: &Packet, s: &ParseState) {
    if s.key.is_empty() {
        trace_pkt!(
            st,
            pkt,
            Debug,
            "Parser state '{}' has no switch, going to default next state",
            s.name
        );
        return;
    }
    let hex: String = s
        .key
        .iter()
        .zip(&st.key)
        .map(|(k, v)| hex_bytes(*v, k.width))
        .collect();
    trace_pkt!(st, pkt, Debug, "Parser state '{}': key is {}", s.name, hex);
}

/// Tofino's `parser_err` bit for a parser error: a header cut short is
/// PARSER_ERROR_PARTIAL_HDR (0x0002), a loop past the step limit
/// PARSER_ERROR_TIMEOUT_HW (0x0010), anything else PARSER_ERROR_NO_MATCH (0x0001).
fn tna_parser_err(p: &Program, code: u32) -> u16 {
    let ec = p.error_codes;
    if code == ec.packet_too_short || code == ec.header_too_short {
        0x0002
    } else if p
        .errors
        .iter()
        .any(|(n, c)| n == "ParserTimeout" && *c == code)
    {
        0x0010
    } else {
        0x0001
    }
}

/// Parses the packet and verifies checksums, recording errors in
/// `standard_metadata` (packets are not dropped for them).
pub fn parse(p: &Program, st: &mut State, pkt: &mut Packet) {
    parse_from(p, st, pkt, p.init_state);
}

/// [`parse`] from parse state `init` (a `MultiParserSwitch`'s other parser).
pub fn parse_from(p: &Program, st: &mut State, pkt: &mut Packet, init: Option<u32>) {
    if st.trace.is_some() {
        parse_as::<true>(p, st, pkt, init);
    } else {
        parse_as::<false>(p, st, pkt, init);
    }
}

/// [`parse`], traced or not.
fn parse_as<const TRACED: bool>(p: &Program, st: &mut State, pkt: &mut Packet, init: Option<u32>) {
    pkt.cursor = 0;
    st.externs.start_parse();
    trace_if!(
        TRACED,
        st,
        pkt,
        Debug,
        "Parser '{}': start",
        p.trace_names.parser
    );
    let outcome = run_parser::<TRACED>(p, st, pkt, init);
    trace_if!(TRACED, st, pkt, Trace, "Bytes parsed: {}", pkt.cursor);
    crate::externs::end_parse(p, st, pkt);
    if let ParseOutcome::Rejected = outcome {
        trace_if!(
            TRACED,
            st,
            pkt,
            Debug,
            "Parser reached reject: packet dropped"
        );
        pkt.flags.rejected = true;
    }
    if let ParseOutcome::Error(code) = outcome {
        let error = p
            .errors
            .iter()
            .find(|e| e.1 == code)
            .map_or("?", |e| e.0.as_str());
        trace_if!(TRACED, st, pkt, Debug, "Exception while parsing: {}", error);
        st.stats.parser_errors += 1;
        if let Some(f) = p.std.parser_error {
            pkt.phv.set(p, f, u128::from(code));
        }
        if let Some(f) = p.tna.parser_err {
            pkt.phv.set(p, f, u128::from(tna_parser_err(p, code)));
        }
    }
    let mut bad = false;
    for (i, c) in p.checksums.iter().enumerate().filter(|(_, c)| c.verify) {
        if !applies(p, st, pkt, i) {
            continue;
        }
        let v = u128::from(calc_value(p, st, pkt, &p.calculations[c.calc as usize]));
        let ok = v & st.fmask[c.target as usize] == pkt.phv.get(p, c.target);
        trace_if!(
            TRACED,
            st,
            pkt,
            Debug,
            "Verifying checksum '{}': {}",
            c.name,
            if ok { "ok" } else { "mismatch" }
        );
        bad |= !ok;
    }
    if bad {
        st.stats.checksum_errors += 1;
        if let Some(f) = p.std.checksum_error {
            pkt.phv.set(p, f, 1);
        }
    }
    trace_if!(
        TRACED,
        st,
        pkt,
        Debug,
        "Parser '{}': end",
        p.trace_names.parser
    );
}
