//! Arithmetic on the flat code's 128-bit registers, as the interpreter
//! ([`crate::flat`]) computes it: constants, truth values, operators,
//! sign extension and saturating casts.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};

use super::Tr;
use crate::program::BinOp;

impl Tr<'_, '_> {
    /// A 128-bit constant.
    pub(super) fn k128(&mut self, v: u128) -> Value {
        let lo = self.b.ins().iconst(types::I64, v as u64 as i64);
        if v >> 64 == 0 {
            self.b.ins().uextend(types::I128, lo)
        } else {
            let hi = self.b.ins().iconst(types::I64, (v >> 64) as u64 as i64);
            self.b.ins().iconcat(lo, hi)
        }
    }

    /// `v != 0` as a branch condition.
    pub(super) fn nonzero(&mut self, v: Value) -> Value {
        let z = self.k128(0);
        self.b.ins().icmp(IntCC::NotEqual, v, z)
    }

    /// A 0/1 condition as a 128-bit value.
    pub(super) fn bool128(&mut self, c: Value) -> Value {
        self.b.ins().uextend(types::I128, c)
    }

    /// `c ? x : y` on 128 bits, without a `select`: Cranelift's mid-end turns
    /// a select over a compare into `umin`/`smin`, which its x64 back end
    /// has no 128-bit lowering for.
    pub(super) fn choose(&mut self, c: Value, x: Value, y: Value) -> Value {
        let c = self.bool128(c);
        let all = self.b.ins().ineg(c);
        let diff = self.b.ins().bxor(x, y);
        let diff = self.b.ins().band(diff, all);
        self.b.ins().bxor(y, diff)
    }

    /// `x op y` on 128 bits as the interpreter computes it; None for the
    /// operators left to it.
    pub(super) fn binop(&mut self, op: BinOp, x: Value, y: Value) -> Option<Value> {
        let cmp = |t: &mut Self, cc| {
            let c = t.b.ins().icmp(cc, x, y);
            t.bool128(c)
        };
        Some(match op {
            BinOp::Add => self.b.ins().iadd(x, y),
            BinOp::Sub => self.b.ins().isub(x, y),
            BinOp::Mul => self.b.ins().imul(x, y),
            BinOp::Div | BinOp::Mod => return None,
            BinOp::Shl | BinOp::Shr => {
                let big = self.k128(128);
                let big = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, y, big);
                let s = self.b.ins().ireduce(types::I64, y);
                let v = if op == BinOp::Shl {
                    self.b.ins().ishl(x, s)
                } else {
                    self.b.ins().ushr(x, s)
                };
                let z = self.k128(0);
                self.choose(big, z, v)
            }
            BinOp::Sar => {
                let most = self.k128(127);
                let big = self.b.ins().icmp(IntCC::UnsignedGreaterThan, y, most);
                let s = self.choose(big, most, y);
                let s = self.b.ins().ireduce(types::I64, s);
                self.b.ins().sshr(x, s)
            }
            BinOp::Eq => cmp(self, IntCC::Equal),
            BinOp::Ne => cmp(self, IntCC::NotEqual),
            BinOp::Lt => cmp(self, IntCC::UnsignedLessThan),
            BinOp::Le => cmp(self, IntCC::UnsignedLessThanOrEqual),
            BinOp::Gt => cmp(self, IntCC::UnsignedGreaterThan),
            BinOp::Ge => cmp(self, IntCC::UnsignedGreaterThanOrEqual),
            BinOp::SLt => cmp(self, IntCC::SignedLessThan),
            BinOp::SLe => cmp(self, IntCC::SignedLessThanOrEqual),
            BinOp::SGt => cmp(self, IntCC::SignedGreaterThan),
            BinOp::SGe => cmp(self, IntCC::SignedGreaterThanOrEqual),
            BinOp::And | BinOp::Or => {
                let (a, b) = (self.nonzero(x), self.nonzero(y));
                let c = if op == BinOp::And {
                    self.b.ins().band(a, b)
                } else {
                    self.b.ins().bor(a, b)
                };
                self.bool128(c)
            }
            BinOp::BitAnd => self.b.ins().band(x, y),
            BinOp::BitOr => self.b.ins().bor(x, y),
            BinOp::BitXor => self.b.ins().bxor(x, y),
        })
    }

    /// `binop` where the interpreter would never leave the operator to itself.
    pub(super) fn binop_inline(&mut self, op: BinOp, x: Value, y: Value) -> Result<Value, String> {
        self.binop(op, x, y)
            .ok_or_else(|| format!("{op:?} in a condition"))
    }

    /// The low `w` bits of `v` sign-extended to 128 (all of `v` for 0 or 128 and more).
    pub(super) fn sign_extend(&mut self, v: Value, w: u32) -> Value {
        if w == 0 || w >= 128 {
            return v;
        }
        let s = self.b.ins().iconst(types::I64, i64::from(128 - w));
        let v = self.b.ins().ishl(v, s);
        self.b.ins().sshr(v, s)
    }

    /// `v` saturated into `int<w>`.
    pub(super) fn sat_cast(&mut self, v: Value, w: u32) -> Value {
        let w = w.clamp(1, 128);
        if w == 128 {
            return v;
        }
        let lo = self.k128((-(1i128 << (w - 1))) as u128);
        let hi = self.k128(((1i128 << (w - 1)) - 1) as u128);
        let under = self.b.ins().icmp(IntCC::SignedLessThan, v, lo);
        let over = self.b.ins().icmp(IntCC::SignedGreaterThan, v, hi);
        let v = self.choose(over, hi, v);
        self.choose(under, lo, v)
    }
}
