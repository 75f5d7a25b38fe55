//! Strict priority, DRR shares and per-queue packet rates.

mod common;

use bufferlab_tm::{PortConfig, Scheduling};
use common::{drain, tm_with, GBPS};

fn eight_queues(scheduling: Scheduling) -> PortConfig {
    PortConfig {
        rate_bps: GBPS,
        num_queues: 8,
        scheduling,
        ..PortConfig::default()
    }
}

#[test]
fn strict_priority_serves_higher_queues_first() {
    let mut tm = tm_with(1_000_000, 0, eight_queues(Scheduling::StrictPriority));
    // Queue q's frames are items 10*q + k, enqueued lowest priority first.
    for q in [0u8, 2, 7, 5] {
        for k in 0..3 {
            tm.enqueue(0, 0, q, 500, u32::from(q) * 10 + k)
                .expect("admitted");
        }
    }
    let order: Vec<u32> = drain(&mut tm).iter().map(|d| d.item).collect();
    // The frame already eligible at t=0 goes first in priority order, then the rest.
    assert_eq!(order, [70, 71, 72, 50, 51, 52, 20, 21, 22, 0, 1, 2]);
}

#[test]
fn strict_priority_preempts_between_frames_not_during() {
    let mut tm = tm_with(1_000_000, 0, eight_queues(Scheduling::StrictPriority));
    for k in 0..3 {
        tm.enqueue(0, 0, 0, 1000, k).expect("admitted");
    }
    let first = tm.dequeue(0).expect("starts at once");
    assert_eq!(first.item, 0);
    // A high-priority frame arriving mid-frame waits for the frame on the wire only.
    tm.enqueue(100, 0, 6, 1000, 60).expect("admitted");
    let rest = drain(&mut tm);
    assert_eq!(rest[0].item, 60);
    assert_eq!(rest[0].tx_start, 8192);
    assert_eq!(rest[0].enq_time, 100);
    assert_eq!(rest.iter().map(|d| d.item).collect::<Vec<_>>(), [60, 1, 2]);
}

#[test]
fn late_poll_does_not_let_a_later_arrival_jump_ahead() {
    let mut tm = tm_with(1_000_000, 0, eight_queues(Scheduling::StrictPriority));
    tm.enqueue(0, 0, 0, 1000, 0).expect("admitted");
    tm.enqueue(0, 0, 0, 1000, 1).expect("admitted");
    // A high-priority frame arrives at 10_000, after frame 1 was due to start
    // at 8192; a caller that polls only now must still see frame 1 first.
    tm.enqueue(10_000, 0, 7, 1000, 70).expect("admitted");
    let out: Vec<_> = std::iter::from_fn(|| tm.dequeue(100_000)).collect();
    let got: Vec<(u32, u64)> = out.iter().map(|d| (d.item, d.tx_start)).collect();
    assert_eq!(got, [(0, 0), (1, 8192), (70, 16384)]);
}

/// Byte share of each queue over a long backlog of mixed frame sizes.
fn drr_byte_shares(quanta: [u32; 8], active: &[u8]) -> Vec<f64> {
    let mut tm = tm_with(1 << 40, 0, eight_queues(Scheduling::drr(&quanta)));
    let sizes = [64u32, 1500, 576, 1000, 128, 1514, 300];
    for k in 0..20_000u32 {
        for &q in active {
            let bytes = sizes[((k + u32::from(q)) as usize) % sizes.len()];
            tm.enqueue(0, 0, q, bytes, k).expect("admitted");
        }
    }
    // Serve while every active queue is still backlogged.
    let mut bytes = [0u64; 8];
    let mut total = 0u64;
    while total < 10_000_000 {
        let t = tm.next_event_time().expect("backlogged");
        let d = tm.dequeue(t).expect("due");
        bytes[usize::from(d.queue)] += u64::from(d.frame_bytes);
        total += u64::from(d.frame_bytes);
    }
    for &q in active {
        assert!(tm.queue_stats(0, q).map_or(0, |s| s.depth_pkts) > 0);
    }
    active
        .iter()
        .map(|&q| bytes[usize::from(q)] as f64 / total as f64)
        .collect()
}

#[test]
fn drr_shares_follow_the_weights_within_two_percent() {
    let mut quanta = [1500; 8];
    quanta[1] = 1500;
    quanta[4] = 3000;
    quanta[6] = 6000;
    let shares = drr_byte_shares(quanta, &[1, 4, 6]);
    for (got, want) in shares.iter().zip([1.0 / 7.0, 2.0 / 7.0, 4.0 / 7.0]) {
        assert!((got - want).abs() / want < 0.02, "share {got} want {want}");
    }
}

#[test]
fn drr_with_quanta_below_the_frame_size_still_shares_fairly() {
    let mut quanta = [100; 8];
    quanta[2] = 300;
    let shares = drr_byte_shares(quanta, &[0, 2]);
    for (got, want) in shares.iter().zip([0.25, 0.75]) {
        assert!((got - want).abs() / want < 0.02, "share {got} want {want}");
    }
}

#[test]
fn queue_rate_spaces_departures_in_pps() {
    let mut cfg = PortConfig::default();
    cfg.queue_rate_pps[0] = 1000;
    let mut tm = tm_with(1_000_000, 0, cfg);
    for k in 0..5 {
        tm.enqueue(0, 0, 0, 64, k).expect("admitted");
    }
    let starts: Vec<u64> = drain(&mut tm).iter().map(|d| d.tx_start).collect();
    assert_eq!(starts, [0, 1_000_000, 2_000_000, 3_000_000, 4_000_000]);
}

#[test]
fn rate_limited_queue_is_skipped_not_waited_for() {
    // BMv2: a queue whose rate has not yet allowed its head is skipped.
    let mut cfg = eight_queues(Scheduling::StrictPriority);
    cfg.rate_bps = 0;
    cfg.queue_rate_pps[7] = 1000;
    let mut tm = tm_with(1_000_000, 0, cfg);
    for k in 0..2 {
        tm.enqueue(0, 0, 7, 64, 70 + k).expect("admitted");
        tm.enqueue(0, 0, 0, 64, k).expect("admitted");
    }
    let out: Vec<(u32, u64)> = drain(&mut tm)
        .iter()
        .map(|d| (d.item, d.tx_start))
        .collect();
    assert_eq!(out, [(70, 0), (0, 0), (1, 0), (71, 1_000_000)]);
}

#[test]
fn queue_rate_change_at_runtime() {
    let mut tm = tm_with(1_000_000, 0, PortConfig::default());
    tm.set_queue_rate_pps(0, 0, 10).expect("valid");
    for k in 0..3 {
        tm.enqueue(0, 0, 0, 64, k).expect("admitted");
    }
    assert_eq!(tm.dequeue(0).map(|d| d.tx_start), Some(0));
    assert_eq!(tm.next_event_time(), Some(100_000_000));
    tm.set_queue_rate_pps(0, 0, 0).expect("valid");
    // Unlimited again: the remaining frames may leave at once.
    assert_eq!(tm.next_event_time(), Some(0));
    let starts: Vec<u64> = std::iter::from_fn(|| tm.dequeue(5))
        .map(|d| d.tx_start)
        .collect();
    assert_eq!(starts, [0, 0]);
}

#[test]
fn ports_are_served_in_departure_time_order() {
    let slow = PortConfig {
        rate_bps: GBPS / 10,
        ..PortConfig::default()
    };
    let mut tm = tm_with(1_000_000, 1, slow);
    tm.configure_port(
        2,
        PortConfig {
            rate_bps: GBPS,
            ..PortConfig::default()
        },
    )
    .expect("valid");
    for k in 0..3 {
        tm.enqueue(0, 1, 0, 1000, 10 + k).expect("admitted");
        tm.enqueue(0, 2, 0, 1000, 20 + k).expect("admitted");
    }
    let out: Vec<(u32, u64)> = drain(&mut tm)
        .iter()
        .map(|d| (d.item, d.tx_start))
        .collect();
    assert_eq!(
        out,
        [
            (10, 0),
            (20, 0),
            (21, 8192),
            (22, 16384),
            (11, 81920),
            (12, 163840)
        ]
    );
}

#[test]
fn rate_lifted_later_releases_held_frames_from_that_time_on() {
    let mut tm = tm_with(1_000_000, 0, PortConfig::default());
    tm.set_queue_rate_pps(0, 0, 10).expect("valid");
    for k in 0..3 {
        tm.enqueue(0, 0, 0, 64, k).expect("admitted");
    }
    assert_eq!(tm.dequeue(0).map(|d| d.tx_start), Some(0));
    // At 30 ms nothing is due yet (the next frame may start at 100 ms) ...
    assert!(tm.dequeue(30_000_000).is_none());
    // ... and lifting the limit then lets the held frames go at 30 ms, not earlier.
    tm.set_queue_rate_pps(0, 0, 0).expect("valid");
    assert_eq!(tm.next_event_time(), Some(30_000_000));
    let starts: Vec<u64> = drain(&mut tm).iter().map(|d| d.tx_start).collect();
    assert_eq!(starts, [30_000_000, 30_000_000]);
}
