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
use crate::program::{BinOp, Checksum, CounterDef, Expr, LValue, MatchKind, Prim, RegisterDef};
use crate::state::CounterCell;
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

const L3: &str = include_str!("../../../tests/engine/fixtures/l3.json");
const TABLES: &str = include_str!("../../../tests/engine/fixtures/tables.json");
const META: &str = include_str!("../../../tests/engine/fixtures/meta.json");
const PARSER: &str = include_str!("../../../tests/engine/fixtures/parser.json");
const WIDE: &str = include_str!("../../../tests/engine/fixtures/wide_field.json");
const FEEDBACK: &str = include_str!("../../../sim/tests/fixtures/feedback_maker.json");
const IN_PLACE: &str = include_str!("../../../tests/engine/fixtures/in_place_tables.json");

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

/// Sends each (port, frame, time) to both engines, drains them, and checks
/// that the same frames left both, with the same statistics; how many left.
fn same_frames_out(
    native: &mut Engine,
    interpreted: &mut Engine,
    sends: &[(u16, Vec<u8>, u64)],
    what: &str,
) -> usize {
    for (port, f, t_ns) in sends {
        let sent = (
            native.send(*port, f, *t_ns),
            interpreted.send(*port, f, *t_ns),
        );
        assert_eq!(sent.0.is_ok(), sent.1.is_ok(), "{what}");
    }
    native.drain();
    interpreted.drain();
    let got = native.take_received();
    assert_eq!(got, interpreted.take_received(), "{what}");
    assert_eq!(native.stats, interpreted.stats, "{what}");
    assert_eq!(
        direct_counters(native),
        direct_counters(interpreted),
        "{what}"
    );
    got.len()
}

/// Every entry's direct counter: (table, handle, counter).
fn direct_counters(e: &Engine) -> Vec<(usize, u32, CounterCell)> {
    let tables = e.main.st.tables.iter().enumerate();
    tables
        .flat_map(|(t, s)| s.iter().map(move |(h, entry)| (t, h, entry.counter)))
        .collect()
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
    let sends: Vec<(u16, Vec<u8>, u64)> = (0..400u64)
        .map(|i| (pick(&mut rng, 4) as u16, frame(&mut rng), i * 1000))
        .collect();
    let what = format!("program {seed}");
    let out = same_frames_out(&mut native, &mut interpreted, &sends, &what);
    assert!(out > 20, "{what}: {out} frames out");
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
        (IN_PLACE, 8),
    ] {
        same_outputs(json, seed);
    }
}

/// A change to in_place_tables.json's tables, made to both engines alike.
type Change = fn(&mut Engine);

/// An Ethernet frame to one of the addresses in_place_tables.json's `by_dst`
/// is given entries for (or another), of one of the ether types `by_type` is
/// given entries for (or another).
fn typed_frame(rng: &mut Rng) -> Vec<u8> {
    let mut f: Vec<u8> = (0..12).map(|_| rng.next_u64() as u8).collect();
    if pick(rng, 3) != 0 {
        f[..6].copy_from_slice(&[0, 0, 0, 0, 0, 1 + pick(rng, 2) as u8]);
    }
    let types: [u16; 4] = [0x0800, 0x88b5, 0x1234, 0x0001];
    f.extend_from_slice(&types[pick(rng, types.len())].to_be_bytes());
    f.extend((0..pick(rng, 50)).map(|_| rng.next_u64() as u8));
    f
}

/// A `route` key of in_place_tables.json: the queue, and a prefix of the
/// source address's top `prefix` bits.
fn route_key(queue: u128, top: u128, prefix: u32) -> Vec<MatchValue> {
    vec![MatchValue::Exact(queue), MatchValue::Lpm(top << 40, prefix)]
}

/// The handle of in_place_tables.json's `route` entry with this key.
fn route_handle(e: &Engine, key: Vec<MatchValue>) -> u32 {
    e.table_find("MyIngress.route", key, 0)
        .expect("entry found")
}

/// Every entry of in_place_tables.json's tables: hits on every action,
/// one of them (`wide`) with more data than a native call carries.
fn entries(e: &mut Engine) {
    let ex = |v: u128| MatchValue::Exact(v);
    let adds: [(&str, Vec<MatchValue>, &str, Vec<u128>); 16] = [
        (
            "MyIngress.by_type",
            vec![ex(0x0800)],
            "MyIngress.set_queue",
            vec![2],
        ),
        (
            "MyIngress.by_type",
            vec![ex(0x88b5)],
            "MyIngress.set_queue",
            vec![5],
        ),
        (
            "MyIngress.by_port",
            vec![ex(1)],
            "MyIngress.to_port",
            vec![2],
        ),
        ("MyIngress.by_port", vec![ex(2)], "MyIngress.stop", vec![]),
        (
            "MyIngress.by_port",
            vec![ex(3)],
            "MyIngress.wide",
            (1..=9).collect(),
        ),
        (
            "MyIngress.by_dst",
            vec![ex(1)],
            "MyIngress.to_port",
            vec![4],
        ),
        ("MyIngress.by_dst", vec![ex(2)], "MyIngress.mark", vec![8]),
        (
            "MyIngress.by_queue",
            vec![ex(2), ex(2)],
            "MyIngress.mark",
            vec![3],
        ),
        (
            "MyIngress.by_queue",
            vec![ex(1), ex(5)],
            "MyIngress.logged",
            vec![9],
        ),
        (
            "MyIngress.by_queue",
            vec![ex(2), ex(5)],
            "MyIngress.mark",
            vec![4],
        ),
        ("MyIngress.by_queue", vec![ex(1), ex(7)], "NoAction", vec![]),
        (
            "MyIngress.route",
            route_key(2, 0, 0),
            "MyIngress.mark",
            vec![1],
        ),
        (
            "MyIngress.route",
            route_key(2, 0x80, 1),
            "MyIngress.mark",
            vec![5],
        ),
        (
            "MyIngress.route",
            route_key(2, 0xc0, 3),
            "MyIngress.stop",
            vec![],
        ),
        (
            "MyIngress.route",
            route_key(5, 0x40, 2),
            "MyIngress.logged",
            vec![3],
        ),
        ("MyIngress.route", route_key(7, 0, 4), "NoAction", vec![]),
    ];
    for (table, keys, action, data) in adds {
        e.table_add(table, keys, action, data, 0)
            .expect("entry added");
    }
}

/// The handle of `table`'s entry with these exact key values.
fn handle(e: &Engine, table: &str, keys: &[u128]) -> u32 {
    let keys = keys.iter().map(|&v| MatchValue::Exact(v)).collect();
    e.table_find(table, keys, 0).expect("entry found")
}

#[test]
fn tables_applied_in_place_run_as_interpreted_through_every_change_to_them() {
    let engine = |jit| Engine::with_jit(IN_PLACE, TmConfig::default(), 1, jit).expect("loads");
    let (mut native, mut interpreted) = (engine(true), engine(false));
    let report = native.jit_report().1;
    assert_eq!(report.interpreted, 0, "{:?}", report.fallbacks);
    // config_table (keyless), by_type, by_port, by_queue, by_dst (hashed)
    // and route (LPM).
    assert_eq!(report.tables_in_place, 6);
    let changes: [Change; 7] = [
        |_| {},
        entries,
        |e| {
            let h = handle(e, "MyIngress.by_port", &[1]);
            e.table_modify(
                "MyIngress.by_port",
                h,
                "MyIngress.wide",
                (11..=19).collect(),
            )
            .expect("modified");
            let h = handle(e, "MyIngress.by_port", &[3]);
            e.table_modify("MyIngress.by_port", h, "MyIngress.to_port", vec![0])
                .expect("modified");
            let h = handle(e, "MyIngress.by_queue", &[2, 2]);
            e.table_modify("MyIngress.by_queue", h, "MyIngress.logged", vec![6])
                .expect("modified");
            let h = handle(e, "MyIngress.by_dst", &[2]);
            e.table_modify("MyIngress.by_dst", h, "MyIngress.to_port", vec![1])
                .expect("modified");
            let h = route_handle(e, route_key(2, 0x80, 1));
            e.table_modify("MyIngress.route", h, "MyIngress.logged", vec![2])
                .expect("modified");
            let h = route_handle(e, route_key(5, 0x40, 2));
            e.table_modify("MyIngress.route", h, "MyIngress.mark", vec![6])
                .expect("modified");
        },
        |e| {
            e.table_set_default("MyIngress.by_port", "MyIngress.stop", vec![])
                .expect("set");
            e.table_set_default("MyIngress.config_table", "MyIngress.config", vec![7])
                .expect("set");
            e.table_set_default("MyIngress.by_queue", "MyIngress.mark", vec![40])
                .expect("set");
            e.table_set_default("MyIngress.by_dst", "MyIngress.mark", vec![5])
                .expect("set");
            e.table_set_default("MyIngress.route", "MyIngress.mark", vec![9])
                .expect("set");
        },
        |e| {
            let h = handle(e, "MyIngress.by_type", &[0x0800]);
            e.table_delete("MyIngress.by_type", h).expect("deleted");
            let h = handle(e, "MyIngress.by_port", &[2]);
            e.table_delete("MyIngress.by_port", h).expect("deleted");
            let h = handle(e, "MyIngress.by_dst", &[1]);
            e.table_delete("MyIngress.by_dst", h).expect("deleted");
            let h = route_handle(e, route_key(2, 0, 0));
            e.table_delete("MyIngress.route", h).expect("deleted");
        },
        |e| {
            for t in ["by_port", "config_table", "by_queue", "by_dst", "route"] {
                e.table_reset_default(&format!("MyIngress.{t}"))
                    .expect("reset");
            }
        },
        |e| {
            for t in ["by_type", "by_port", "by_queue", "by_dst", "route"] {
                e.table_clear(&format!("MyIngress.{t}")).expect("cleared");
            }
        },
    ];
    let mut rng = Rng::new(11);
    let mut t_ns = 0;
    for (step, change) in changes.iter().enumerate() {
        change(&mut native);
        change(&mut interpreted);
        let sends: Vec<(u16, Vec<u8>, u64)> = (0..300)
            .map(|_| {
                t_ns += 1000;
                (pick(&mut rng, 5) as u16, typed_frame(&mut rng), t_ns)
            })
            .collect();
        let what = format!("change {step}");
        let out = same_frames_out(&mut native, &mut interpreted, &sends, &what);
        assert!(out > 50, "{what}: {out} frames out");
    }
}

#[test]
fn a_copy_of_the_state_applies_its_own_tables_in_place() {
    let mut e = Engine::with_jit(IN_PLACE, TmConfig::default(), 1, true).expect("loads");
    entries(&mut e);
    let copy = e.main.st.clone();
    let h = handle(&e, "MyIngress.by_port", &[1]);
    e.table_modify("MyIngress.by_port", h, "MyIngress.to_port", vec![3])
        .expect("modified");
    e.table_set_default("MyIngress.config_table", "MyIngress.config", vec![9])
        .expect("set");
    let frame = |e: &mut Engine| {
        let f = [&[0u8; 12][..], &[0x08, 0x00], &[0; 20]].concat();
        e.send(1, &f, 1000).expect("sent");
        e.drain();
        e.take_received()
    };
    let changed = frame(&mut e);
    // The copy's entries and views are its own: dropping the original's
    // buffers (by changing them again) leaves the copy's lookups intact.
    e.table_clear("MyIngress.by_port").expect("cleared");
    e.main.st = copy;
    let restored = frame(&mut e);
    assert_eq!(changed.len(), 1);
    assert_eq!(restored.len(), 1);
    assert_eq!((changed[0].port, restored[0].port), (3, 2));
    // config(cap) is written to the source address's low 32 bits.
    assert_eq!(changed[0].frame[8..12], 9u32.to_be_bytes());
    assert_eq!(restored[0].frame[8..12], 100u32.to_be_bytes());
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

/// The packing and extraction functions of `plan`, compiled on their own.
fn packer(plan: &pack::Plan) -> (Packer, Unpacker) {
    let mut module = new_module().expect("host supported");
    let (mut ctx, mut fctx) = (module.make_context(), FunctionBuilderContext::new());
    let mut define = |direction| {
        let id = pack::define(&mut module, &mut ctx, &mut fctx, plan, direction, 0);
        module.clear_context(&mut ctx);
        id.expect("compiles")
    };
    let (pack_id, extract_id) = (
        define(pack::Direction::Pack),
        define(pack::Direction::Extract),
    );
    module.finalize_definitions().expect("finalizes");
    let memory = run::Memory::new(module);
    (
        Packer::new(&memory, pack_id, plan.fields(), plan.written()).expect("finalized"),
        Unpacker::new(&memory, extract_id, plan.fields(), plan.read()).expect("finalized"),
    )
}

#[test]
fn random_layouts_pack_and_extract_as_the_bit_writer_and_reader_do() {
    let mut rng = Rng::new(11);
    for round in 0..300 {
        // Fields of 1 to 64 bits back to back, in slots taken in any order,
        // padded to whole bytes.
        let n = 1 + pick(&mut rng, 14);
        let mut parts = vec![];
        let mut at = 0;
        for _ in 0..n {
            // Each field within the 8 bytes from its first byte (as headers'
            // fields are, nearly all): one load extracts it.
            let w = match pick(&mut rng, 4) {
                0 => 64,
                1 => 8 * (1 + pick(&mut rng, 8) as u32),
                _ => 1 + pick(&mut rng, 64) as u32,
            }
            .min(64 - at % 8);
            parts.push((pick(&mut rng, 40) as u32, at, w));
            at += w;
        }
        let pad = (8 - at % 8) % 8;
        if pad > 0 {
            parts.push((40, at, pad));
        }
        let plan = pack::Plan {
            parts: parts.clone(),
            bytes: (at + pad) / 8,
        };
        let (native, extract) = packer(&plan);
        // Slot values with bits above their fields' widths set too.
        let fields: Vec<u64> = (0..41).map(|_| rng.next_u64()).collect();
        let mut expected = vec![];
        let mut w = crate::bits::BitWriter::new(&mut expected);
        for &(f, _, width) in &parts {
            w.push(width, u128::from(fields[f as usize]) & mask(width));
        }
        w.finish();
        let mut out = vec![0xa5; plan.written() + 3];
        assert!(native.pack(&fields, &mut out));
        assert_eq!(
            &out[..expected.len()],
            &expected[..],
            "round {round}: {parts:?}"
        );
        assert!(out[expected.len()..plan.written()].iter().all(|&b| b == 0));
        assert_eq!(out[plan.written()..], [0xa5; 3], "nothing past the words");
        let slots = plan.fields();
        assert!(
            !native.pack(&fields[..slots - 1], &mut out),
            "a slot missing"
        );
        assert!(!native.pack(&fields, &mut out[..plan.written() - 1]));
        // Extraction reads back what was packed, each slot cut to its field.
        assert!(plan.extractable());
        let mut frame = expected.clone();
        frame.extend((0..8).map(|_| rng.next_u64() as u8));
        let mut slots = vec![u64::MAX; 41];
        assert!(!extract.extract(&frame[..plan.read() - 1], &mut slots));
        assert!(!extract.extract(&frame, &mut slots[..plan.fields() - 1]));
        assert_eq!(
            slots,
            vec![u64::MAX; 41],
            "a refused extraction writes nothing"
        );
        assert!(extract.extract(&frame, &mut slots));
        // A slot two fields share holds the later one.
        for (i, &(f, at, width)) in parts.iter().enumerate() {
            if parts[i + 1..].iter().any(|&(g, ..)| g == f) {
                continue;
            }
            let want = crate::bits::get_bits(&frame, at as usize, width) as u64;
            assert_eq!(
                slots[f as usize], want,
                "round {round}: field at {at}, {width} bits"
            );
        }
    }
}

#[test]
fn compiled_headers_and_checksum_inputs_pack_as_interpreted() {
    let mut rng = Rng::new(12);
    let mut seen = (0, 0);
    for json in [L3, TABLES, META, PARSER, WIDE, FORWARD, FEEDBACK] {
        let mut native = crate::load::load(json).expect("fixture loads");
        compile(&mut native);
        let mut interpreted = native.clone();
        strip(&mut interpreted);
        for _ in 0..50 {
            let mut pkt = Packet::new(&native);
            for f in 0..native.fields.len() as u32 {
                let v = u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64());
                pkt.phv
                    .set(&native, f, v & mask(native.fields[f as usize].width));
            }
            for v in pkt.phv.valid.iter_mut() {
                *v = pick(&mut rng, 5) != 0;
            }
            for h in 0..native.headers.len() {
                seen.0 += usize::from(native.headers[h].native_emit.is_some());
                let emit = |p: &Program| {
                    let mut out = vec![];
                    let mut w = crate::bits::BitWriter::new(&mut out);
                    crate::exec::emit_header_bits(p, &pkt, h as u32, &mut w);
                    w.finish();
                    out
                };
                assert_eq!(emit(&native), emit(&interpreted), "header {h}");
            }
            for (c, i) in native.calculations.iter().zip(&interpreted.calculations) {
                seen.1 += usize::from(c.packed.as_ref().is_some_and(|pk| pk.native.is_some()));
                let (mut a, mut b) = (vec![], vec![]);
                crate::exec::pack_inputs(&native, &pkt, c, &mut a);
                crate::exec::pack_inputs(&interpreted, &pkt, i, &mut b);
                assert_eq!(a, b, "calculation {}", c.name);
            }
        }
    }
    assert!(seen.0 > 0 && seen.1 > 0, "compiled: {seen:?}");
}
