//! Expressions and stores: evaluating an expression tree on a packet, and
//! writing a value through an lvalue.

use super::State;
use crate::bits::{get_bits, mask, sign_extend};
use crate::packet::Packet;
use crate::program::*;

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
/// Constants, field reads, action parameters and validity make up most nodes of a
/// program's expressions; they are answered here, inlined into the caller,
/// so only interior nodes pay for a call.
#[inline(always)]
pub fn eval(p: &Program, st: &State, pkt: &Packet, data: &[u128], e: &Expr) -> u128 {
    match e {
        Expr::Const(v) => *v,
        Expr::Field(f) => pkt.phv.get(p, *f),
        Expr::Local(i) => data.get(*i as usize).copied().unwrap_or(0),
        Expr::Valid(h) => u128::from(pkt.phv.valid[*h as usize]),
        _ => eval_node(p, st, pkt, data, e),
    }
}

/// Evaluates an interior (or less common leaf) node of an expression.
fn eval_node(p: &Program, st: &State, pkt: &Packet, data: &[u128], e: &Expr) -> u128 {
    match e {
        Expr::Const(_) | Expr::Field(_) | Expr::Local(_) | Expr::Valid(_) => {
            eval(p, st, pkt, data, e)
        }
        Expr::SignedField(f, w) => sign_extend(pkt.phv.get(p, *f), *w),
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

pub(super) fn header_of(
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

#[cfg(test)]
mod tests {
    use super::*;

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
