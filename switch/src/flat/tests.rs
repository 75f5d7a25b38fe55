//! The straight-line form against the tree interpreter.

use super::build::{specialise, Builder, Data};
use super::run::run;
use super::*;
use crate::bits::mask;
use crate::exec::{eval, State};
use crate::hash::Rng;
use crate::packet::Packet;
use crate::program::{ActionDef, LValue, Program};

/// A program with fields up to 128 bits wide (`p4src/forward.p4`).
const FORWARD: &str = include_str!("../../../sim/tests/fixtures/forward.json");

const OPS: [BinOp; 23] = [
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

fn pick(rng: &mut Rng, n: usize) -> usize {
    (rng.next_u64() % n as u64) as usize
}

fn value(rng: &mut Rng) -> u128 {
    match pick(rng, 4) {
        0 => pick(rng, 4) as u128,
        1 => u128::from(rng.next_u64()),
        2 => u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64()),
        _ => u128::MAX - pick(rng, 3) as u128,
    }
}

/// A field, one wider than 64 bits a quarter of the time.
fn field(p: &Program, rng: &mut Rng) -> u32 {
    let wide: Vec<u32> = (0..p.fields.len() as u32)
        .filter(|&f| p.fields[f as usize].width > 64)
        .collect();
    if !wide.is_empty() && pick(rng, 4) == 0 {
        wide[pick(rng, wide.len())]
    } else {
        pick(rng, p.fields.len()) as u32
    }
}

fn leaf(p: &Program, rng: &mut Rng) -> Expr {
    let f = field(p, rng);
    match pick(rng, 5) {
        0 => Expr::Const(value(rng)),
        1 => Expr::Field(f),
        2 => Expr::SignedField(f, p.fields[f as usize].width),
        3 => Expr::Local(pick(rng, 5) as u16),
        _ => Expr::Valid(pick(rng, p.headers.len()) as u32),
    }
}

fn expr(p: &Program, rng: &mut Rng, depth: u32) -> Expr {
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
fn deep(p: &Program, rng: &mut Rng, n: usize) -> Expr {
    (0..n).fold(leaf(p, rng), |acc, _| {
        Expr::Bin(
            OPS[pick(rng, OPS.len())],
            Box::new(leaf(p, rng)),
            Box::new(acc),
        )
    })
}

/// A packet with random field values and validity.
fn random_packet(p: &Program, rng: &mut Rng) -> Packet {
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
fn push_action(p: &mut Program, prims: Vec<Prim>) -> u32 {
    p.actions.push(ActionDef {
        name: "test".into(),
        id: 0,
        params: vec![],
        prims,
    });
    (p.actions.len() - 1) as u32
}

/// Builds code with `emit` (action data fixed at build time or given per call),
/// specialised as `build` does, and runs it on a copy of `pkt`.
fn built_and_run(
    p: &Program,
    st: &mut State,
    pkt: &Packet,
    data: &[u128],
    fixed: bool,
    emit: impl FnOnce(&mut Builder<'_>, Data<'_>),
) -> Packet {
    let mut b = Builder::new(p);
    let d = if fixed {
        b.code.data.push(data.to_vec());
        Data::Fixed(data, 0)
    } else {
        Data::Call
    };
    emit(&mut b, d);
    b.code.ops.push(Op::End);
    let code = specialise(b.code);
    let mut got = pkt.clone();
    run(p, st, &mut got, &code, data, 0);
    got
}

#[test]
fn branches_and_store_runs_match_the_tree_interpreter() {
    let mut p = crate::load::load(FORWARD).expect("fixture loads");
    let mut st = State::new(&p, 1);
    let mut rng = Rng::new(11);
    let conds = |p: &Program, rng: &mut Rng| {
        let f = field(p, rng);
        let h = pick(rng, p.headers.len()) as u32;
        let k = Box::new(Expr::Const(value(rng) & mask(p.fields[f as usize].width)));
        let op = OPS[pick(rng, OPS.len())];
        match pick(rng, 6) {
            0 => Expr::D2B(Box::new(Expr::Valid(h))),
            1 => Expr::Not(Box::new(Expr::D2B(Box::new(Expr::Valid(h))))),
            2 => Expr::Bin(op, Box::new(Expr::Field(f)), k),
            3 => Expr::Bin(op, Box::new(expr(p, rng, 3)), k),
            4 => Expr::Not(Box::new(expr(p, rng, 3))),
            _ => Expr::D2B(Box::new(expr(p, rng, 4))),
        }
    };
    for _ in 0..3000 {
        let pkt = random_packet(&p, &mut rng);
        let data: Vec<u128> = (0..3).map(|_| value(&mut rng)).collect();
        let c = conds(&p, &mut rng);
        let f: Vec<u32> = (0..8)
            .map(|_| pick(&mut rng, p.fields.len()) as u32)
            .collect();
        let k: Vec<u128> = (0..6).map(|_| value(&mut rng)).collect();
        let assign = |f: u32, e: Expr| Prim::Assign(LValue::Field(f), e);
        let prims = vec![
            Prim::JumpIfZero(c.clone(), 3),
            assign(f[0], Expr::Const(k[0])),
            Prim::Jump(4),
            assign(f[0], Expr::Const(k[1])),
            assign(f[1], Expr::Local(0)),
            assign(f[2], Expr::Local(2)),
            assign(f[3], Expr::Const(k[2])),
            assign(f[4], Expr::Const(k[3])),
            assign(f[5], Expr::Field(f[1])),
            Prim::JumpIfZero(c.clone(), 11),
            assign(f[6], Expr::Const(k[4])),
            // A jump target right after a constant store: not merged into it.
            assign(f[7], Expr::Const(k[5])),
        ];
        let mut want = pkt.clone();
        let m = |f: u32| mask(p.fields[f as usize].width);
        let taken = eval(&p, &st, &pkt, &data, &c) != 0;
        let mut put = |f: u32, v: u128| want.phv.set(&p, f, v & m(f));
        put(f[0], if taken { k[0] } else { k[1] });
        put(f[1], data[0]);
        put(f[2], data[2]);
        put(f[3], k[2]);
        put(f[4], k[3]);
        let v = want.phv.get(&p, f[1]);
        want.phv.set(&p, f[5], v & m(f[5]));
        // The second test sees the fields as the first half left them.
        if eval(&p, &st, &want, &data, &c) != 0 {
            want.phv.set(&p, f[6], k[4] & m(f[6]));
        }
        want.phv.set(&p, f[7], k[5] & m(f[7]));
        let a = push_action(&mut p, prims);
        for fixed in [false, true] {
            let got = built_and_run(&p, &mut st, &pkt, &data, fixed, |b, d| b.action(a, d));
            assert_eq!(got.phv, want.phv, "{c:?} (data fixed: {fixed})");
        }
        p.actions.pop();
    }
}

#[test]
fn specialised_operator_ops_match_the_tree_interpreter() {
    let mut p = crate::load::load(FORWARD).expect("fixture loads");
    let mut st = State::new(&p, 1);
    let mut rng = Rng::new(5);
    let narrow: Vec<u32> = (0..p.fields.len() as u32)
        .filter(|&f| (8..=64).contains(&p.fields[f as usize].width))
        .collect();
    let field = |rng: &mut Rng| Box::new(Expr::Field(narrow[pick(rng, narrow.len())]));
    let bin = |op, a, b| Box::new(Expr::Bin(op, a, b));
    for _ in 0..2000 {
        let pkt = random_packet(&p, &mut rng);
        let k = |rng: &mut Rng| Box::new(Expr::Const(value(rng) & 0xff));
        // ((a + b) - c) & k: AddF, SubF, AndK; (d == k): FieldEqK.
        let sum = bin(
            BinOp::BitAnd,
            bin(
                BinOp::Sub,
                bin(BinOp::Add, field(&mut rng), field(&mut rng)),
                field(&mut rng),
            ),
            k(&mut rng),
        );
        let eq = bin(BinOp::Eq, field(&mut rng), k(&mut rng));
        let (t1, t2) = (field(&mut rng), field(&mut rng));
        // The tested field sometimes equals the constant, so both branches run.
        let c = Expr::Const(if pick(&mut rng, 2) == 0 {
            pkt.phv.get(&p, narrow[0])
        } else {
            3
        });
        let is = Expr::Bin(
            BinOp::Eq,
            Box::new(Expr::Field(narrow[0])),
            Box::new(c.clone()),
        );
        let isnt = Expr::Bin(BinOp::Ne, Box::new(Expr::Field(narrow[0])), Box::new(c));
        let (f1, f2, f3, f4) = (narrow[1], narrow[2], narrow[3], narrow[4]);
        let assign = |f: u32, e: Expr| Prim::Assign(LValue::Field(f), e);
        let prims = vec![
            assign(f1, *sum.clone()),
            assign(f2, *eq.clone()),
            Prim::JumpIfZero(is.clone(), 4),
            assign(f3, *t1.clone()),
            Prim::JumpIfZero(isnt.clone(), 6),
            assign(f4, *t2.clone()),
        ];
        let mut want = pkt.clone();
        let m = |f: u32| mask(p.fields[f as usize].width);
        let v = eval(&p, &st, &want, &[], &sum);
        want.phv.set(&p, f1, v & m(f1));
        let v = eval(&p, &st, &want, &[], &eq);
        want.phv.set(&p, f2, v & m(f2));
        if eval(&p, &st, &want, &[], &is) != 0 {
            let v = eval(&p, &st, &want, &[], &t1);
            want.phv.set(&p, f3, v & m(f3));
        }
        if eval(&p, &st, &want, &[], &isnt) != 0 {
            let v = eval(&p, &st, &want, &[], &t2);
            want.phv.set(&p, f4, v & m(f4));
        }
        let a = push_action(&mut p, prims);
        let got = built_and_run(&p, &mut st, &pkt, &[], false, |b, d| b.action(a, d));
        assert_eq!(got.phv, want.phv);
        p.actions.pop();
    }
    let mut b = Builder::new(&p);
    b.assign(
        narrow[1],
        &Expr::Bin(
            BinOp::Eq,
            Box::new(Expr::Field(narrow[0])),
            Box::new(Expr::Const(1)),
        ),
        Data::Call,
    );
    let code = specialise(b.code);
    assert!(matches!(code.ops[0], Op::FieldEqK { .. }), "{:?}", code.ops);
}

#[test]
fn assignments_match_the_tree_interpreter() {
    let p = crate::load::load(FORWARD).expect("fixture loads");
    let mut st = State::new(&p, 1);
    let mut rng = Rng::new(7);
    for round in 0..4000 {
        let pkt = random_packet(&p, &mut rng);
        let data: Vec<u128> = (0..3).map(|_| value(&mut rng)).collect();
        let e = if round % 10 == 0 {
            deep(&p, &mut rng, 3 * REGS)
        } else {
            expr(&p, &mut rng, 6)
        };
        let f = field(&p, &mut rng);
        let want = eval(&p, &st, &pkt, &data, &e) & mask(p.fields[f as usize].width);
        for fixed in [false, true] {
            let got = built_and_run(&p, &mut st, &pkt, &data, fixed, |b, d| b.assign(f, &e, d));
            assert_eq!(
                got.phv.get(&p, f),
                want,
                "{e:?} into field {f} (data fixed: {fixed})"
            );
        }
    }
}
