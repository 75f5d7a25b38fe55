//! Machine code against the interpreter, block by block: random action
//! bodies and checksum conditions on random packets, compared with their
//! registers, counters, random generator and packet flags; blocks that
//! fail their checks stay interpreted.

use super::*;
use crate::bits::mask;
use crate::exec::State;
use crate::flat::random::{
    deep, expr, field, pick, push_action, random_packet, value, FORWARD, OPS,
};
use crate::flat::{Op, REGS};
use crate::hash::Rng;
use crate::packet::Packet;
use crate::program::{BinOp, Checksum, CounterDef, Expr, LValue, Prim, RegisterDef};

/// Register arrays and counters added to the fixture for the random bodies.
const ARRAYS: usize = 3;
const CELLS: usize = 8;

/// The fixture with `ARRAYS` register arrays (of 8, 32 and 100 bits) and counter arrays.
fn program() -> Program {
    let mut p = crate::load::load(FORWARD).expect("fixture loads");
    for (i, width) in [8, 32, 100].into_iter().enumerate() {
        p.registers.push(RegisterDef {
            name: format!("r{i}"),
            size: CELLS,
            width,
            initial: 0,
        });
        p.counters.push(CounterDef {
            name: format!("c{i}"),
            size: CELLS,
            direct_table: None,
        });
    }
    p
}

/// An index of a register or counter cell, in range most of the time.
fn index(p: &Program, rng: &mut Rng) -> Expr {
    match pick(rng, 4) {
        0 => Expr::Const(pick(rng, CELLS + 2) as u128),
        1 => expr(p, rng, 2),
        _ => Expr::Bin(
            BinOp::BitAnd,
            Box::new(Expr::Field(field(p, rng))),
            Box::new(Expr::Const(7)),
        ),
    }
}

/// An expression of the shapes compiled programs are made of, which the
/// straight-line form has ops of their own for: field op constant, sums and
/// differences of fields under a mask, copies, parameters, constants.
fn shaped(p: &Program, rng: &mut Rng) -> Expr {
    let f = |rng: &mut Rng| Box::new(Expr::Field(field(p, rng)));
    let k = |rng: &mut Rng| Box::new(Expr::Const(value(rng) >> pick(rng, 128)));
    let op = |rng: &mut Rng| OPS[pick(rng, OPS.len())];
    match pick(rng, 7) {
        0 => {
            let sum = Box::new(Expr::Bin(BinOp::Add, f(rng), f(rng)));
            let diff = Box::new(Expr::Bin(BinOp::Sub, sum, f(rng)));
            Expr::Bin(BinOp::BitAnd, diff, k(rng))
        }
        1 => Expr::Bin(op(rng), f(rng), k(rng)),
        2 => Expr::Bin(op(rng), Box::new(expr(p, rng, 2)), f(rng)),
        3 => Expr::Bin(op(rng), Box::new(expr(p, rng, 2)), k(rng)),
        4 => *f(rng),
        5 => Expr::Local(pick(rng, 4) as u16),
        _ => *k(rng),
    }
}

/// A condition: a validity test, a field or expression against a constant, a tree.
fn condition(p: &Program, rng: &mut Rng) -> Expr {
    let h = pick(rng, p.headers.len()) as u32;
    let valid = Box::new(Expr::Valid(h));
    let k = Box::new(Expr::Const(pick(rng, 3) as u128));
    let op = OPS[pick(rng, OPS.len())];
    match pick(rng, 6) {
        0 => Expr::D2B(valid),
        1 => Expr::Not(Box::new(Expr::D2B(valid))),
        2 => Expr::Bin(op, Box::new(Expr::Field(field(p, rng))), k),
        3 => Expr::Bin(op, Box::new(shaped(p, rng)), k),
        4 => Expr::Not(Box::new(shaped(p, rng))),
        _ => rvalue(p, rng),
    }
}

/// A value expression: a tree, one deeper than the register file, a
/// register read, a division, or one of the common shapes.
fn rvalue(p: &Program, rng: &mut Rng) -> Expr {
    let array = (p.registers.len() - ARRAYS + pick(rng, ARRAYS)) as u32;
    match pick(rng, 14) {
        10..=13 => shaped(p, rng),
        0 => deep(p, rng, 2 * REGS),
        1 => Expr::Register {
            array,
            index: Box::new(index(p, rng)),
        },
        2 => Expr::Bin(
            [BinOp::Div, BinOp::Mod][pick(rng, 2)],
            Box::new(expr(p, rng, 2)),
            Box::new(expr(p, rng, 1)),
        ),
        _ => expr(p, rng, 5),
    }
}

/// A random action body of `n` primitives; jumps go forward only.
fn body(p: &Program, rng: &mut Rng, n: usize) -> Vec<Prim> {
    let base = p.registers.len() - ARRAYS;
    (0..n)
        .map(|i| {
            let array = (base + pick(rng, ARRAYS)) as u32;
            let ahead = (i + 1 + pick(rng, n - i)) as u32;
            match pick(rng, 16) {
                0 => Prim::JumpIfZero(condition(p, rng), ahead),
                1 => Prim::Jump(ahead),
                2 => Prim::RegisterRead {
                    dest: LValue::Field(field(p, rng)),
                    array,
                    index: index(p, rng),
                },
                3 => Prim::RegisterWrite {
                    array,
                    index: index(p, rng),
                    value: rvalue(p, rng),
                },
                4 => Prim::Count {
                    array,
                    index: index(p, rng),
                },
                5 if pick(rng, 4) == 0 => Prim::Exit,
                6 => Prim::MarkToDrop,
                7 | 8 => Prim::JumpIfZero(condition(p, rng), ahead),
                // An empty range half the time, and a narrow one.
                9 => Prim::Random {
                    dest: LValue::Field(field(p, rng)),
                    lo: rvalue(p, rng),
                    hi: rvalue(p, rng),
                },
                10 => Prim::Random {
                    dest: LValue::Field(field(p, rng)),
                    lo: Expr::Const(value(rng) & 0xff),
                    hi: Expr::Bin(
                        BinOp::Shl,
                        Box::new(expr(p, rng, 1)),
                        Box::new(Expr::Const(1)),
                    ),
                },
                _ => Prim::Assign(LValue::Field(field(p, rng)), rvalue(p, rng)),
            }
        })
        .collect()
}

/// State with random register cells.
fn state(p: &Program, rng: &mut Rng) -> State {
    let mut st = State::new(p, 1);
    for (cells, def) in st.registers.iter_mut().zip(&p.registers) {
        for c in cells.iter_mut() {
            *c = value(rng) & mask(def.width);
        }
    }
    st
}

/// Runs action `a` on `pkt` with `data`; the packet and state after.
fn run_action(p: &Program, st: &State, pkt: &Packet, a: u32, data: &[u128]) -> (Packet, State) {
    let (mut pkt, mut st) = (pkt.clone(), st.clone());
    crate::flat::run_action(p, &mut st, &mut pkt, a, data);
    (pkt, st)
}

#[test]
fn random_action_bodies_run_as_machine_code_as_interpreted() {
    let mut rng = Rng::new(24);
    let mut checked = 0;
    for _batch in 0..4 {
        let mut p = program();
        let first = p.actions.len() as u32;
        for _ in 0..60 {
            let n = 1 + pick(&mut rng, 12);
            let prims = body(&p, &mut rng, n);
            push_action(&mut p, prims);
        }
        p.flat = crate::flat::build(&p);
        let mut native = p.clone();
        let report = compile(&mut native);
        assert_eq!(report.interpreted, 0, "{:?}", report.fallbacks);
        assert_eq!(report.compiled, blocks(&p).len());
        for a in first..p.actions.len() as u32 {
            assert!(native.flat.actions[a as usize].native.is_some());
            for _ in 0..6 {
                let mut pkt = random_packet(&p, &mut rng);
                pkt.ingress_len = pick(&mut rng, 1600) as u32;
                let st = state(&p, &mut rng);
                // Sometimes fewer values than the body reads: the rest read as 0.
                let data: Vec<u128> = (0..pick(&mut rng, 6)).map(|_| value(&mut rng)).collect();
                let (want, want_st) = run_action(&p, &st, &pkt, a, &data);
                let (got, got_st) = run_action(&native, &st, &pkt, a, &data);
                let what = || format!("{:?} with data {data:?}", p.actions[a as usize].prims);
                assert_eq!(got.phv, want.phv, "{}", what());
                assert_eq!(got.flags, want.flags, "{}", what());
                assert_eq!(got_st.registers, want_st.registers, "{}", what());
                assert_eq!(got_st.counters, want_st.counters, "{}", what());
                let next = |st: &State| st.rng.clone().next_u64();
                assert_eq!(next(&got_st), next(&want_st), "{}", what());
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 4 * 60 * 6);
}

#[test]
fn checksum_conditions_hold_in_machine_code_as_evaluated() {
    let mut rng = Rng::new(31);
    let mut p = program();
    let conditions: Vec<Expr> = (0..200)
        .map(|_| match pick(&mut rng, 4) {
            0 => Expr::Bin(
                [BinOp::And, BinOp::Or][pick(&mut rng, 2)],
                Box::new(condition(&p, &mut rng)),
                Box::new(condition(&p, &mut rng)),
            ),
            1 => rvalue(&p, &mut rng),
            _ => condition(&p, &mut rng),
        })
        .collect();
    p.checksums = conditions
        .iter()
        .enumerate()
        .map(|(i, e)| Checksum {
            name: format!("c{i}"),
            target: 0,
            calc: 0,
            verify: true,
            update: false,
            cond: Some(e.clone()),
        })
        .collect();
    p.flat = crate::flat::build(&p);
    let mut native = p.clone();
    let report = compile(&mut native);
    assert_eq!(report.interpreted, 0, "{:?}", report.fallbacks);
    let (mut held, mut checked) = (0, 0);
    for _ in 0..20 {
        let pkt = random_packet(&p, &mut rng);
        let mut st = state(&p, &mut rng);
        for (i, e) in conditions.iter().enumerate() {
            let want = crate::exec::eval(&p, &st, &pkt, &[], e) != 0;
            for prog in [&p, &native] {
                // A lone validity test is read where it is, without a block.
                let code = match &prog.flat.conditions[i] {
                    crate::flat::Condition::Block(code) => code,
                    crate::flat::Condition::Valid(h) => {
                        assert!(matches!(e, Expr::Valid(_) | Expr::D2B(_)), "{e:?}");
                        assert_eq!(pkt.phv.valid[*h as usize], want, "{e:?}");
                        continue;
                    }
                    crate::flat::Condition::Always => panic!("{e:?} made no condition"),
                };
                assert_eq!(code.native.is_some(), std::ptr::eq(prog, &native));
                let mut got = pkt.clone();
                got.flags.exit = pick(&mut rng, 2) == 0;
                let exit = got.flags.exit;
                let holds = crate::flat::holds(prog, &mut st, &mut got, code);
                assert_eq!(holds, want, "{e:?}");
                assert_eq!((got.phv, got.flags.exit), (pkt.phv.clone(), exit), "{e:?}");
                checked += 1;
            }
            held += usize::from(want);
        }
    }
    assert!(checked > 2 * 20 * 150, "{checked} checked");
    assert!((1000..3000).contains(&held), "{held} of 4000 held");
}

#[test]
fn a_block_that_fails_its_check_stays_interpreted_and_the_rest_compile() {
    let mut p = program();
    let slots = p.fields.len() as u32;
    p.flat.actions[0].ops = vec![Op::Field { d: 0, f: slots }, Op::End];
    let report = compile(&mut p);
    assert_eq!(report.interpreted, 1);
    assert_eq!(report.compiled, blocks(&p).len() - 1);
    let (block, why) = &report.fallbacks[0];
    assert_eq!(block, &format!("action {}", p.actions[0].name));
    assert!(why.contains("out of range"), "{why}");
    assert!(p.flat.actions[0].native.is_none());
    assert!(p.flat.actions[1].native.is_some());
    strip(&mut p);
    assert!(p.flat.ingress.native.is_none());
}

#[test]
fn register_and_counter_ops_run_in_line_where_the_vectors_layout_is_known() {
    let words = run::array_words();
    let (registers, counters) = words.expect("Vec's address and length words found");
    for w in [registers, counters] {
        assert_ne!(w.ptr, w.len);
        assert!(w.ptr < 3 && w.len < 3);
    }
    let ops = [
        Op::RegisterGet { d: 2, array: 0 },
        Op::RegisterRead {
            f: 0,
            array: 0,
            a: 1,
        },
        Op::RegisterReadF {
            f: 0,
            array: 0,
            index: 1,
        },
        Op::RegisterWrite { array: 0, a: 3 },
        Op::Count { array: 0, a: 1 },
    ];
    for op in ops {
        assert_eq!(build::left(&op, words), None, "{op:?}");
    }
    // Without the layout they are left to the interpreter, with the
    // registers they use live across the call.
    let live: Vec<Option<usize>> = ops.iter().map(|op| build::left(op, None)).collect();
    assert_eq!(live, [Some(3), Some(2), Some(0), Some(5), Some(2)]);
}

#[test]
fn an_array_op_out_of_the_programs_arrays_keeps_its_block_interpreted() {
    let mut p = program();
    let (registers, counters) = (p.registers.len() as u32, p.counters.len() as u32);
    p.flat.actions[0].ops = vec![
        Op::RegisterGet {
            d: 0,
            array: registers,
        },
        Op::End,
    ];
    p.flat.actions[1].ops = vec![
        Op::Count {
            array: counters,
            a: 0,
        },
        Op::End,
    ];
    let report = compile(&mut p);
    assert_eq!(report.interpreted, 2, "{:?}", report.fallbacks);
    assert!(
        report.fallbacks[0].1.contains("register array"),
        "{:?}",
        report.fallbacks
    );
    assert!(
        report.fallbacks[1].1.contains("counter array"),
        "{:?}",
        report.fallbacks
    );
}
