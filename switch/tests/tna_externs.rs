//! Tofino externs on the engine, through its public API: Lpf/Wred (indexed and
//! direct) configured as BF Runtime configures them, RegisterParam written through
//! the register API, MathUnit, DirectRegisterAction and a CRC ActionSelector. The
//! programs are tests/p4/tna/*.p4, compiled into tests/engine/fixtures/tna/
//! (`bufferlab-p4c tests/p4/tna/X.p4 -o tests/engine/fixtures/tna/X.json`); each
//! writes what it computes into a report header after UDP, read back here.

use bufferlab_engine::engine::Engine;
use bufferlab_engine::error::RuntimeError;
use bufferlab_engine::externs::{LpfMode, LpfSpec, WredSpec};
use bufferlab_engine::tables::MatchValue;
use bufferlab_tm::TmConfig;

const LPF_WRED: &str = include_str!("../../tests/engine/fixtures/tna/lpf_wred.json");
const PARAM_MATH: &str = include_str!("../../tests/engine/fixtures/tna/param_math.json");
const DIRECT_REGISTER: &str = include_str!("../../tests/engine/fixtures/tna/direct_register.json");
const HASH_SELECT: &str = include_str!("../../tests/engine/fixtures/tna/hash_select.json");

/// Where the report header starts: Ethernet, IPv4, UDP.
const REPORT: usize = 14 + 20 + 8;
/// Samples 1 ms apart, with 1 ms time constants: each step keeps e^-1.
const MS: u64 = 1_000_000;

fn engine(json: &str) -> Engine {
    Engine::new(json, TmConfig::default(), 1).expect("the fixture loads")
}

/// A UDP frame from IPv4 source `src` carrying `report`.
fn frame(src: u32, report: &[u8]) -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0x08, 0x00]);
    let total = (20 + 8 + report.len()) as u16;
    f.extend_from_slice(&[0x45, 0]);
    f.extend_from_slice(&total.to_be_bytes());
    f.extend_from_slice(&[0, 0, 0, 0, 64, 17, 0, 0]);
    f.extend_from_slice(&src.to_be_bytes());
    f.extend_from_slice(&[10, 0, 0, 99]);
    f.extend_from_slice(&[0x04, 0xd2, 0x16, 0x2e]);
    f.extend_from_slice(&(8 + report.len() as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(report);
    f
}

/// Sends one frame at `t` and returns the report of the one frame that comes out.
fn run(e: &mut Engine, port: u16, f: &[u8], t: u64) -> (u16, Vec<u8>) {
    e.send(port, f, t).expect("sent");
    e.drain();
    let out = e.take_received();
    assert_eq!(out.len(), 1, "one frame out");
    (out[0].port, out[0].frame[REPORT..].to_vec())
}

/// lpf_wred.p4's report for `sample` from `src` on port 1 at `t`: (lpf, direct
/// lpf, wred, direct wred).
fn filters(e: &mut Engine, src: u32, sample: u16, t: u64) -> (u16, u16, u8, u8) {
    let mut r = sample.to_be_bytes().to_vec();
    r.extend_from_slice(&[0; 6]);
    let (_, r) = run(e, 1, &frame(src, &r), t);
    let w = |i: usize| u16::from_be_bytes([r[i], r[i + 1]]);
    (w(2), w(4), r[6], r[7])
}

fn sample_spec(tau_ns: f64) -> LpfSpec {
    LpfSpec {
        mode: LpfMode::Sample,
        gain_ns: tau_ns,
        decay_ns: tau_ns,
        scale_down: 0,
    }
}

#[test]
fn unconfigured_filters_pass_the_sample_and_never_drop() {
    let mut e = engine(LPF_WRED);
    let src = 0x0a00_0001;
    e.table_add(
        "Ingress.lpf_flows",
        vec![MatchValue::Exact(u128::from(src))],
        "Ingress.filter_flow",
        vec![],
        0,
    )
    .expect("added");
    e.table_add(
        "Ingress.wred_flows",
        vec![MatchValue::Exact(u128::from(src))],
        "Ingress.police_flow",
        vec![],
        0,
    )
    .expect("added");
    assert_eq!(filters(&mut e, src, 1234, 0), (1234, 1234, 0, 0xa));
    assert_eq!(filters(&mut e, src, 7, MS), (7, 7, 0, 0xa));
    // No entry: the direct outputs stay as the packet carried them (0).
    assert_eq!(filters(&mut e, 0x0a00_0002, 9, 2 * MS), (9, 0, 0, 0));
}

#[test]
fn an_indexed_lpf_averages_by_elapsed_time() {
    let mut e = engine(LPF_WRED);
    // Port 1's cell, named with its pipe as P4Info names it.
    e.lpf_set("pipe.Ingress.port_lpf", 1, sample_spec(MS as f64))
        .expect("set");
    let e1 = (-1.0f64).exp();
    assert_eq!(filters(&mut e, 1, 1000, 0).0, 1000, "first sample");
    // 1000·e^-1 = 367.88, then 367.88·e^-1 = 135.34.
    assert_eq!(filters(&mut e, 1, 0, MS).0, (1000.0 * e1) as u16);
    assert_eq!(filters(&mut e, 1, 0, 2 * MS).0, 135);
    // Rising towards 1000 again: 1000 + (135.34 - 1000)·e^-1 = 681.9.
    assert_eq!(filters(&mut e, 1, 1000, 3 * MS).0, 681);
    let cell = e.lpf_get("Ingress.port_lpf", 1).expect("read");
    assert_eq!(cell.last_ns, Some(3 * MS));
    assert!((cell.y - (1000.0 - (1000.0 - 1000.0 * e1 * e1) * e1)).abs() < 1e-9);
    // Port 2's cell is another cell, still unconfigured.
    assert_eq!(
        e.lpf_get("Ingress.port_lpf", 2).expect("read").spec,
        LpfSpec::default()
    );
}

#[test]
fn a_direct_lpf_filters_per_entry_in_rate_mode() {
    let mut e = engine(LPF_WRED);
    let (a, b) = (0x0a00_0001u32, 0x0a00_0002u32);
    let ha = e
        .table_add(
            "Ingress.lpf_flows",
            vec![MatchValue::Exact(u128::from(a))],
            "Ingress.filter_flow",
            vec![],
            0,
        )
        .expect("added");
    e.table_add(
        "Ingress.lpf_flows",
        vec![MatchValue::Exact(u128::from(b))],
        "Ingress.filter_flow",
        vec![],
        0,
    )
    .expect("added");
    let rate = LpfSpec {
        mode: LpfMode::Rate,
        gain_ns: MS as f64,
        decay_ns: MS as f64,
        scale_down: 1,
    };
    // A direct instance's cells are its table's entries, by handle.
    e.lpf_set("Ingress.flow_lpf", u64::from(ha), rate)
        .expect("set");
    // RATE: y = 100, then 100·e^-1 + 100 = 136.79, then 136.79·e^-1 + 100 = 150.32;
    // the output is halved (scale-down 1).
    assert_eq!(filters(&mut e, a, 100, 0).1, 50);
    assert_eq!(filters(&mut e, a, 100, MS).1, 68);
    assert_eq!(filters(&mut e, a, 100, 2 * MS).1, 75);
    assert_eq!(
        filters(&mut e, b, 100, 3 * MS).1,
        100,
        "entry b: unconfigured"
    );
}

#[test]
fn wred_drops_between_the_thresholds_by_the_average() {
    let mut e = engine(LPF_WRED);
    let spec = WredSpec {
        time_constant_ns: 0.0,
        min_thresh: 100,
        max_thresh: 200,
        max_probability: 1.0,
    };
    e.wred_set("Ingress.port_wred", 1, spec).expect("set");
    assert_eq!(filters(&mut e, 1, 99, 0).2, 0, "below the minimum");
    assert_eq!(
        filters(&mut e, 1, 200, MS).2,
        1,
        "at the maximum: drop_value"
    );
    // Between, with probability 1 at the top: about half of the samples at 150.
    let drops: u32 = (0..400)
        .map(|i| u32::from(filters(&mut e, 1, 150, (2 + i) * MS).2))
        .sum();
    assert!(
        (140..=260).contains(&drops),
        "{drops} of 400 dropped at p = 0.5"
    );
    // An average, not the sample: τ = 1 ms from 0 towards 300 reaches 189.6 < 200.
    let avg = WredSpec {
        time_constant_ns: MS as f64,
        min_thresh: 190,
        max_thresh: 190,
        max_probability: 1.0,
    };
    e.wred_set("Ingress.port_wred", 1, avg).expect("set");
    assert_eq!(filters(&mut e, 1, 0, 500 * MS).2, 0);
    assert_eq!(filters(&mut e, 1, 300, 501 * MS).2, 0, "average 189.6");
    assert_eq!(filters(&mut e, 1, 300, 502 * MS).2, 1, "average 259.4");
}

#[test]
fn a_direct_wred_returns_its_own_values() {
    let mut e = engine(LPF_WRED);
    let src = 0x0a00_0001u32;
    let h = e
        .table_add(
            "Ingress.wred_flows",
            vec![MatchValue::Exact(u128::from(src))],
            "Ingress.police_flow",
            vec![],
            0,
        )
        .expect("added");
    let spec = WredSpec {
        time_constant_ns: 0.0,
        min_thresh: 10,
        max_thresh: 10,
        max_probability: 1.0,
    };
    e.wred_set("Ingress.flow_wred", u64::from(h), spec)
        .expect("set");
    assert_eq!(filters(&mut e, src, 5, 0).3, 0xa, "no_drop_value");
    assert_eq!(filters(&mut e, src, 20, MS).3, 0xd, "drop_value");
}

#[test]
fn bad_filter_configuration_is_refused_with_the_right_error() {
    let mut e = engine(LPF_WRED);
    let nf = e
        .lpf_set("Ingress.nope", 0, LpfSpec::default())
        .unwrap_err();
    assert!(matches!(nf, RuntimeError::NotFound(_)), "{nf:?}");
    let oor = e
        .lpf_set("Ingress.port_lpf", 512, LpfSpec::default())
        .unwrap_err();
    assert!(matches!(oor, RuntimeError::OutOfRange(_)), "{oor:?}");
    let bad = LpfSpec {
        scale_down: 40,
        ..LpfSpec::default()
    };
    let inv = e.lpf_set("Ingress.port_lpf", 0, bad).unwrap_err();
    assert!(
        matches!(inv, RuntimeError::InvalidArgument(ref m) if m.contains("0..=31")),
        "{inv:?}"
    );
    let wrong_family = e
        .wred_set("Ingress.port_lpf", 0, WredSpec::default())
        .unwrap_err();
    assert!(
        matches!(wrong_family, RuntimeError::NotFound(_)),
        "{wrong_family:?}"
    );
}

/// param_math.p4's report for `input`: (count, 3·input, 1000/input).
fn math(e: &mut Engine, input: u32, t: u64) -> (u32, u32, u32) {
    let mut r = input.to_be_bytes().to_vec();
    r.extend_from_slice(&[0; 12]);
    let (_, r) = run(e, 1, &frame(1, &r), t);
    let w = |i: usize| u32::from_be_bytes([r[i], r[i + 1], r[i + 2], r[i + 3]]);
    (w(4), w(8), w(12))
}

#[test]
fn a_register_param_limits_a_counter_and_the_control_plane_moves_it() {
    let mut e = engine(PARAM_MATH);
    let counts: Vec<u32> = (0..5).map(|i| math(&mut e, 10, i * MS).0).collect();
    assert_eq!(counts, [1, 2, 3, 3, 3], "initial limit 3");
    // The RegisterParam is a one-cell register to the control plane.
    assert_eq!(e.register_read("Ingress.limit", 0).expect("read"), 3);
    e.register_write("Ingress.limit", 0, 5).expect("written");
    let counts: Vec<u32> = (5..8).map(|i| math(&mut e, 10, i * MS).0).collect();
    assert_eq!(counts, [4, 5, 5]);
}

#[test]
fn math_units_approximate_as_tofinos_do() {
    let mut e = engine(PARAM_MATH);
    // 10 fits the 4-bit mantissa: 3·10 and 1000/10 are exact.
    let (_, tripled, quotient) = math(&mut e, 10, 0);
    assert_eq!((tripled, quotient), (30, 100));
    // 100 = 0b1100100 keeps 1100: 3·(96·2) = 288; 1000/100 from entry 12
    // (8/12·250 = 166.7 → 167) >> 4 = 10.
    let (_, tripled, quotient) = math(&mut e, 100, MS);
    assert_eq!((tripled, quotient), (288, 10));
    // 1000/7: entry 14 (8/14·250 = 142.9 → 143), exponent 0.
    let (_, tripled, quotient) = math(&mut e, 7, 2 * MS);
    assert_eq!((tripled, quotient), (21, 143));
    let (_, tripled, quotient) = math(&mut e, 0, 3 * MS);
    assert_eq!((tripled, quotient), (0, 0));
}

/// direct_register.p4's report for a packet from `src`: (hits, missed).
fn direct_hits(e: &mut Engine, src: u32, t: u64) -> (u32, u8) {
    let (_, r) = run(e, 1, &frame(src, &[0; 5]), t);
    (u32::from_be_bytes([r[0], r[1], r[2], r[3]]), r[4])
}

#[test]
fn a_direct_register_action_counts_per_entry_and_for_the_miss() {
    let mut e = engine(DIRECT_REGISTER);
    for src in [1u128, 2] {
        e.table_add(
            "Ingress.flows",
            vec![MatchValue::Exact(src)],
            "Ingress.hit",
            vec![],
            0,
        )
        .expect("added");
    }
    let seen: Vec<(u32, u8)> = [1, 1, 2, 3, 1, 4]
        .iter()
        .enumerate()
        .map(|(i, &src)| direct_hits(&mut e, src, i as u64 * MS))
        .collect();
    // Entries 1 and 2 count apart; the misses (3, 4) share the table's miss cell.
    assert_eq!(seen, [(1, 0), (2, 0), (1, 0), (1, 1), (3, 0), (2, 1)]);
}

/// CRC-16/ARC, bit by bit (the engine's is table-driven).
fn crc16_arc(data: &[u8]) -> u16 {
    let mut crc = 0u16;
    for &b in data {
        crc ^= u16::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xa001
            } else {
                crc >> 1
            };
        }
    }
    crc
}

#[test]
fn an_action_selector_picks_the_member_by_the_crc_of_the_flow() {
    let mut e = engine(HASH_SELECT);
    let prof = "Ingress.next_hop_selector";
    for (m, port) in [(0u32, 5u128), (1, 6), (2, 7)] {
        e.profile_member_set(prof, m, "Ingress.forward", vec![port], false)
            .expect("member");
    }
    e.profile_group_set(prof, 1, vec![0, 1, 2], false)
        .expect("group");
    e.table_add_indirect(
        "Ingress.next_hop",
        vec![MatchValue::Exact(0x0a00_0063)],
        bufferlab_engine::tables::EntryAction::Group(1),
        0,
    )
    .expect("entry");
    let mut ports = std::collections::BTreeSet::new();
    for (i, src) in (0x0a00_0001u32..0x0a00_0011).enumerate() {
        let mut key = src.to_be_bytes().to_vec();
        key.extend_from_slice(&0x04d2u16.to_be_bytes());
        // Hash<bit<8>>: the CRC16's low 8 bits choose among the three members.
        let want = 5 + (crc16_arc(&key) & 0xff) % 3;
        let (port, _) = run(&mut e, 1, &frame(src, &[0; 31]), i as u64 * MS);
        assert_eq!(port, want, "source {src:#x}");
        ports.insert(port);
    }
    assert_eq!(ports.len(), 3, "16 flows spread over the three members");
}

#[test]
fn hashes_over_the_catalogue_input_give_the_check_values() {
    let mut e = engine(HASH_SELECT);
    let mut r = b"123456789".to_vec();
    r.extend_from_slice(&[0; 22]);
    let (port, r) = run(&mut e, 2, &frame(1, &r), 0);
    assert_eq!(port, 2, "no next_hop entry: back out of its port");
    assert_eq!(&r[..9], b"123456789");
    assert_eq!((r[9], r[10]), (0xf4, 0x31), "CRC-8/SMBUS, XOR8");
    assert_eq!(u16::from_be_bytes([r[11], r[12]]), 0xbb3d, "CRC-16/ARC");
    let w32 = |i: usize| u32::from_be_bytes([r[i], r[i + 1], r[i + 2], r[i + 3]]);
    assert_eq!(w32(13), 0xcbf4_3926, "CRC-32/ISO-HDLC");
    assert_eq!(w32(17), 0xe306_9283, "CRC-32C");
    let crc64 = u64::from_be_bytes(r[21..29].try_into().expect("8 bytes"));
    assert_eq!(crc64, 0x6c40_df5f_0b49_7347, "CRC-64/ECMA-182");
}

#[test]
fn a_symmetric_hash_is_the_same_both_ways_and_hashes_the_smaller_first() {
    let mut e = engine(HASH_SELECT);
    // frame() sends source port 0x04d2 to 0x162e, to 10.0.0.99.
    let (_, r) = run(&mut e, 1, &frame(0x0a00_0001, &[0; 31]), 0);
    let there = u16::from_be_bytes([r[29], r[30]]);
    let mut key = vec![10, 0, 0, 1, 10, 0, 0, 99];
    key.extend_from_slice(&[0x04, 0xd2, 0x16, 0x2e]);
    assert_eq!(there, crc16_arc(&key));
    // The reply: addresses and ports swapped in the frame.
    let mut back = frame(0x0a00_0063, &[0; 31]);
    back[30..34].copy_from_slice(&[10, 0, 0, 1]);
    back[34..38].copy_from_slice(&[0x16, 0x2e, 0x04, 0xd2]);
    let (_, r) = run(&mut e, 1, &back, MS);
    assert_eq!(u16::from_be_bytes([r[29], r[30]]), there);
    // Only the ports in reverse order: they are put back in order, the addresses stay.
    let mut ports = frame(0x0a00_0001, &[0; 31]);
    ports[34..38].copy_from_slice(&[0x16, 0x2e, 0x04, 0xd2]);
    let (_, r) = run(&mut e, 1, &ports, 2 * MS);
    assert_eq!(u16::from_be_bytes([r[29], r[30]]), there);
}

const T2NA_STATEFUL: &str = include_str!("../../tests/engine/fixtures/tna/t2na_stateful.json");

/// t2na_stateful.p4's (out1, out2) for operation `op` on `arg` (lanes and mask for
/// the min/max operation).
fn t2na(e: &mut Engine, op: u8, arg: u32, lanes: u128, mask: u16, t: u64) -> (u32, u32) {
    let mut r = vec![op];
    r.extend_from_slice(&arg.to_be_bytes());
    r.extend_from_slice(&lanes.to_be_bytes());
    r.extend_from_slice(&mask.to_be_bytes());
    r.extend_from_slice(&[0; 8]);
    let (_, r) = run(e, 1, &frame(1, &r), t);
    let w = |i: usize| u32::from_be_bytes([r[i], r[i + 1], r[i + 2], r[i + 3]]);
    (w(23), w(27))
}

#[test]
fn a_t2na_fifo_wraps_around_its_cells() {
    let mut e = engine(T2NA_STATEFUL);
    let mut t = 0;
    let mut op = |e: &mut Engine, op: u8, arg: u32| {
        t += MS;
        t2na(e, op, arg, 0, 0, t).0
    };
    // Fill (cells 0..3), take two, put two more: they land in cells 0 and 1.
    let addrs: Vec<u32> = (1..=4).map(|v| op(&mut e, 1, v)).collect();
    assert_eq!(addrs, [0, 1, 2, 3]);
    assert_eq!((op(&mut e, 2, 0), op(&mut e, 2, 0)), (1, 2));
    assert_eq!((op(&mut e, 1, 5), op(&mut e, 1, 6)), (0, 1));
    assert_eq!(op(&mut e, 1, 7), 0xffff_ffff, "full again: overflow");
    let rest: Vec<u32> = (0..5).map(|_| op(&mut e, 2, 0)).collect();
    assert_eq!(rest, [3, 4, 5, 6, 0xeeee_eeee]);
    // The stack is another register with its own pointer.
    assert_eq!(
        (op(&mut e, 3, 9), op(&mut e, 4, 0), op(&mut e, 4, 0)),
        (0, 9, 0xdddd_dddd)
    );
}

#[test]
fn t2na_register_action2_and_min_max_lanes() {
    let mut e = engine(T2NA_STATEFUL);
    assert_eq!(
        t2na(&mut e, 5, 0x13, 0, 0, 0),
        (0, 0x13),
        "cell 3: before, after"
    );
    assert_eq!(t2na(&mut e, 5, 0x23, 0, 0, MS), (0x13, 0x36));
    assert_eq!(t2na(&mut e, 5, 0x03, 0, 0, 2 * MS), (0x36, 0x39));
    // Lane k holds 0x10 - k, but lane 9 holds 0x01 as lane 15 does: the lower wins.
    let mut lanes = 0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10u128;
    lanes = lanes & !(0xff << 72) | 0x01 << 72;
    assert_eq!(t2na(&mut e, 6, 0, lanes, 0xffff, 3 * MS), (1, 9));
    assert_eq!(t2na(&mut e, 6, 0, lanes, 0x8000, 4 * MS), (1, 15));
    assert_eq!(t2na(&mut e, 6, 0, lanes, 0x0003, 5 * MS), (0x0f, 1));
}

const T2NA_PARSER_COUNTER: &str =
    include_str!("../../tests/engine/fixtures/tna/t2na_parser_counter.json");

#[test]
fn a_t2na_parser_counter_stack_saves_and_restores() {
    let mut e = engine(T2NA_PARSER_COUNTER);
    let mut send = |report: [u8; 4], t: u64| -> Vec<u8> {
        let mut f = vec![0xff; 6];
        f.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0x88, 0xb5]);
        f.extend_from_slice(&report);
        f.extend_from_slice(&[0; 3]);
        e.send(1, &f, t).expect("sent");
        e.drain();
        let out = e.take_received();
        assert_eq!(out.len(), 1);
        out[0].frame[18..].to_vec()
    };
    // Outer 10, inner 4, rest 6, updating: 10 - 4 - 6 = 0 at the end.
    assert_eq!(send([10, 4, 6, 1], 0), [1, 0, 1]);
    // Not updating: the pop restores 10, and 10 - 6 = 4.
    assert_eq!(send([10, 4, 6, 0], MS), [1, 0, 0]);
    // An inner length larger than the outer wraps the saved counter negative:
    // 2 - 4 = -2, then -2 - 0: never zero.
    assert_eq!(send([2, 4, 0, 1], 2 * MS), [1, 0, 0]);
}

#[test]
fn the_control_plane_reads_and_writes_an_entrys_direct_register_cell() {
    let mut e = engine(DIRECT_REGISTER);
    let h = e
        .table_add(
            "Ingress.flows",
            vec![MatchValue::Exact(1)],
            "Ingress.hit",
            vec![],
            0,
        )
        .expect("added");
    direct_hits(&mut e, 1, 0);
    direct_hits(&mut e, 1, MS);
    assert_eq!(
        e.direct_register_read("pipe.Ingress.entry_hits", h)
            .expect("read"),
        2
    );
    e.direct_register_write("Ingress.entry_hits", h, 40)
        .expect("written");
    assert_eq!(direct_hits(&mut e, 1, 2 * MS), (41, 0));
    let wide = e
        .direct_register_write("Ingress.entry_hits", h, 1 << 32)
        .unwrap_err();
    assert!(matches!(wide, RuntimeError::InvalidArgument(_)), "{wide:?}");
    let nf = e.direct_register_read("Ingress.nothing", h).unwrap_err();
    assert!(matches!(nf, RuntimeError::NotFound(_)), "{nf:?}");
}
