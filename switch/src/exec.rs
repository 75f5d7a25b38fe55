//! Pipeline execution with simple_switch's v1model semantics: parser,
//! checksums, match-action controls, primitives and deparser. Everything
//! here works on indices resolved at load time and reuses scratch buffers.

use crate::bits::{
    get_bits, get_byte_field, is_byte_field, mask, put_bits, put_byte_field, sign_extend,
    BitReader, BitWriter,
};
use crate::hash::{csum16, identity, xor16, xor32, Crc, Rng};
use crate::packet::Packet;
use crate::program::*;
use crate::state::{CounterCell, MeterCell};
use crate::tables::{EntryAction, ProfileState, TableState};

/// Most parse states one packet may visit before the parser gives up
/// (protects against loops in the state graph).
const MAX_PARSE_STEPS: u32 = 4096;
/// Log lines kept in memory (oldest are dropped first).
const MAX_LOG_LINES: usize = 65536;

/// Counters of events the pipeline itself records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExecStats {
    /// Failed assert/assume calls.
    pub assert_failures: u64,
    /// Packets whose parser ended with an error.
    pub parser_errors: u64,
    /// Packets with a failed verify checksum.
    pub checksum_errors: u64,
}

/// Mutable run-time state of a loaded program.
#[derive(Debug, Clone)]
pub struct State {
    /// Match tables.
    pub tables: Vec<TableState>,
    /// Action profiles and selectors.
    pub profiles: Vec<ProfileState>,
    /// Indirect counter arrays.
    pub counters: Vec<Vec<CounterCell>>,
    /// Indirect meter arrays.
    pub meters: Vec<Vec<MeterCell>>,
    /// Register arrays.
    pub registers: Vec<Vec<u128>>,
    /// Parser value-set members (value, mask).
    pub vsets: Vec<Vec<(u128, u128)>>,
    /// Configurable CRC-16 for `crc16_custom`.
    pub crc16_custom: Crc,
    /// Configurable CRC-32 for `crc32_custom`.
    pub crc32_custom: Crc,
    crc16: Crc,
    crc32: Crc,
    crc_ccitt: Crc,
    // Counter of the `round_robin` "hash" (BMv2 increments it per call).
    round_robin: u64,
    /// Seeded generator for `random` and random hashes.
    pub rng: Rng,
    /// Port that means "drop" (simple_switch `--drop-port`, default 511).
    pub drop_port: u16,
    /// `log_msg` output.
    pub log: Vec<String>,
    /// Event counters.
    pub stats: ExecStats,
    pub(crate) fmask: Vec<u128>,
    key: Vec<u128>,
    key2: Vec<u128>,
    hbuf: Vec<u8>,
    adata: Vec<u128>,
    saved: Vec<u128>,
}

impl State {
    /// Fresh state for `p` (tables hold their const entries and default actions).
    pub fn new(p: &Program, seed: u64) -> Self {
        let mut tables = Vec::with_capacity(p.tables.len());
        for def in &p.tables {
            let mut t = TableState::default();
            if let Some((a, data, is_const)) = &def.default_entry {
                t.default = Some(EntryAction::Direct {
                    action: *a,
                    data: data.clone(),
                });
                t.default_const = *is_const;
            }
            for (keys, a, data, prio) in &def.const_entries {
                let e = crate::tables::Entry {
                    keys: keys.clone(),
                    priority: *prio,
                    action: EntryAction::Direct {
                        action: *a,
                        data: data.clone(),
                    },
                    counter: CounterCell::default(),
                    meter: MeterCell::default(),
                    is_const: true,
                };
                // Const entries were validated against the key at load time;
                // a clash (duplicate key) keeps the first, as the first match wins.
                let _ = t.add(def, e);
            }
            t.immutable = !def.const_entries.is_empty();
            tables.push(t);
        }
        State {
            tables,
            profiles: vec![ProfileState::default(); p.profiles.len()],
            counters: p
                .counters
                .iter()
                .map(|c| vec![CounterCell::default(); c.size])
                .collect(),
            meters: p
                .meters
                .iter()
                .map(|m| {
                    vec![MeterCell::default(); if m.direct_table.is_some() { 0 } else { m.size }]
                })
                .collect(),
            registers: p.registers.iter().map(|r| vec![0; r.size]).collect(),
            vsets: vec![vec![]; p.value_sets.len()],
            crc16_custom: Crc::crc16(),
            crc32_custom: Crc::crc32(),
            crc16: Crc::crc16(),
            crc32: Crc::crc32(),
            crc_ccitt: Crc::ccitt(),
            round_robin: 0,
            rng: Rng::new(seed),
            drop_port: 511,
            log: vec![],
            stats: ExecStats::default(),
            fmask: p.fields.iter().map(|f| mask(f.width)).collect(),
            key: Vec::with_capacity(16),
            key2: Vec::with_capacity(16),
            hbuf: Vec::with_capacity(2048),
            adata: Vec::with_capacity(16),
            saved: Vec::with_capacity(64),
        }
    }
}

/// Header instance a stack index refers to, if in range.
#[inline]
fn stack_elem(p: &Program, stack: u32, idx: u128) -> Option<HeaderId> {
    p.stacks[stack as usize]
        .headers
        .get(usize::try_from(idx).ok()?)
        .copied()
}

/// Evaluates an expression.
///
/// Constants, field reads and action parameters make up most nodes of a
/// program's expressions; they are answered here, inlined into the caller,
/// so only interior nodes pay for a call.
#[inline(always)]
pub fn eval(p: &Program, st: &State, pkt: &Packet, data: &[u128], e: &Expr) -> u128 {
    match e {
        Expr::Const(v) => *v,
        Expr::Field(f) => pkt.phv.get(p, *f),
        Expr::Local(i) => data.get(*i as usize).copied().unwrap_or(0),
        _ => eval_node(p, st, pkt, data, e),
    }
}

/// Evaluates an interior (or less common leaf) node of an expression.
fn eval_node(p: &Program, st: &State, pkt: &Packet, data: &[u128], e: &Expr) -> u128 {
    match e {
        Expr::Const(_) | Expr::Field(_) | Expr::Local(_) => eval(p, st, pkt, data, e),
        Expr::SignedField(f, w) => sign_extend(pkt.phv.get(p, *f), *w),
        Expr::Valid(h) => u128::from(pkt.phv.valid[*h as usize]),
        Expr::ValidUnion(u) => u128::from(
            p.unions[*u as usize]
                .headers
                .iter()
                .any(|h| pkt.phv.valid[*h as usize]),
        ),
        Expr::StackLast {
            stack,
            offset,
            width,
            signed,
        } => {
            let next = pkt.phv.stack_next[*stack as usize];
            let Some(h) = next
                .checked_sub(1)
                .and_then(|i| stack_elem(p, *stack, u128::from(i)))
            else {
                return 0;
            };
            let v = pkt.phv.get(p, p.headers[h as usize].first_field + offset);
            if *signed {
                sign_extend(v, *width)
            } else {
                v
            }
        }
        Expr::StackIndex {
            stack,
            index,
            offset,
            width,
            signed,
        } => {
            let Some(h) = stack_elem(p, *stack, eval(p, st, pkt, data, index)) else {
                return 0;
            };
            let v = pkt.phv.get(p, p.headers[h as usize].first_field + offset);
            if *signed {
                sign_extend(v, *width)
            } else {
                v
            }
        }
        Expr::UnionStackLast {
            ustack,
            member,
            offset,
            width,
            signed,
        } => {
            let next = pkt.phv.ustack_next[*ustack as usize];
            let unions = &p.union_stacks[*ustack as usize].unions;
            let Some(&u) = next.checked_sub(1).and_then(|i| unions.get(i as usize)) else {
                return 0;
            };
            let h = p.unions[u as usize].headers[*member as usize];
            let v = pkt.phv.get(p, p.headers[h as usize].first_field + offset);
            if *signed {
                sign_extend(v, *width)
            } else {
                v
            }
        }
        Expr::StackIndexValid { stack, index } => {
            stack_elem(p, *stack, eval(p, st, pkt, data, index))
                .map_or(0, |h| u128::from(pkt.phv.valid[h as usize]))
        }
        Expr::LastStackIndex(s) => u128::from(pkt.phv.stack_next[*s as usize].wrapping_sub(1)),
        Expr::SizeStack(s) => p.stacks[*s as usize].headers.len() as u128,
        Expr::Lookahead { offset, width } => {
            let start = pkt.cursor * 8 + *offset as usize;
            if start + *width as usize > pkt.data.len() * 8 {
                0
            } else {
                get_bits(&pkt.data, start, *width)
            }
        }
        Expr::Register { array, index } => {
            let i = eval(p, st, pkt, data, index);
            usize::try_from(i)
                .ok()
                .and_then(|i| st.registers[*array as usize].get(i).copied())
                .unwrap_or(0)
        }
        Expr::Bin(op, l, r) => {
            let a = eval(p, st, pkt, data, l);
            match op {
                BinOp::And => return u128::from(a != 0 && eval(p, st, pkt, data, r) != 0),
                BinOp::Or => return u128::from(a != 0 || eval(p, st, pkt, data, r) != 0),
                _ => {}
            }
            let b = eval(p, st, pkt, data, r);
            binop(*op, a, b)
        }
        Expr::Not(x) => u128::from(eval(p, st, pkt, data, x) == 0),
        Expr::BitNot(x) => !eval(p, st, pkt, data, x),
        Expr::Cond(c, a, b) => {
            if eval(p, st, pkt, data, c) != 0 {
                eval(p, st, pkt, data, a)
            } else {
                eval(p, st, pkt, data, b)
            }
        }
        Expr::TwoCompMod(x, w) => sign_extend(eval(p, st, pkt, data, x) & mask(*w), *w),
        Expr::SatCast(x, w) => {
            let v = eval(p, st, pkt, data, x) as i128;
            let w = (*w).clamp(1, 128);
            let (lo, hi) = if w == 128 {
                (i128::MIN, i128::MAX)
            } else {
                (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
            };
            v.clamp(lo, hi) as u128
        }
        Expr::USatCast(x, w) => {
            let v = eval(p, st, pkt, data, x);
            if (v as i128) < 0 {
                0
            } else {
                v.min(mask(*w))
            }
        }
        Expr::D2B(x) => u128::from(eval(p, st, pkt, data, x) != 0),
        Expr::VarbitEq(a, b) => u128::from(varbit_bytes(p, pkt, *a) == varbit_bytes(p, pkt, *b)),
        Expr::WideEq(ops) => u128::from(crate::wide::eq(p, st, pkt, data, &ops.0, &ops.1)),
        Expr::WidePart { at, len } => {
            crate::wide::be_int(&pkt.phv.wide[*at as usize..(*at + *len) as usize])
        }
    }
}

/// A varbit field's current bytes (its slot holds the length in bits).
fn varbit_bytes<'a>(p: &Program, pkt: &'a Packet, f: FieldId) -> &'a [u8] {
    let header = &p.headers[p.fields[f as usize].header as usize];
    let Some((_, slot)) = header.varbit else {
        return &[];
    };
    let bytes = &pkt.phv.varbits[slot as usize];
    &bytes[..(pkt.phv.fields[f as usize] / 8).min(bytes.len() as u64) as usize]
}

#[inline(always)]
pub(crate) fn binop(op: BinOp, a: u128, b: u128) -> u128 {
    match op {
        BinOp::Add => a.wrapping_add(b),
        BinOp::Sub => a.wrapping_sub(b),
        BinOp::Mul => a.wrapping_mul(b),
        BinOp::Div => a.checked_div(b).unwrap_or(0),
        BinOp::Mod => a.checked_rem(b).unwrap_or(0),
        BinOp::Shl => {
            if b >= 128 {
                0
            } else {
                a << b
            }
        }
        BinOp::Shr => {
            if b >= 128 {
                0
            } else {
                a >> b
            }
        }
        BinOp::Sar => ((a as i128) >> b.min(127)) as u128,
        BinOp::Eq => u128::from(a == b),
        BinOp::Ne => u128::from(a != b),
        BinOp::Lt => u128::from(a < b),
        BinOp::Le => u128::from(a <= b),
        BinOp::Gt => u128::from(a > b),
        BinOp::Ge => u128::from(a >= b),
        BinOp::SLt => u128::from((a as i128) < (b as i128)),
        BinOp::SLe => u128::from((a as i128) <= (b as i128)),
        BinOp::SGt => u128::from((a as i128) > (b as i128)),
        BinOp::SGe => u128::from((a as i128) >= (b as i128)),
        BinOp::BitAnd => a & b,
        BinOp::BitOr => a | b,
        BinOp::BitXor => a ^ b,
        BinOp::And => u128::from(a != 0 && b != 0),
        BinOp::Or => u128::from(a != 0 || b != 0),
    }
}

/// Field slot an lvalue designates now, if any.
#[inline(always)]
fn lvalue_slot(
    p: &Program,
    st: &State,
    pkt: &Packet,
    data: &[u128],
    lv: &LValue,
) -> Option<FieldId> {
    match lv {
        LValue::Field(f) => Some(*f),
        _ => stack_slot(p, st, pkt, data, lv),
    }
}

/// Field slot of a stack element's field an lvalue designates now, if any.
fn stack_slot(
    p: &Program,
    st: &State,
    pkt: &Packet,
    data: &[u128],
    lv: &LValue,
) -> Option<FieldId> {
    match lv {
        LValue::Field(f) => Some(*f),
        LValue::StackLast { stack, offset } => {
            let next = pkt.phv.stack_next[*stack as usize];
            let h = stack_elem(p, *stack, u128::from(next.checked_sub(1)?))?;
            Some(p.headers[h as usize].first_field + offset)
        }
        LValue::StackIndex {
            stack,
            index,
            offset,
        } => {
            let h = stack_elem(p, *stack, eval(p, st, pkt, data, index))?;
            Some(p.headers[h as usize].first_field + offset)
        }
    }
}

/// Stores `v` (truncated to the field width) into an lvalue.
#[inline]
pub fn store(p: &Program, st: &State, pkt: &mut Packet, data: &[u128], lv: &LValue, v: u128) {
    if let Some(f) = lvalue_slot(p, st, pkt, data, lv) {
        pkt.phv.set(p, f, v & st.fmask[f as usize]);
    }
}

fn header_of(
    p: &Program,
    st: &State,
    pkt: &Packet,
    data: &[u128],
    r: &HeaderRef,
) -> Option<HeaderId> {
    match r {
        HeaderRef::Fixed(h) => Some(*h),
        HeaderRef::StackIndex { stack, index } => {
            stack_elem(p, *stack, eval(p, st, pkt, data, index))
        }
    }
}

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

fn set_valid(p: &Program, pkt: &mut Packet, h: HeaderId) {
    if let Some(u) = p.headers[h as usize].union {
        for &m in &p.unions[u as usize].headers {
            if m != h {
                pkt.phv.valid[m as usize] = false;
            }
        }
    }
    pkt.phv.valid[h as usize] = true;
}

/// Executes an action body (through its straight-line form, see [`crate::flat`]).
#[inline]
pub fn exec_action(p: &Program, st: &mut State, pkt: &mut Packet, action: u32, data: &[u128]) {
    crate::flat::run_action(p, st, pkt, action, data);
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

/// Appends a field's wire form: a varbit field's slot holds its length in
/// bits, so its bytes come from the header's varbit buffer instead.
#[inline]
fn emit_field(p: &Program, pkt: &Packet, f: FieldId, w: &mut BitWriter<'_>) {
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
fn emit_header(p: &Program, pkt: &Packet, h: HeaderId, w: &mut BitWriter<'_>) {
    let hi = &p.headers[h as usize];
    let fields = hi.first_field as usize..(hi.first_field + hi.num_fields) as usize;
    if hi.packed
        && w.push_packed(hi.fixed_bits as usize / 8, |buf| {
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

/// Computes a calculation (hash or checksum) over the packet.
pub fn calc_value(p: &Program, st: &mut State, pkt: &Packet, c: &Calculation) -> u64 {
    let mut buf = std::mem::take(&mut st.hbuf);
    buf.clear();
    let mut w = BitWriter::new(&mut buf);
    let packed = match &c.packed {
        // Fields of an invalid header are skipped: with it, all of them.
        Some(pk) if !pkt.phv.valid[pk.header as usize] => true,
        Some(pk) => w.push_packed(pk.bytes as usize, |b| {
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
        match inp {
            CalcInput::Field(f) => {
                let fi = &p.fields[*f as usize];
                // Fields of invalid headers are skipped, as BMv2 does.
                if pkt.phv.valid[fi.header as usize] {
                    emit_field(p, pkt, *f, &mut w);
                }
            }
            CalcInput::Const(v, width) => w.push(*width, *v),
            CalcInput::Header(h) => {
                if pkt.phv.valid[*h as usize] {
                    emit_header(p, pkt, *h, &mut w);
                }
            }
            CalcInput::Payload => {
                w.finish();
                w.push_bytes(&pkt.data[pkt.cursor.min(pkt.data.len())..]);
            }
        }
    }
    w.finish();
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
        HashAlgo::RoundRobin => {
            st.round_robin = st.round_robin.wrapping_add(1);
            st.round_robin - 1
        }
    };
    st.hbuf = buf;
    v
}

enum ParseOutcome {
    Done,
    Error(u32),
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
    let mut off = start;
    let first = hi.first_field as usize;
    for (k, wf) in p.wire[first..first + hi.num_fields as usize]
        .iter()
        .enumerate()
    {
        let f = first + k;
        match wf.kind {
            WireKind::Plain => {
                let whole_bytes = off.is_multiple_of(8) && is_byte_field(0, wf.width);
                match whole_bytes
                    .then(|| get_byte_field(&pkt.data, off, wf.width))
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

fn run_parser(p: &Program, st: &mut State, pkt: &mut Packet) -> ParseOutcome {
    let ec = p.error_codes;
    let mut state = p.init_state;
    let mut steps = 0;
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
        for op in &s.ops {
            let r = match op {
                ParserOp::Extract(t) => extract_target(p, pkt, t, None),
                ParserOp::ExtractVl(t, len) => {
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

/// Parses the packet and verifies checksums, recording errors in
/// `standard_metadata` (packets are not dropped for them).
pub fn parse(p: &Program, st: &mut State, pkt: &mut Packet) {
    pkt.cursor = 0;
    if let ParseOutcome::Error(code) = run_parser(p, st, pkt) {
        st.stats.parser_errors += 1;
        if let Some(f) = p.std.parser_error {
            pkt.phv.set(p, f, u128::from(code));
        }
    }
    let mut bad = false;
    for c in p.checksums.iter().filter(|c| c.verify) {
        if c.cond
            .as_ref()
            .is_some_and(|e| eval(p, st, pkt, &[], e) == 0)
        {
            continue;
        }
        let v = u128::from(calc_value(p, st, pkt, &p.calculations[c.calc as usize]));
        if v & st.fmask[c.target as usize] != pkt.phv.get(p, c.target) {
            bad = true;
        }
    }
    if bad {
        st.stats.checksum_errors += 1;
        if let Some(f) = p.std.checksum_error {
            pkt.phv.set(p, f, 1);
        }
    }
}

/// An entry's action as plain ids, so resolving it borrows nothing.
#[derive(Clone, Copy)]
enum Target {
    Action(u32),
    Member(u32),
    Group(u32),
}

/// Copies a direct entry's data into the action-data scratch and returns its target.
fn entry_target(ea: &EntryAction, adata: &mut Vec<u128>) -> Target {
    adata.clear();
    match ea {
        EntryAction::Direct { action, data } => {
            adata.extend_from_slice(data);
            Target::Action(*action)
        }
        EntryAction::Member(m) => Target::Member(*m),
        EntryAction::Group(g) => Target::Group(*g),
    }
}

/// Resolves a target to an action; a member's or group's data goes into the scratch.
#[inline]
fn resolve_action(
    p: &Program,
    st: &mut State,
    pkt: &Packet,
    t: u32,
    target: Target,
) -> Option<u32> {
    match target {
        Target::Action(a) => Some(a),
        Target::Member(m) => member_action(p, st, t, m),
        Target::Group(g) => group_action(p, st, pkt, t, g),
    }
}

/// A selector group's member for this packet (by the selector's hash), resolved.
fn group_action(p: &Program, st: &mut State, pkt: &Packet, t: u32, g: u32) -> Option<u32> {
    let prof = p.tables[t as usize].profile? as usize;
    let n = st.profiles[prof].groups.get(&g)?.len();
    if n == 0 {
        return None;
    }
    let h = match &p.profiles[prof].selector {
        Some(sel) => calc_value(p, st, pkt, sel),
        None => 0,
    };
    let member = st.profiles[prof].groups.get(&g)?[(h % n as u64) as usize];
    member_action(p, st, t, member)
}

/// An action profile member's action, its data copied into the scratch.
fn member_action(p: &Program, st: &mut State, t: u32, member: u32) -> Option<u32> {
    let prof = p.tables[t as usize].profile? as usize;
    let (a, data) = st.profiles[prof].members.get(&member)?;
    st.adata.clear();
    st.adata.extend_from_slice(data);
    Some(*a)
}

/// Applies a table: lookup, direct counter/meter, action; returns the next node.
pub fn apply_table(p: &Program, st: &mut State, pkt: &mut Packet, t: u32) -> Option<Node> {
    let def = &p.tables[t as usize];
    let state = &st.tables[t as usize];
    let keyless_miss = def.keys.is_empty() && state.is_empty();
    let hit = if keyless_miss {
        None
    } else {
        let mut key = std::mem::take(&mut st.key);
        key.clear();
        for k in &def.keys {
            let mut v = eval(p, st, pkt, &[], &k.expr);
            if let Some(m) = k.mask {
                v &= m;
            }
            key.push(v & mask(k.width));
        }
        let hit = st.tables[t as usize].lookup(def, &key, &mut st.key2);
        st.key = key;
        hit
    };
    let (action, is_hit) = match hit {
        Some(h) => {
            let now = pkt.now;
            let len = u64::from(pkt.ingress_len);
            let entry = st.tables[t as usize].entry_mut(h)?;
            if def.with_counters {
                entry.counter.count(len);
            }
            let colour = def.direct_meter.map(|(m, target)| {
                let units = if p.meters[m as usize].bytes { len } else { 1 };
                (entry.meter.execute(units, now), target)
            });
            let target = entry_target(&entry.action, &mut st.adata);
            if let Some((c, Some(f))) = colour {
                pkt.phv.set(p, f, c & st.fmask[f as usize]);
            }
            (resolve_action(p, st, pkt, t, target), true)
        }
        None => match &st.tables[t as usize].default {
            Some(ea) => {
                let target = entry_target(ea, &mut st.adata);
                (resolve_action(p, st, pkt, t, target), false)
            }
            None => (None, false),
        },
    };
    if let Some(a) = action {
        let data = std::mem::take(&mut st.adata);
        exec_action(p, st, pkt, a, &data);
        st.adata = data;
    }
    match def.hit_miss {
        Some((h, m)) => {
            if is_hit {
                h
            } else {
                m
            }
        }
        None => action.map_or(def.base_default_next, |a| def.next_by_action[a as usize]),
    }
}

/// Updates checksums, runs the deparser's primitives and deparses into
/// `pkt.out` (valid headers in order, then the unparsed payload), applying
/// truncation. `pkt.data` is spent afterwards: when the headers take the
/// bytes the parser consumed, they are written over them and the frame
/// buffer becomes `pkt.out`, so the payload is not copied.
pub fn deparse(p: &Program, st: &mut State, pkt: &mut Packet) {
    for c in p.checksums.iter().filter(|c| c.update) {
        if c.cond
            .as_ref()
            .is_some_and(|e| eval(p, st, pkt, &[], e) == 0)
        {
            continue;
        }
        let v = u128::from(calc_value(p, st, pkt, &p.calculations[c.calc as usize]));
        pkt.phv.set(p, c.target, v & st.fmask[c.target as usize]);
    }
    for prim in &p.deparser_prims {
        exec_prim(p, st, pkt, &[], prim);
    }
    let mut out = std::mem::take(&mut pkt.out);
    out.clear();
    let mut w = BitWriter::new(&mut out);
    for &h in &p.deparse_order {
        if pkt.phv.valid[h as usize] {
            emit_header(p, pkt, h, &mut w);
        }
    }
    w.finish();
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
}

/// Saves the values of a preservation field list into `st`'s scratch.
pub fn save_field_list(p: &Program, st: &mut State, pkt: &Packet, list: u32) {
    st.saved.clear();
    if let Some(fl) = p.field_lists.get(&list) {
        st.saved
            .extend(fl.fields.iter().map(|f| pkt.phv.get(p, *f)));
    }
}

/// Restores the values saved by [`save_field_list`] into `pkt`.
pub fn restore_field_list(p: &Program, st: &State, pkt: &mut Packet, list: u32) {
    if let Some(fl) = p.field_lists.get(&list) {
        for (f, v) in fl.fields.iter().zip(&st.saved) {
            pkt.phv.set(p, *f, *v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_calculation_inputs_hash_as_the_bit_writer_does() {
        let p = crate::load::load(include_str!("../../sim/tests/fixtures/forward.json"))
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

    #[test]
    fn signed_operators_use_twos_complement() {
        let m5 = sign_extend(0xfb, 8); // -5 as int<8>
        assert_eq!(binop(BinOp::SLt, m5, 3), 1);
        assert_eq!(binop(BinOp::Lt, m5, 3), 0);
        assert_eq!(binop(BinOp::Sar, m5, 1) as i128, -3);
        assert_eq!(binop(BinOp::Shr, 0xf0, 4), 0x0f);
        assert_eq!(binop(BinOp::Shl, 1, 200), 0);
        assert_eq!(binop(BinOp::Div, 7, 0), 0);
        assert_eq!(binop(BinOp::Sub, 1, 2) & 0xff, 0xff);
    }
}
