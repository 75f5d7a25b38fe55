//! Honouring 802.3x PAUSE (whole port) and PFC (per queue) from the peer.

mod common;

use bufferlab_tm::{ConfigError, PortConfig, Scheduling};
use common::{drain, tm_with, GBPS};

fn port() -> PortConfig {
    PortConfig {
        rate_bps: GBPS,
        num_queues: 8,
        scheduling: Scheduling::StrictPriority,
        ..PortConfig::default()
    }
}

#[test]
fn pause_holds_the_port_and_the_frame_on_the_wire_finishes() {
    let mut tm = tm_with(1_000_000, 0, port());
    for k in 0..3 {
        tm.enqueue(0, 0, 0, 1000, k).expect("admitted");
    }
    let first = tm.dequeue(0).expect("starts at once");
    // PAUSE of 0xFFFF quanta at 1 Gb/s arrives mid-frame.
    let pause = bufferlab_tm::pause_quanta_ns(0xFFFF, GBPS).expect("known rate");
    assert_eq!(pause, 33_553_920);
    tm.pause(1_000, 0, 0xFF, pause).expect("port exists");
    assert_eq!(first.tx_end, 8192);
    assert_eq!(tm.next_event_time(), Some(1_000 + pause));
    let rest = drain(&mut tm);
    assert_eq!(rest[0].tx_start, 1_000 + pause);
    assert_eq!(rest[1].tx_start, 1_000 + pause + 8192);
}

#[test]
fn zero_pause_time_resumes_at_once() {
    let mut tm = tm_with(1_000_000, 0, port());
    tm.pause(0, 0, 0xFF, 1_000_000).expect("port exists");
    tm.enqueue(10, 0, 0, 1000, 1).expect("admitted");
    assert_eq!(tm.next_event_time(), Some(1_000_000));
    // XON: a new pause replaces the running one.
    tm.pause(500, 0, 0xFF, 0).expect("port exists");
    assert_eq!(tm.next_event_time(), Some(500));
    assert_eq!(tm.dequeue(500).map(|d| d.tx_start), Some(500));
}

#[test]
fn pfc_pauses_only_the_named_queues() {
    let mut tm = tm_with(1_000_000, 0, port());
    tm.pause(0, 0, 1 << 7, 50_000).expect("port exists");
    tm.enqueue(0, 0, 7, 1000, 70).expect("admitted");
    tm.enqueue(0, 0, 3, 1000, 30).expect("admitted");
    tm.enqueue(0, 0, 3, 1000, 31).expect("admitted");
    let out: Vec<(u32, u64)> = drain(&mut tm)
        .iter()
        .map(|d| (d.item, d.tx_start))
        .collect();
    // Queue 7 outranks queue 3 but is paused; queue 3 uses the wire meanwhile.
    assert_eq!(out, [(30, 0), (31, 8192), (70, 50_000)]);
}

#[test]
fn pausing_a_missing_port_is_an_error() {
    let mut tm = tm_with(1_000_000, 0, port());
    assert_eq!(
        tm.pause(0, 512, 0xFF, 1),
        Err(ConfigError::PortOutOfRange(512))
    );
}
