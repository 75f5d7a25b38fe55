//! The compiled deparser against the interpreter: fixtures' programs on
//! random fields, validity bits, frames and cursors, every output byte
//! compared.

use super::test_fixtures::{FEEDBACK, L3, META, PARSER, TABLES};
use super::*;
use crate::exec::{deparse, State};
use crate::flat::random::{pick, random_packet, FORWARD};
use crate::hash::Rng;
use crate::packet::Packet;

/// A packet of random fields and validity bits that has parsed `cursor`
/// bytes of a random frame, its output buffer left holding stale bytes.
fn packet(p: &Program, rng: &mut Rng) -> Packet {
    let mut pkt = random_packet(p, rng);
    let len = pick(rng, 120);
    pkt.data = (0..len).map(|_| rng.next_u64() as u8).collect();
    pkt.cursor = pick(rng, len + 1);
    pkt.out = (0..pick(rng, 200)).map(|_| rng.next_u64() as u8).collect();
    if pick(rng, 8) == 0 {
        pkt.flags.truncate = Some(pick(rng, 80) as u32);
    }
    pkt
}

/// `pkt` deparsed by `p`: its output and what is left of its frame.
fn deparsed(p: &Program, pkt: &Packet) -> (Vec<u8>, Vec<u8>) {
    let (mut pkt, mut st) = (pkt.clone(), State::new(p, 1));
    deparse(p, &mut st, &mut pkt);
    (pkt.out, pkt.data)
}

#[test]
fn compiled_deparsers_emit_what_the_interpreter_emits() {
    let mut rng = Rng::new(77);
    let (mut emitted, mut native_packets, mut left) = (0, 0, 0);
    // Each fixture with the headers its compiled deparser emits: forward.json's
    // PAUSE and PFC padding (fields of 128 bits) and parser.json's header with
    // a varbit are emitted by the interpreter.
    for (name, json, packed) in [
        ("l3", L3, 2),
        ("tables", TABLES, 2),
        ("meta", META, 2),
        ("forward", FORWARD, 11),
        ("feedback_maker", FEEDBACK, 6),
        ("parser", PARSER, 17),
    ] {
        let interpreted = crate::load::load(json).expect("fixture loads");
        let mut native = interpreted.clone();
        let report = compile(&mut native);
        assert_eq!(report.deparser_headers, packed, "{name}");
        let code = native.native_deparser.clone().expect("a deparser compiles");
        for _ in 0..300 {
            let pkt = packet(&interpreted, &mut rng);
            let want = deparsed(&interpreted, &pkt);
            assert_eq!(
                deparsed(&native, &pkt),
                want,
                "{name}: valid {:?}",
                pkt.phv.valid
            );
            emitted += want.0.len();
            match code.emit(&pkt.phv.fields, &pkt.phv.valid, &mut vec![]) {
                true => native_packets += 1,
                false => left += 1,
            }
        }
    }
    // Most packets have some header valid and some bytes to emit, and both
    // paths are taken.
    assert!(emitted > 6 * 300 * 20, "{emitted} bytes");
    assert!(
        native_packets > 900 && left > 300,
        "{native_packets} native, {left} left"
    );
}

#[test]
fn a_deparser_emitting_no_packed_header_stays_interpreted() {
    // parser.json's deparser emits one header with a varbit field among others.
    let mut p = crate::load::load(PARSER).expect("fixture loads");
    let unpacked: Vec<u32> = p
        .deparse_order
        .iter()
        .copied()
        .filter(|&h| !p.headers[h as usize].packed)
        .collect();
    assert_eq!(unpacked.len(), 1);
    p.deparse_order = unpacked;
    let report = compile(&mut p);
    assert_eq!(report.deparser_headers, 0);
    assert!(p.native_deparser.is_none());
}

#[test]
fn a_packet_lacking_the_slots_the_code_reads_is_deparsed_by_the_interpreter() {
    let mut p = crate::load::load(L3).expect("fixture loads");
    compile(&mut p);
    let native = p
        .native_deparser
        .clone()
        .expect("l3.json's deparser compiles");
    let mut out = vec![1, 2, 3];
    let fields = vec![0u64; p.fields.len()];
    let valid = vec![true; p.headers.len()];
    assert!(!native.emit(&fields[..1], &valid, &mut out));
    assert!(!native.emit(&fields, &valid[..1], &mut out));
    assert_eq!(out, [1, 2, 3]);
    assert!(native.emit(&fields, &valid, &mut out));
    // Ethernet and IPv4, every field 0.
    assert_eq!(out, vec![0; 14 + 20]);
}
