//! The straight-line form against the tree interpreter.

use super::build::{specialise, Builder, Data};
use super::random::{deep, expr, field, pick, push_action, random_packet, value, FORWARD, OPS};
use super::run::run;
use super::*;
use crate::bits::mask;
use crate::exec::{eval, State};
use crate::hash::Rng;
use crate::packet::Packet;
use crate::program::{LValue, Program};

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

#[test]
fn random_draws_match_the_tree_interpreter() {
    let mut p = crate::load::load(FORWARD).expect("fixture loads");
    let mut rng = Rng::new(13);
    let mut drawn = 0;
    for round in 0..2000 {
        let pkt = random_packet(&p, &mut rng);
        let data: Vec<u128> = (0..3).map(|_| value(&mut rng)).collect();
        // Wide random bounds (an empty range half the time), or a narrow range.
        let (lo, hi) = match round % 2 {
            0 => (expr(&p, &mut rng, 3), expr(&p, &mut rng, 3)),
            _ => {
                let lo = value(&mut rng) & 0xff;
                (Expr::Const(lo), Expr::Const(lo + (value(&mut rng) & 0xf)))
            }
        };
        let dest = LValue::Field(field(&p, &mut rng));
        let prim = Prim::Random { dest, lo, hi };
        let seed = value(&mut rng) as u64;
        let mut want_st = State::new(&p, seed);
        let mut want = pkt.clone();
        crate::exec::exec_prim(&p, &mut want_st, &mut want, &data, &prim);
        let a = push_action(&mut p, vec![prim.clone()]);
        for fixed in [false, true] {
            let mut st = State::new(&p, seed);
            let got = built_and_run(&p, &mut st, &pkt, &data, fixed, |b, d| b.action(a, d));
            assert_eq!(got.phv, want.phv, "{prim:?} (data fixed: {fixed})");
            let next = |st: &State| st.rng.clone().next_u64();
            assert_eq!(next(&st), next(&want_st), "{prim:?} (data fixed: {fixed})");
        }
        drawn += usize::from(next_differs(&p, seed, &want_st));
        p.actions.pop();
    }
    assert!(drawn > 500, "{drawn} of 2000 drew a value");
}

/// Whether `st`'s generator has moved on from a fresh one seeded with `seed`.
fn next_differs(p: &Program, seed: u64, st: &State) -> bool {
    State::new(p, seed).rng.next_u64() != st.rng.clone().next_u64()
}
