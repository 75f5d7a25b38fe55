//! Whole programs with and without machine code: fixtures with entries on
//! random frames through the engine (every output byte, statistics,
//! registers, counters, digests), tables applied in place through every
//! change to them, and switching the JIT off and on.

use super::test_fixtures::*;
use super::*;
use crate::bits::mask;
use crate::engine::Engine;
use crate::flat::random::{pick, FORWARD};
use crate::hash::Rng;
use crate::program::MatchKind;
use crate::state::CounterCell;
use crate::tables::MatchValue;
use bufferlab_tm::TmConfig;

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
