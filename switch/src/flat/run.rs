//! Running the straight-line form, and the ops native code leaves to it.

use super::{r, Code, DataRef, Op, REGS};
use crate::bits::{mask, sign_extend};
use crate::exec::{apply_table, binop, eval, exec_prim, State};
use crate::packet::Packet;
use crate::program::{BinOp, Node, Program};

/// Runs one action's straight-line form with its data (as native code when
/// it was compiled).
pub fn run_action(p: &Program, st: &mut State, pkt: &mut Packet, action: u32, data: &[u128]) {
    if let Some(code) = p.flat.actions.get(action as usize) {
        if !crate::jit::run(p, st, pkt, code, data, 0) {
            run(p, st, pkt, code, data, 0);
        }
    }
}

/// Runs a control's straight-line form (`exit` stops it; the flag is
/// cleared on the way out, as the control ends there).
pub fn run_control(p: &Program, st: &mut State, pkt: &mut Packet, code: &Code) {
    if !crate::jit::run(p, st, pkt, code, &[], 1) {
        run(p, st, pkt, code, &[], 1);
    }
    pkt.flags.exit = false;
}

/// Whether a checksum's condition holds: runs its block (see
/// [`super::Flat::conditions`]), which exits when it does, leaving the
/// packet's own `exit` as it was.
pub fn holds(p: &Program, st: &mut State, pkt: &mut Packet, code: &Code) -> bool {
    let exit = std::mem::replace(&mut pkt.flags.exit, false);
    if !crate::jit::run(p, st, pkt, code, &[], 0) {
        run(p, st, pkt, code, &[], 0);
    }
    std::mem::replace(&mut pkt.flags.exit, exit)
}

/// Runs `code` from `pc` until `End`, or until `exit` is set.
pub(super) fn run(
    p: &Program,
    st: &mut State,
    pkt: &mut Packet,
    code: &Code,
    data: &[u128],
    pc: usize,
) {
    run_from(p, st, pkt, code, data, [0; REGS], pc);
}

/// Action data of a fallback op: the call's, or data fixed at load time.
#[inline(always)]
fn data_of<'a>(code: &'a Code, data: &'a [u128], d: DataRef) -> &'a [u128] {
    match d {
        DataRef::Call => data,
        DataRef::Fixed(i) => code.data.get(i as usize).map_or(&[], Vec::as_slice),
    }
}

/// Constant `i` of `code`.
#[inline(always)]
fn konst(code: &Code, i: u32) -> u128 {
    code.consts.get(i as usize).copied().unwrap_or(0)
}

/// Cell `i` of register array `array` (0 out of range).
#[inline(always)]
fn register_get(st: &State, array: u32, i: u128) -> u128 {
    usize::try_from(i)
        .ok()
        .and_then(|i| st.registers[array as usize].get(i).copied())
        .unwrap_or(0)
}

/// `f = register[i]`; an index out of range leaves `f` as it is.
#[inline(always)]
fn register_read(st: &State, pkt: &mut Packet, f: u32, array: u32, i: u128) {
    if let Some(v) = usize::try_from(i)
        .ok()
        .and_then(|i| st.registers[array as usize].get(i).copied())
    {
        pkt.phv.fields[f as usize] = (v & st.fmask[f as usize]) as u64;
    }
}

/// `f =` a uniform value in `[lo, hi]` (as the `random` primitive draws
/// it), nothing when `lo > hi`.
#[inline(always)]
fn random(st: &mut State, pkt: &mut Packet, f: u32, lo: u128, hi: u128) {
    if lo <= hi {
        let v = st.rng.range(lo, hi);
        pkt.phv.fields[f as usize] = (v & st.fmask[f as usize]) as u64;
    }
}

/// `register[i] = v` cut to the cell's width; an index out of range writes nothing.
#[inline(always)]
fn register_write(p: &Program, st: &mut State, array: u32, i: u128, v: u128) {
    let v = v & mask(p.registers[array as usize].width);
    if let Some(cell) = usize::try_from(i)
        .ok()
        .and_then(|i| st.registers[array as usize].get_mut(i))
    {
        *cell = v;
    }
}

/// Counts the packet in cell `i` of counter array `array`.
#[inline(always)]
fn count(st: &mut State, pkt: &Packet, array: u32, i: u128) {
    if let Some(c) = usize::try_from(i)
        .ok()
        .and_then(|i| st.counters[array as usize].get_mut(i))
    {
        c.count(u64::from(pkt.ingress_len));
    }
}

/// Applies a table; the label to continue at, or None when `exit` stops the code.
#[inline(always)]
fn table(p: &Program, st: &mut State, pkt: &mut Packet, code: &Code, t: u32) -> Option<usize> {
    let next = apply_table::<false>(p, st, pkt, t);
    if pkt.flags.exit {
        return None;
    }
    Some(match next {
        None => 0,
        Some(Node::Table(t)) => code.table_labels[t as usize] as usize,
        Some(Node::Cond(c)) => code.cond_labels[c as usize] as usize,
    })
}

/// Where code continues after an op run for native code.
pub(crate) enum Next {
    /// At this op.
    At(usize),
    /// Nowhere: `exit` was set.
    Stop,
    /// The op is not one native code leaves to the interpreter.
    NotLeft,
}

/// Runs the op at `pc` that native code leaves to the interpreter (tables,
/// primitives, trees, division; register arrays and counters only where
/// native code cannot reach their cells) on the register file `regs`.
pub(crate) fn step(
    p: &Program,
    st: &mut State,
    pkt: &mut Packet,
    code: &Code,
    data: &[u128],
    regs: &mut [u128; REGS],
    pc: usize,
) -> Next {
    let Some(op) = code.ops.get(pc) else {
        return Next::NotLeft;
    };
    let field = |pkt: &Packet, f: u32| u128::from(pkt.phv.fields[f as usize]);
    match *op {
        Op::Eval { d, e, data: dr } => {
            if let Some(e) = code.exprs.get(e as usize) {
                regs[r(d)] = eval(p, st, pkt, data_of(code, data, dr), e);
            }
        }
        Op::Bin { op, d } => regs[r(d)] = binop(op, regs[r(d)], regs[r(d + 1)]),
        Op::BinK { op, d, k } => regs[r(d)] = binop(op, regs[r(d)], konst(code, k)),
        Op::BinF { op, d, f } => regs[r(d)] = binop(op, regs[r(d)], field(pkt, f)),
        Op::FieldBinK { op, d, f, k } => regs[r(d)] = binop(op, field(pkt, f), konst(code, k)),
        Op::RegisterGet { d, array } => regs[r(d)] = register_get(st, array, regs[r(d)]),
        Op::RegisterRead { f, array, a } => register_read(st, pkt, f, array, regs[r(a)]),
        Op::RegisterReadF { f, array, index } => {
            let i = field(pkt, index);
            register_read(st, pkt, f, array, i);
        }
        Op::RegisterWrite { array, a } => register_write(p, st, array, regs[r(a)], regs[r(a + 1)]),
        Op::Count { array, a } => count(st, pkt, array, regs[r(a)]),
        Op::Random { f, a } => random(st, pkt, f, regs[r(a)], regs[r(a + 1)]),
        Op::Prim { p: i, data: dr } => {
            if let Some(prim) = code.prims.get(i as usize) {
                exec_prim(p, st, pkt, data_of(code, data, dr), prim);
                if pkt.flags.exit {
                    return Next::Stop;
                }
            }
        }
        Op::Table { table: t } => {
            return table(p, st, pkt, code, t).map_or(Next::Stop, Next::At);
        }
        _ => return Next::NotLeft,
    }
    Next::At(pc + 1)
}

/// Whether native code leaves a binary operator to the interpreter (128-bit
/// division has no instruction).
pub(crate) fn left_to_interpreter(op: BinOp) -> bool {
    matches!(op, BinOp::Div | BinOp::Mod)
}

/// Runs `code` from `pc` with the register file `regs` until `End`, or
/// until `exit` is set.
#[inline(always)]
pub(crate) fn run_from(
    p: &Program,
    st: &mut State,
    pkt: &mut Packet,
    code: &Code,
    data: &[u128],
    mut regs: [u128; REGS],
    mut pc: usize,
) {
    let k = |i: u32| konst(code, i);
    while let Some(op) = code.ops.get(pc) {
        pc += 1;
        match *op {
            Op::Const { d, k: i } => regs[r(d)] = k(i),
            Op::Field { d, f } => regs[r(d)] = u128::from(pkt.phv.fields[f as usize]),
            Op::SignedField { d, f, w } => {
                regs[r(d)] = sign_extend(u128::from(pkt.phv.fields[f as usize]), u32::from(w));
            }
            Op::Local { d, i } => regs[r(d)] = data.get(usize::from(i)).copied().unwrap_or(0),
            Op::Valid { d, h } => regs[r(d)] = u128::from(pkt.phv.valid[h as usize]),
            Op::Bin { op, d } => regs[r(d)] = binop(op, regs[r(d)], regs[r(d + 1)]),
            Op::BinK { op, d, k: i } => regs[r(d)] = binop(op, regs[r(d)], k(i)),
            Op::BinF { op, d, f } => {
                regs[r(d)] = binop(op, regs[r(d)], u128::from(pkt.phv.fields[f as usize]));
            }
            Op::FieldBinK { op, d, f, k: i } => {
                regs[r(d)] = binop(op, u128::from(pkt.phv.fields[f as usize]), k(i));
            }
            Op::AndK { d, k: i } => regs[r(d)] &= k(i),
            Op::AddF { d, f } => {
                regs[r(d)] = regs[r(d)].wrapping_add(u128::from(pkt.phv.fields[f as usize]));
            }
            Op::SubF { d, f } => {
                regs[r(d)] = regs[r(d)].wrapping_sub(u128::from(pkt.phv.fields[f as usize]));
            }
            Op::FieldEqK { d, f, k: i } => {
                regs[r(d)] = u128::from(u128::from(pkt.phv.fields[f as usize]) == k(i));
            }
            Op::JumpUnlessFieldEqK { f, k: i, t } => {
                if u128::from(pkt.phv.fields[f as usize]) != k(i) {
                    pc = t as usize;
                }
            }
            Op::JumpUnlessFieldNeK { f, k: i, t } => {
                if u128::from(pkt.phv.fields[f as usize]) == k(i) {
                    pc = t as usize;
                }
            }
            Op::AndSkip { d, t } => {
                if regs[r(d)] == 0 {
                    pc = t as usize;
                }
            }
            Op::OrSkip { d, t } => {
                if regs[r(d)] != 0 {
                    regs[r(d)] = 1;
                    pc = t as usize;
                }
            }
            Op::Not { d } => regs[r(d)] = u128::from(regs[r(d)] == 0),
            Op::BitNot { d } => regs[r(d)] = !regs[r(d)],
            Op::D2B { d } => regs[r(d)] = u128::from(regs[r(d)] != 0),
            Op::TwoCompMod { d, w } => {
                let w = u32::from(w);
                regs[r(d)] = sign_extend(regs[r(d)] & mask(w), w);
            }
            Op::SatCast { d, w } => {
                let v = regs[r(d)] as i128;
                let w = u32::from(w).clamp(1, 128);
                let (lo, hi) = if w == 128 {
                    (i128::MIN, i128::MAX)
                } else {
                    (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
                };
                regs[r(d)] = v.clamp(lo, hi) as u128;
            }
            Op::USatCast { d, w } => {
                let v = regs[r(d)];
                regs[r(d)] = if (v as i128) < 0 {
                    0
                } else {
                    v.min(mask(u32::from(w)))
                };
            }
            Op::RegisterGet { d, array } => regs[r(d)] = register_get(st, array, regs[r(d)]),
            Op::Eval { d, e, data: dr } => {
                if let Some(e) = code.exprs.get(e as usize) {
                    regs[r(d)] = eval(p, st, pkt, data_of(code, data, dr), e);
                }
            }
            Op::Store { f, a } => {
                pkt.phv.fields[f as usize] = (regs[r(a)] & st.fmask[f as usize]) as u64;
            }
            Op::StoreConst { f, k: i } => pkt.phv.fields[f as usize] = k(i) as u64,
            Op::StoreConsts { at, n } => {
                let (at, n) = (at as usize, n as usize);
                for &(f, v) in code.stores.get(at..at + n).unwrap_or(&[]) {
                    pkt.phv.fields[f as usize] = v as u64;
                }
            }
            Op::StoreLocals { at, n } => {
                let (at, n) = (at as usize, n as usize);
                for &(f, i) in code.locals.get(at..at + n).unwrap_or(&[]) {
                    let v = data.get(usize::from(i)).copied().unwrap_or(0);
                    pkt.phv.fields[f as usize] = (v & st.fmask[f as usize]) as u64;
                }
            }
            Op::StoreLocal { f, i } => {
                let v = data.get(usize::from(i)).copied().unwrap_or(0);
                pkt.phv.fields[f as usize] = (v & st.fmask[f as usize]) as u64;
            }
            Op::Copy { f, src } => {
                pkt.phv.fields[f as usize] =
                    (u128::from(pkt.phv.fields[src as usize]) & st.fmask[f as usize]) as u64;
            }
            Op::RegisterRead { f, array, a } => register_read(st, pkt, f, array, regs[r(a)]),
            Op::RegisterReadF { f, array, index } => {
                let i = u128::from(pkt.phv.fields[index as usize]);
                register_read(st, pkt, f, array, i);
            }
            Op::RegisterWrite { array, a } => {
                register_write(p, st, array, regs[r(a)], regs[r(a + 1)]);
            }
            Op::Count { array, a } => count(st, pkt, array, regs[r(a)]),
            Op::Random { f, a } => random(st, pkt, f, regs[r(a)], regs[r(a + 1)]),
            Op::Jump { t } => pc = t as usize,
            Op::JumpIfZero { a, t } => {
                if regs[r(a)] == 0 {
                    pc = t as usize;
                }
            }
            Op::JumpIfNonZero { a, t } => {
                if regs[r(a)] != 0 {
                    pc = t as usize;
                }
            }
            Op::JumpUnlessK { op, a, k: i, t } => {
                if binop(op, regs[r(a)], k(i)) == 0 {
                    pc = t as usize;
                }
            }
            Op::JumpUnlessFK { op, f, k: i, t } => {
                if binop(op, u128::from(pkt.phv.fields[f as usize]), k(i)) == 0 {
                    pc = t as usize;
                }
            }
            Op::JumpIfValid { h, valid, t } => {
                if pkt.phv.valid[h as usize] == valid {
                    pc = t as usize;
                }
            }
            Op::Prim { p: i, data: dr } => {
                if let Some(prim) = code.prims.get(i as usize) {
                    exec_prim(p, st, pkt, data_of(code, data, dr), prim);
                    if pkt.flags.exit {
                        return;
                    }
                }
            }
            Op::Exit => {
                pkt.flags.exit = true;
                return;
            }
            Op::Inline { table, t } => {
                if !st.tables[table as usize].is_empty() {
                    pc = t as usize;
                }
            }
            Op::Table { table: t } => match table(p, st, pkt, code, t) {
                Some(next) => pc = next,
                None => return,
            },
            Op::End => return,
        }
    }
}
