//! Engine tests: routing, drops, determinism and the delivery paths.

use super::*;
use crate::state::CounterCell;
use crate::tables::MatchValue;

const L3: &str = include_str!("../../../tests/engine/fixtures/l3.json");

fn ipv4_frame(dst: [u8; 4], ttl: u8) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00];
    let mut ip = vec![0x45, 0, 0, 20, 0, 0, 0x40, 0, ttl, 17, 0, 0, 10, 0, 0, 1];
    ip.extend_from_slice(&dst);
    let c = crate::hash::csum16(&ip) as u16;
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(b"payload");
    f
}

fn engine() -> Engine {
    let mut e = Engine::new(L3, TmConfig::default(), 1).unwrap();
    e.table_add(
        "MyIngress.ipv4_lpm",
        vec![MatchValue::Lpm(0x0a00_0200, 24)],
        "MyIngress.ipv4_forward",
        vec![0x0000_0000_0abc, 3],
        0,
    )
    .unwrap();
    e
}

#[test]
fn routes_decrements_ttl_and_fixes_checksum() {
    let mut e = engine();
    e.send(1, &ipv4_frame([10, 0, 2, 7], 64), 1000).unwrap();
    e.drain();
    let out = e.take_received();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].port, 3);
    let f = &out[0].frame;
    assert_eq!(&f[0..6], &[0, 0, 0, 0, 0x0a, 0xbc]);
    assert_eq!(&f[6..12], &[0, 0, 0, 0, 0, 2]);
    assert_eq!(f[22], 63);
    assert_eq!(crate::hash::csum16(&f[14..34]), 0);
    assert_eq!(&f[34..], b"payload");
    assert_eq!(
        e.counter_read("MyIngress.port_bytes", 3).unwrap(),
        CounterCell {
            packets: 1,
            bytes: f.len() as u64
        }
    );
}

#[test]
fn miss_drops_and_counts() {
    let mut e = engine();
    e.send(1, &ipv4_frame([10, 0, 3, 7], 64), 0).unwrap();
    e.drain();
    assert!(e.take_received().is_empty());
    assert_eq!(e.stats.dropped_by_program, 1);
}

#[test]
fn same_inputs_same_outputs() {
    let run = || {
        let mut e = engine();
        for i in 0..50u64 {
            e.send(
                (i % 4) as u16,
                &ipv4_frame([10, 0, 2, i as u8], 64),
                i * 100,
            )
            .unwrap();
        }
        e.drain();
        e.take_received()
    };
    assert_eq!(run(), run());
}

#[test]
fn a_frame_sent_by_buffer_leaves_as_one_sent_by_copy() {
    let run = |by_buffer: bool| {
        let mut e = engine();
        for i in 0..4u8 {
            let mut frame = ipv4_frame([10, 0, 2, i], 64 - i);
            let t = u64::from(i) * 1000;
            if by_buffer {
                e.send_buffer(1, &mut frame, t).unwrap();
                assert!(frame.is_empty(), "the caller gets an empty buffer back");
            } else {
                e.send(1, &frame, t).unwrap();
            }
        }
        e.drain();
        e.take_received()
    };
    let out = run(true);
    assert_eq!(out.len(), 4);
    assert_eq!(out, run(false));
}

#[test]
fn drain_received_into_appends_in_arrival_order() {
    let mut e = engine();
    let mut out = Vec::new();
    e.send(1, &ipv4_frame([10, 0, 2, 1], 64), 0).unwrap();
    e.drain();
    e.drain_received_into(&mut out);
    e.send(1, &ipv4_frame([10, 0, 2, 2], 64), 1000).unwrap();
    e.drain();
    e.drain_received_into(&mut out);
    assert_eq!(
        out.iter().map(|o| o.frame[33]).collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert_eq!(
        out.iter().map(|o| o.t_ns).collect::<Vec<_>>(),
        vec![0, 1000]
    );
    assert!(e.take_received().is_empty(), "drained frames are gone");
}
