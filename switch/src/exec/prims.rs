//! Primitives: action bodies, header operations and the engine's log.

use super::calc::calc_value;
use super::eval::{eval, header_of, store};
use super::State;
use crate::bits::mask;
use crate::packet::Packet;
use crate::program::*;

/// Log lines kept in memory (oldest are dropped first).
const MAX_LOG_LINES: usize = 65536;

/// Wire size of a header instance now, bytes.
fn header_bytes(p: &Program, pkt: &Packet, h: HeaderId) -> i64 {
    let hi = &p.headers[h as usize];
    let vl = hi.varbit.map_or(0, |(fi, _)| {
        pkt.phv.fields[(hi.first_field + fi) as usize] as u32
    });
    i64::from((hi.fixed_bits + vl) / 8)
}

fn copy_header(p: &Program, pkt: &mut Packet, dst: HeaderId, src: HeaderId) {
    let (d, s) = (&p.headers[dst as usize], &p.headers[src as usize]);
    let n = d.num_fields.min(s.num_fields) as usize;
    let (df, sf) = (d.first_field as usize, s.first_field as usize);
    pkt.phv
        .copy_fields(p, sf as FieldId, df as FieldId, n as u32);
    let ((dw, dn), (sw, sn)) = (d.wide_range, s.wide_range);
    if dn == sn && dw != sw {
        let sw = sw as usize;
        pkt.phv.wide.copy_within(sw..sw + sn as usize, dw as usize);
    }
    pkt.phv.valid[dst as usize] = pkt.phv.valid[src as usize];
    if let (Some((_, dv)), Some((_, sv))) = (d.varbit, s.varbit) {
        let (dv, sv) = (dv as usize, sv as usize);
        if dv != sv {
            let src_bytes = std::mem::take(&mut pkt.phv.varbits[sv]);
            pkt.phv.varbits[dv].clear();
            pkt.phv.varbits[dv].extend_from_slice(&src_bytes);
            pkt.phv.varbits[sv] = src_bytes;
        }
    }
}

pub(super) fn set_valid(p: &Program, pkt: &mut Packet, h: HeaderId) {
    if let Some(u) = p.headers[h as usize].union {
        for &m in &p.unions[u as usize].headers {
            if m != h {
                pkt.phv.valid[m as usize] = false;
            }
        }
    }
    pkt.phv.valid[h as usize] = true;
}

/// Executes one primitive (jumps and exit are handled by the action's straight-line form).
pub fn exec_prim(p: &Program, st: &mut State, pkt: &mut Packet, data: &[u128], prim: &Prim) {
    let sm = p.std;
    match prim {
        Prim::Assign(lv, e) => {
            let v = eval(p, st, pkt, data, e);
            store(p, st, pkt, data, lv, v);
        }
        Prim::AssignWide(a) => crate::wide::assign(p, st, pkt, data, a),
        Prim::AssignHeader(d, s) => {
            if let (Some(d), Some(s)) = (
                header_of(p, st, pkt, data, d),
                header_of(p, st, pkt, data, s),
            ) {
                copy_header(p, pkt, d, s);
                if pkt.phv.valid[d as usize] {
                    set_valid(p, pkt, d);
                }
            }
        }
        Prim::AssignUnion(d, s) => {
            let (dh, sh) = (
                &p.unions[*d as usize].headers,
                &p.unions[*s as usize].headers,
            );
            for (&dm, &sm_) in dh.iter().zip(sh) {
                copy_header(p, pkt, dm, sm_);
            }
        }
        Prim::AssignStack(d, s) => {
            let (dh, sh) = (
                &p.stacks[*d as usize].headers,
                &p.stacks[*s as usize].headers,
            );
            for (&dm, &sm_) in dh.iter().zip(sh) {
                copy_header(p, pkt, dm, sm_);
            }
            pkt.phv.stack_next[*d as usize] = pkt.phv.stack_next[*s as usize];
        }
        Prim::AssignUnionStack(d, s) => {
            let (du, su) = (
                &p.union_stacks[*d as usize].unions,
                &p.union_stacks[*s as usize].unions,
            );
            for (&dun, &sun) in du.iter().zip(su) {
                let (dh, sh) = (
                    &p.unions[dun as usize].headers,
                    &p.unions[sun as usize].headers,
                );
                for (&dm, &sm_) in dh.iter().zip(sh) {
                    copy_header(p, pkt, dm, sm_);
                }
            }
            pkt.phv.ustack_next[*d as usize] = pkt.phv.ustack_next[*s as usize];
        }
        Prim::AssignVl(d, s) => {
            let (dh, sh) = (
                &p.headers[p.fields[*d as usize].header as usize],
                &p.headers[p.fields[*s as usize].header as usize],
            );
            let v = pkt.phv.get(p, *s);
            pkt.phv.set(p, *d, v);
            if let (Some((_, dv)), Some((_, sv))) = (dh.varbit, sh.varbit) {
                if dv != sv {
                    let src = std::mem::take(&mut pkt.phv.varbits[sv as usize]);
                    pkt.phv.varbits[dv as usize].clear();
                    pkt.phv.varbits[dv as usize].extend_from_slice(&src);
                    pkt.phv.varbits[sv as usize] = src;
                }
            }
        }
        Prim::AddHeader(r) => {
            if let Some(h) = header_of(p, st, pkt, data, r) {
                if !pkt.phv.valid[h as usize] {
                    let hi = &p.headers[h as usize];
                    pkt.phv.clear_fields(p, hi.first_field, hi.num_fields);
                    pkt.phv.clear_wide(hi);
                    set_valid(p, pkt, h);
                    pkt.len_reg += header_bytes(p, pkt, h);
                }
            }
        }
        Prim::RemoveHeader(r) => {
            if let Some(h) = header_of(p, st, pkt, data, r) {
                if pkt.phv.valid[h as usize] && !p.headers[h as usize].metadata {
                    pkt.len_reg -= header_bytes(p, pkt, h);
                    pkt.phv.valid[h as usize] = false;
                }
            }
        }
        Prim::Push(s, n) => {
            let n = eval(p, st, pkt, data, n).min(1 << 16) as usize;
            let hs = &p.stacks[*s as usize].headers;
            let len = hs.len();
            for i in (0..len).rev() {
                if i >= n {
                    copy_header(p, pkt, hs[i], hs[i - n]);
                } else {
                    pkt.phv.valid[hs[i] as usize] = false;
                }
            }
            let next = &mut pkt.phv.stack_next[*s as usize];
            *next = (*next as usize + n).min(len) as u32;
        }
        Prim::Pop(s, n) => {
            let n = eval(p, st, pkt, data, n).min(1 << 16) as usize;
            let hs = &p.stacks[*s as usize].headers;
            let len = hs.len();
            for i in 0..len {
                if i + n < len {
                    copy_header(p, pkt, hs[i], hs[i + n]);
                } else {
                    pkt.phv.valid[hs[i] as usize] = false;
                }
            }
            let next = &mut pkt.phv.stack_next[*s as usize];
            *next = next.saturating_sub(n as u32);
        }
        Prim::MarkToDrop => {
            pkt.phv.set(
                p,
                sm.egress_spec,
                u128::from(st.drop_port) & st.fmask[sm.egress_spec as usize],
            );
            if let Some(m) = sm.mcast_grp {
                pkt.phv.set(p, m, 0);
            }
        }
        Prim::Clone {
            session,
            field_list,
            ..
        } => {
            pkt.flags.clone_session = Some(eval(p, st, pkt, data, session) as u32);
            pkt.flags.clone_field_list = *field_list;
        }
        Prim::Resubmit(fl) => pkt.flags.resubmit = Some(*fl),
        Prim::Recirculate(fl) => pkt.flags.recirculate = Some(*fl),
        Prim::Digest(l) => pkt.flags.digest = Some(*l),
        Prim::HashOffset {
            dest,
            base,
            calc,
            max,
        } => {
            let h = calc_value(p, st, pkt, &p.calculations[*calc as usize]);
            let base = eval(p, st, pkt, data, base);
            let max = eval(p, st, pkt, data, max);
            let v = if max == 0 {
                base
            } else {
                base.wrapping_add(u128::from(h) % max)
            };
            store(p, st, pkt, data, dest, v);
        }
        Prim::Random { dest, lo, hi } => {
            let (lo, hi) = (eval(p, st, pkt, data, lo), eval(p, st, pkt, data, hi));
            if lo <= hi {
                let v = st.rng.range(lo, hi);
                store(p, st, pkt, data, dest, v);
            }
        }
        Prim::Truncate(n) => {
            let n = eval(p, st, pkt, data, n).min(u128::from(u32::MAX)) as u32;
            pkt.flags.truncate = Some(pkt.flags.truncate.map_or(n, |t| t.min(n)));
        }
        Prim::RegisterRead { dest, array, index } => {
            let i = eval(p, st, pkt, data, index);
            if let Some(v) = usize::try_from(i)
                .ok()
                .and_then(|i| st.registers[*array as usize].get(i).copied())
            {
                store(p, st, pkt, data, dest, v);
            }
        }
        Prim::RegisterWrite {
            array,
            index,
            value,
        } => {
            let i = eval(p, st, pkt, data, index);
            let v = eval(p, st, pkt, data, value) & mask(p.registers[*array as usize].width);
            if let Some(cell) = usize::try_from(i)
                .ok()
                .and_then(|i| st.registers[*array as usize].get_mut(i))
            {
                *cell = v;
            }
        }
        Prim::Count { array, index } => {
            let i = eval(p, st, pkt, data, index);
            if let Some(c) = usize::try_from(i)
                .ok()
                .and_then(|i| st.counters[*array as usize].get_mut(i))
            {
                c.count(u64::from(pkt.ingress_len));
            }
        }
        Prim::ExecuteMeter { array, index, dest } => {
            let i = eval(p, st, pkt, data, index);
            let units = if p.meters[*array as usize].bytes {
                u64::from(pkt.ingress_len)
            } else {
                1
            };
            let now = pkt.now;
            if let Some(m) = usize::try_from(i)
                .ok()
                .and_then(|i| st.meters[*array as usize].get_mut(i))
            {
                let colour = m.execute(units, now);
                store(p, st, pkt, data, dest, colour);
            }
        }
        Prim::LogMsg { parts, args } => {
            let mut line = String::new();
            for (i, part) in parts.iter().enumerate() {
                line.push_str(part);
                if let Some(a) = args.get(i) {
                    format_log_arg(p, st, pkt, data, a, &mut line);
                }
            }
            push_log(st, line);
        }
        Prim::Assert(c) | Prim::Assume(c) => {
            if eval(p, st, pkt, data, c) == 0 {
                st.stats.assert_failures += 1;
                pkt.flags.assert_failed = true;
                pkt.flags.exit = true;
                push_log(st, "assert/assume failed: packet discarded".to_string());
            }
        }
        Prim::Exit => pkt.flags.exit = true,
        Prim::Jump(_) | Prim::JumpIfZero(..) | Prim::NoOp => {}
        Prim::Extern(call) => crate::externs::exec(p, st, pkt, data, call),
    }
}

/// Runs a body of primitives following its jumps, untraced: a register action's
/// `apply`, a TNA deparser's statements.
pub fn run_body(p: &Program, st: &mut State, pkt: &mut Packet, data: &[u128], prims: &[Prim]) {
    let mut pc = 0;
    while let Some(prim) = prims.get(pc) {
        pc += 1;
        match prim {
            Prim::Jump(t) => pc = *t as usize,
            Prim::JumpIfZero(e, t) => {
                if eval(p, st, pkt, data, e) == 0 {
                    pc = *t as usize;
                }
            }
            _ => {
                exec_prim(p, st, pkt, data, prim);
                if pkt.flags.exit {
                    return;
                }
            }
        }
    }
}

/// Appends a line to the engine's log (bounded: the oldest half goes when it is full).
pub(crate) fn push_log(st: &mut State, line: String) {
    if st.log.len() >= MAX_LOG_LINES {
        st.log.drain(..MAX_LOG_LINES / 2);
    }
    st.log.push(line);
}

fn format_log_arg(
    p: &Program,
    st: &State,
    pkt: &Packet,
    data: &[u128],
    a: &LogArg,
    out: &mut String,
) {
    use std::fmt::Write;
    match a {
        LogArg::Value(e, signed) => {
            let v = eval(p, st, pkt, data, e);
            let _ = if *signed {
                write!(out, "{}", v as i128)
            } else {
                write!(out, "{v}")
            };
        }
        LogArg::Header(h) => {
            let hi = &p.headers[*h as usize];
            out.push('{');
            for k in 0..hi.num_fields {
                if k > 0 {
                    out.push_str(", ");
                }
                let f = hi.first_field + k;
                let fi = &p.fields[f as usize];
                let _ = match fi.wide {
                    // Wide values print in hex: no u128 holds them.
                    Some(at) => {
                        let at = at as usize;
                        let bytes = &pkt.phv.wide[at..at + fi.width.div_ceil(8) as usize];
                        out.push_str("0x");
                        bytes.iter().try_for_each(|b| write!(out, "{b:02x}"))
                    }
                    None => write!(out, "{}", pkt.phv.get(p, f)),
                };
            }
            out.push('}');
        }
        LogArg::List(items) => {
            out.push('{');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                format_log_arg(p, st, pkt, data, x, out);
            }
            out.push('}');
        }
    }
}
