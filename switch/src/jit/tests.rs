//! Machine code against the interpreter: random action bodies on random
//! packets, and whole programs on random frames, compared byte for byte
//! with their registers, counters and packet flags.

use super::*;
use crate::bits::mask;
use crate::engine::Engine;
use crate::exec::State;
use crate::flat::random::{
    deep, expr, field, pick, push_action, random_packet, value, FORWARD, OPS,
};
use crate::flat::{Op, REGS};
use crate::hash::Rng;
use crate::packet::Packet;
use crate::program::{BinOp, CounterDef, Expr, LValue, MatchKind, Prim, RegisterDef};
use crate::tables::MatchValue;
use bufferlab_tm::TmConfig;

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
                let pkt = random_packet(&p, &mut rng);
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
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 4 * 60 * 6);
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

const L3: &str = include_str!("../../../tests/engine/fixtures/l3.json");
const TABLES: &str = include_str!("../../../tests/engine/fixtures/tables.json");
const META: &str = include_str!("../../../tests/engine/fixtures/meta.json");
const PARSER: &str = include_str!("../../../tests/engine/fixtures/parser.json");
const WIDE: &str = include_str!("../../../tests/engine/fixtures/wide_field.json");
const FEEDBACK: &str = include_str!("../../../sim/tests/fixtures/feedback_maker.json");

/// A frame: Ethernet (often to 00:..:00:0N), then IPv4 (often towards 10.0.N.x)
/// or random bytes, cut anywhere.
fn frame(rng: &mut Rng) -> Vec<u8> {
    let mut f: Vec<u8> = (0..12).map(|_| rng.next_u64() as u8).collect();
    if pick(rng, 4) != 0 {
        f[..6].copy_from_slice(&[0, 0, 0, 0, 0, pick(rng, 9) as u8]);
    }
    let ipv4 = pick(rng, 4) != 0;
    f.extend_from_slice(if ipv4 { &[0x08, 0x00] } else { &[0x88, 0xb5] });
    let mut ip: Vec<u8> = (0..40).map(|_| rng.next_u64() as u8).collect();
    if ipv4 {
        ip[0] = 0x45;
        ip[8] = pick(rng, 3) as u8;
        ip[16..19].copy_from_slice(&[10, 0, pick(rng, 9) as u8]);
    }
    let cut = if pick(rng, 4) == 0 { pick(rng, 41) } else { 40 };
    f.extend_from_slice(&ip[..cut]);
    f.extend((0..pick(rng, 64)).map(|_| rng.next_u64() as u8));
    f
}

/// Entry `j` of a table: its key from the values [`frame`] sends, running the
/// table's action `j` with small parameters (ports, MACs, sessions 1 to 4).
fn fill(e: &mut Engine) {
    // Per table: name, (kind, width) per match field, (name, parameters) per action.
    type Shape = (String, Vec<(MatchKind, u32)>, Vec<(String, usize)>);
    let tables: Vec<Shape> = e
        .main
        .prog
        .tables
        .iter()
        .filter(|t| !t.fields.is_empty())
        .map(|t| {
            let keys = t.fields.iter().map(|f| (f.kind, f.width)).collect();
            let actions = t.actions.iter().map(|&a| {
                let def = &e.main.prog.actions[a as usize];
                (def.name.clone(), def.params.len())
            });
            (t.name.clone(), keys, actions.collect())
        })
        .collect();
    for (table, keys, actions) in tables {
        for (j, (action, params)) in actions.into_iter().enumerate() {
            let v = j as u128 + 1;
            let keys = keys
                .iter()
                .map(|&(kind, width)| match kind {
                    MatchKind::Exact => MatchValue::Exact(v),
                    MatchKind::Lpm if width == 32 => MatchValue::Lpm(0x0a00_0000 | v << 8, 24),
                    MatchKind::Lpm => MatchValue::Lpm(v, width),
                    MatchKind::Ternary => MatchValue::Ternary(v, mask(width)),
                    MatchKind::Range => MatchValue::Range(0, mask(width)),
                    MatchKind::Optional => MatchValue::Optional(Some(v)),
                })
                .collect();
            let data = (0..params).map(|i| 1 + (j + i) as u128 % 4).collect();
            let _ = e.table_add(&table, keys, &action, data, j as i32 + 1);
        }
    }
}

/// `json` loaded with and without machine code, entries added by [`fill`],
/// the same random frames sent to both: the same frames leave, with the same
/// registers, counters and statistics.
fn same_outputs(json: &str, seed: u64) {
    let engine = |jit| {
        let mut e = Engine::with_jit(json, TmConfig::default(), 1, jit).expect("fixture loads");
        fill(&mut e);
        e
    };
    let (mut native, mut interpreted) = (engine(true), engine(false));
    let (on, report) = native.jit_report();
    assert!(on);
    assert_eq!(report.interpreted, 0, "{:?}", report.fallbacks);
    assert!(report.compiled > 0);
    assert_eq!(interpreted.jit_report(), (false, Report::default()));
    let mut rng = Rng::new(seed);
    for i in 0..400u64 {
        let (port, f) = (pick(&mut rng, 4) as u16, frame(&mut rng));
        let sent = (
            native.send(port, &f, i * 1000),
            interpreted.send(port, &f, i * 1000),
        );
        assert_eq!(sent.0.is_ok(), sent.1.is_ok());
    }
    native.drain();
    interpreted.drain();
    let got = native.take_received();
    assert!(got.len() > 20, "program {seed}: {} frames out", got.len());
    assert_eq!(got, interpreted.take_received(), "program {seed}");
    assert_eq!(native.stats, interpreted.stats);
    assert_eq!(native.main.st.registers, interpreted.main.st.registers);
    assert_eq!(native.main.st.counters, interpreted.main.st.counters);
    assert_eq!(native.main.st.stats, interpreted.main.st.stats);
    assert_eq!(native.take_digests(), interpreted.take_digests());
}

#[test]
fn programs_forward_the_same_frames_with_and_without_machine_code() {
    for (json, seed) in [
        (L3, 1),
        (TABLES, 2),
        (META, 3),
        (PARSER, 4),
        (WIDE, 5),
        (FORWARD, 6),
        (FEEDBACK, 7),
    ] {
        same_outputs(json, seed);
    }
}

#[test]
fn switching_the_jit_off_and_on_recompiles_and_set_program_keeps_the_choice() {
    let mut e = Engine::new(L3, TmConfig::default(), 1).expect("fixture loads");
    let blocks = super::blocks(&e.main.prog).len();
    assert_eq!(e.jit_report().1.compiled, blocks);
    e.set_jit(false);
    assert_eq!(e.jit_report(), (false, Report::default()));
    assert!(e.main.prog.flat.ingress.native.is_none());
    e.set_program(META).expect("loads");
    assert!(e.main.prog.flat.ingress.native.is_none());
    e.set_jit(true);
    assert!(e.main.prog.flat.ingress.native.is_some());
    e.set_program(L3).expect("loads");
    assert_eq!(e.jit_report().1.compiled, blocks);
}
