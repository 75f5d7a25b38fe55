//! Random expressions, action bodies and packets for the tests that hold the
//! straight-line form and its machine code to the tree interpreter.

use super::*;
use crate::bits::mask;
use crate::hash::Rng;
use crate::packet::Packet;
use crate::program::{ActionDef, Program};

/// A program with fields up to 128 bits wide (`p4src/forward.p4`).
pub(crate) const FORWARD: &str = include_str!("../../../sim/tests/fixtures/forward.json");

/// Every binary operator.
pub(crate) const OPS: [BinOp; 23] = [
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Mod,
    BinOp::Shl,
    BinOp::Shr,
    BinOp::Sar,
    BinOp::Eq,
    BinOp::Ne,
    BinOp::Lt,
    BinOp::Le,
    BinOp::Gt,
    BinOp::Ge,
    BinOp::SLt,
    BinOp::SLe,
    BinOp::SGt,
    BinOp::SGe,
    BinOp::And,
    BinOp::Or,
    BinOp::BitAnd,
    BinOp::BitOr,
    BinOp::BitXor,
];

/// A number below `n`.
pub(crate) fn pick(rng: &mut Rng, n: usize) -> usize {
    (rng.next_u64() % n as u64) as usize
}

/// A value: small, 64-bit, 128-bit or near the top.
pub(crate) fn value(rng: &mut Rng) -> u128 {
    match pick(rng, 4) {
        0 => pick(rng, 4) as u128,
        1 => u128::from(rng.next_u64()),
        2 => u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64()),
        _ => u128::MAX - pick(rng, 3) as u128,
    }
}

/// A field, one wider than 64 bits a quarter of the time.
pub(crate) fn field(p: &Program, rng: &mut Rng) -> u32 {
    let wide: Vec<u32> = (0..p.fields.len() as u32)
        .filter(|&f| p.fields[f as usize].width > 64)
        .collect();
    if !wide.is_empty() && pick(rng, 4) == 0 {
        wide[pick(rng, wide.len())]
    } else {
        pick(rng, p.fields.len()) as u32
    }
}

/// A constant, field, signed field, parameter or validity bit.
pub(crate) fn leaf(p: &Program, rng: &mut Rng) -> Expr {
    let f = field(p, rng);
    match pick(rng, 5) {
        0 => Expr::Const(value(rng)),
        1 => Expr::Field(f),
        2 => Expr::SignedField(f, p.fields[f as usize].width),
        3 => Expr::Local(pick(rng, 5) as u16),
        _ => Expr::Valid(pick(rng, p.headers.len()) as u32),
    }
}

/// An expression tree up to `depth` deep.
pub(crate) fn expr(p: &Program, rng: &mut Rng, depth: u32) -> Expr {
    if depth == 0 || pick(rng, 4) == 0 {
        return leaf(p, rng);
    }
    let mut sub = || Box::new(expr(p, rng, depth - 1));
    let (a, b) = (sub(), sub());
    let w = 1 + pick(rng, 128) as u32;
    match pick(rng, 9) {
        0 => Expr::Not(a),
        1 => Expr::BitNot(a),
        2 => Expr::D2B(a),
        3 => Expr::Cond(a, b, Box::new(leaf(p, rng))),
        4 => Expr::TwoCompMod(a, w),
        5 => Expr::SatCast(a, w),
        6 => Expr::USatCast(a, w),
        _ => Expr::Bin(OPS[pick(rng, OPS.len())], a, b),
    }
}

/// A chain deeper than the register file, so part of it is evaluated as a tree.
pub(crate) fn deep(p: &Program, rng: &mut Rng, n: usize) -> Expr {
    (0..n).fold(leaf(p, rng), |acc, _| {
        Expr::Bin(
            OPS[pick(rng, OPS.len())],
            Box::new(leaf(p, rng)),
            Box::new(acc),
        )
    })
}

/// A packet with random field values and validity.
pub(crate) fn random_packet(p: &Program, rng: &mut Rng) -> Packet {
    let mut pkt = Packet::new(p);
    for (f, fi) in p.fields.iter().enumerate() {
        pkt.phv.set(p, f as u32, value(rng) & mask(fi.width));
    }
    for v in pkt.phv.valid.iter_mut() {
        *v = pick(rng, 2) == 1;
    }
    pkt
}

/// Adds an action of `prims` to `p` (the test pops it again); its index.
pub(crate) fn push_action(p: &mut Program, prims: Vec<Prim>) -> u32 {
    p.actions.push(ActionDef {
        name: "test".into(),
        id: 0,
        params: vec![],
        prims,
    });
    (p.actions.len() - 1) as u32
}
