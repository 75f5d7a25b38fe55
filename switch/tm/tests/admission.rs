//! Admission: the Nth frame admitted, the N+1th dropped with the right reason
//! and counters, for every cap and threshold; pool accounting.

mod common;

use bufferlab_tm::{
    ConfigError, Count, DropReason, PortConfig, QueueLimit, Threshold, TmConfig, TrafficManager,
};
use common::{drain, tm_with, GBPS};

/// A port with a fixed rate and the given caps.
fn port(limit: QueueLimit, threshold: Threshold) -> PortConfig {
    let mut cfg = PortConfig {
        rate_bps: GBPS,
        threshold,
        num_queues: 8,
        ..PortConfig::default()
    };
    cfg.queue_limits[0] = limit;
    cfg
}

/// Enqueues 100-byte frames at t=0 on port 0 queue 0 until one is refused;
/// returns how many were admitted and why the next one was refused.
fn fill(tm: &mut TrafficManager<u32>, frame_bytes: u32) -> (u32, DropReason) {
    for i in 0.. {
        if let Err(r) = tm.enqueue(0, 0, 0, frame_bytes, i) {
            assert_eq!(r.item, i, "the refused frame is handed back");
            return (i, r.reason);
        }
    }
    unreachable!("the loop only ends by a refusal")
}

#[test]
fn packet_cap_admits_exactly_n() {
    let mut tm = tm_with(1_000_000, 0, port(QueueLimit::Packets(64), Threshold::None));
    assert_eq!(fill(&mut tm, 100), (64, DropReason::QueueFull));
    let s = tm.queue_stats(0, 0).expect("queue exists");
    assert_eq!(s.depth_pkts, 64);
    assert_eq!(
        s.enqueued,
        Count {
            pkts: 64,
            bytes: 6400
        }
    );
    assert_eq!(
        s.dropped_queue_full,
        Count {
            pkts: 1,
            bytes: 100
        }
    );
    assert_eq!(
        s.dropped(),
        Count {
            pkts: 1,
            bytes: 100
        }
    );
    assert_eq!(s.max_depth_pkts, 64);
}

#[test]
fn byte_cap_admits_exactly_to_the_byte() {
    // 1000 bytes: ten 100-byte frames fit exactly, the eleventh does not.
    let mut tm = tm_with(1_000_000, 0, port(QueueLimit::Bytes(1000), Threshold::None));
    assert_eq!(fill(&mut tm, 100), (10, DropReason::QueueFull));
    assert_eq!(tm.queue_stats(0, 0).map(|s| s.depth_bytes), Some(1000));
}

#[test]
fn static_threshold_counts_the_whole_port() {
    let mut tm = tm_with(
        1_000_000,
        0,
        port(QueueLimit::None, Threshold::StaticBytes(1050)),
    );
    // Other queues of the same port share the threshold.
    tm.enqueue(0, 0, 5, 250, 99).expect("admitted");
    assert_eq!(fill(&mut tm, 100), (8, DropReason::PortThreshold));
    let s = tm.queue_stats(0, 0).expect("queue exists");
    assert_eq!(
        s.dropped_port_threshold,
        Count {
            pkts: 1,
            bytes: 100
        }
    );
    assert_eq!(tm.port_occupancy_bytes(0), 1050);
}

#[test]
fn percent_of_pool_threshold() {
    // 10 % of 20_000 bytes = 2000 bytes = twenty 100-byte frames.
    let mut tm = tm_with(
        20_000,
        0,
        port(QueueLimit::None, Threshold::PercentOfPool(10)),
    );
    assert_eq!(fill(&mut tm, 100), (20, DropReason::PortThreshold));
}

#[test]
fn dynamic_threshold_follows_free_pool() {
    // alpha = 1, B = 10_000: a lone port settles at B/2 = 5000 bytes:
    // the 50th 100-byte frame sees 4900 + 100 <= 1 * (10_000 - 4900).
    let dt = Threshold::Dynamic {
        alpha_num: 1,
        alpha_den: 1,
    };
    let mut tm = tm_with(10_000, 0, port(QueueLimit::None, dt));
    assert_eq!(fill(&mut tm, 100), (50, DropReason::PortThreshold));
    // Another port's traffic shrinks the free pool and so this port's share.
    let mut tm = tm_with(10_000, 0, port(QueueLimit::None, dt));
    tm.enqueue(0, 9, 0, 4000, 0)
        .expect("port 9 has no threshold");
    // 100 * n <= 6000 - 100 * (n - 1)  =>  n <= 30.5
    assert_eq!(fill(&mut tm, 100), (30, DropReason::PortThreshold));
}

#[test]
fn dynamic_threshold_with_fractional_alpha() {
    // alpha = 1/8, B = 90_000: steady state alpha*B/(1+alpha) = 10_000 bytes.
    let dt = Threshold::Dynamic {
        alpha_num: 1,
        alpha_den: 8,
    };
    let mut tm = tm_with(90_000, 0, port(QueueLimit::None, dt));
    assert_eq!(fill(&mut tm, 1000), (10, DropReason::PortThreshold));
}

#[test]
fn pool_full_drops_when_the_port_may_still_grow() {
    let mut tm = tm_with(1000, 0, port(QueueLimit::None, Threshold::None));
    assert_eq!(fill(&mut tm, 100), (10, DropReason::PoolFull));
    let s = tm.queue_stats(0, 0).expect("queue exists");
    assert_eq!(
        s.dropped_pool_full,
        Count {
            pkts: 1,
            bytes: 100
        }
    );
    assert_eq!(tm.pool_used_bytes(), 1000);
    assert_eq!(tm.stats().max_pool_used_bytes, 1000);
}

#[test]
fn checks_run_in_order_queue_cap_first() {
    // Both the queue cap and the pool are exhausted: the queue cap is named.
    let mut tm = tm_with(
        500,
        0,
        port(QueueLimit::Packets(5), Threshold::StaticBytes(500)),
    );
    assert_eq!(fill(&mut tm, 100), (5, DropReason::QueueFull));
}

#[test]
fn bad_port_and_queue_numbers_are_drops_not_panics() {
    let mut tm = tm_with(1_000_000, 0, PortConfig::default());
    let r = tm
        .enqueue(0, 512, 0, 64, 1)
        .expect_err("port 512 does not exist");
    assert_eq!((r.item, r.reason), (1, DropReason::PortOutOfRange));
    // The default port has one queue, so priority 1 is out of range (as in BMv2).
    let r = tm
        .enqueue(0, 0, 1, 64, 2)
        .expect_err("queue 1 does not exist");
    assert_eq!((r.item, r.reason), (2, DropReason::QueueOutOfRange));
    let r = tm
        .enqueue(0, 0, 200, 64, 3)
        .expect_err("queue 200 does not exist");
    assert_eq!(r.reason, DropReason::QueueOutOfRange);
    assert_eq!(
        tm.stats().dropped_port_out_of_range,
        Count { pkts: 1, bytes: 64 }
    );
    let ps = tm.port_stats(0).expect("port 0 exists");
    assert_eq!(
        ps.dropped_queue_out_of_range,
        Count {
            pkts: 2,
            bytes: 128
        }
    );
    assert_eq!(tm.pool_used_bytes(), 0);
    assert_eq!(tm.queue_stats(512, 0), None);
    assert_eq!(tm.queue_stats(0, 8), None);
    assert_eq!(tm.port_occupancy_bytes(600), 0);
}

#[test]
fn bad_settings_are_refused_and_change_nothing() {
    let mut tm = tm_with(1_000_000, 0, PortConfig::default());
    let before = *tm.port_config(0).expect("port 0 exists");
    let bad = PortConfig {
        num_queues: 9,
        ..PortConfig::default()
    };
    assert_eq!(
        tm.configure_port(0, bad),
        Err(ConfigError::TooManyQueues {
            num_queues: 9,
            max: 8
        })
    );
    assert_eq!(
        tm.configure_port(512, before),
        Err(ConfigError::PortOutOfRange(512))
    );
    assert_eq!(
        tm.set_queue_limit(0, 8, QueueLimit::Packets(1)),
        Err(ConfigError::QueueOutOfRange(8))
    );
    assert_eq!(
        tm.set_queue_rate_pps(700, 0, 1),
        Err(ConfigError::PortOutOfRange(700))
    );
    assert_eq!(tm.set_pool_bytes(0), Err(ConfigError::PoolBytesZero));
    assert_eq!(tm.port_config(0), Some(&before));
    assert_eq!(tm.pool_bytes(), 1_000_000);
    let bad_tm = TrafficManager::<u32>::new(TmConfig {
        pool_bytes: 0,
        ..TmConfig::default()
    });
    assert_eq!(bad_tm.err(), Some(ConfigError::PoolBytesZero));
}

#[test]
fn pool_accounting_returns_to_zero_after_drain() {
    let mut cfg = port(QueueLimit::Packets(40), Threshold::StaticBytes(30_000));
    cfg.queue_limits[3] = QueueLimit::Bytes(20_000);
    let mut tm = tm_with(50_000, 0, cfg);
    tm.configure_port(1, cfg).expect("valid");
    let mut admitted = 0u64;
    for i in 0..500u32 {
        let bytes = 64 + (i * 97) % 1437;
        let (p, q) = ((i % 2) as u16, [0u8, 3][(i as usize / 2) % 2]);
        if tm.enqueue(u64::from(i) * 100, p, q, bytes, i).is_ok() {
            admitted += u64::from(bytes);
        }
    }
    assert!(tm.pool_used_bytes() > 0);
    let out = drain(&mut tm);
    assert_eq!(
        out.iter().map(|d| u64::from(d.frame_bytes)).sum::<u64>(),
        admitted
    );
    assert_eq!(tm.pool_used_bytes(), 0);
    assert_eq!(tm.port_occupancy_bytes(0), 0);
    assert_eq!(tm.port_occupancy_bytes(1), 0);
    for p in 0..2 {
        for q in [0, 3] {
            let s = tm.queue_stats(p, q).expect("queue exists");
            assert_eq!((s.depth_pkts, s.depth_bytes), (0, 0));
            assert_eq!(s.enqueued, s.dequeued);
        }
    }
}

#[test]
fn draining_makes_room_again() {
    let mut tm = tm_with(1_000_000, 0, port(QueueLimit::Packets(2), Threshold::None));
    tm.enqueue(0, 0, 0, 1000, 0).expect("admitted");
    tm.enqueue(0, 0, 0, 1000, 1).expect("admitted");
    assert!(tm.enqueue(0, 0, 0, 1000, 2).is_err());
    // The first frame starts at 0 and so leaves the queue.
    assert!(tm.dequeue(0).is_some());
    tm.enqueue(1, 0, 0, 1000, 3).expect("room after a dequeue");
}

#[test]
fn queue_limit_change_at_runtime() {
    let mut tm = tm_with(1_000_000, 0, port(QueueLimit::Packets(64), Threshold::None));
    tm.set_queue_limit(0, 0, QueueLimit::Packets(3))
        .expect("valid");
    assert_eq!(fill(&mut tm, 100), (3, DropReason::QueueFull));
    assert_eq!(
        tm.port_config(0).map(|c| c.queue_limits[0]),
        Some(QueueLimit::Packets(3))
    );
}

#[test]
fn fewer_queues_at_runtime_refuse_new_frames_but_drain_old_ones() {
    let mut tm = tm_with(1_000_000, 0, port(QueueLimit::None, Threshold::None));
    tm.enqueue(0, 0, 5, 100, 50).expect("admitted");
    tm.enqueue(0, 0, 5, 100, 51).expect("admitted");
    let mut cfg = *tm.port_config(0).expect("port 0 exists");
    cfg.num_queues = 1;
    tm.configure_port(0, cfg).expect("valid");
    let r = tm
        .enqueue(1, 0, 5, 100, 52)
        .expect_err("queue 5 no longer exists");
    assert_eq!(r.reason, DropReason::QueueOutOfRange);
    let items: Vec<u32> = drain(&mut tm).iter().map(|d| d.item).collect();
    assert_eq!(items, [50, 51]);
    assert_eq!(tm.pool_used_bytes(), 0);
}

#[test]
fn smaller_pool_at_runtime_keeps_held_frames() {
    let mut tm = tm_with(1_000, 0, port(QueueLimit::None, Threshold::None));
    for k in 0..5 {
        tm.enqueue(0, 0, 0, 100, k).expect("admitted");
    }
    tm.set_pool_bytes(400).expect("valid");
    let r = tm
        .enqueue(0, 0, 0, 1, 9)
        .expect_err("pool already over its new size");
    assert_eq!(r.reason, DropReason::PoolFull);
    assert_eq!(drain(&mut tm).len(), 5);
    assert_eq!(tm.pool_used_bytes(), 0);
    assert_eq!(fill(&mut tm, 100), (4, DropReason::PoolFull));
}
