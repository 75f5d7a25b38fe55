//! Ports of more than eight queues, as a Tofino TM has (32 on Tofino 1, 128 on
//! Tofino 2), and the PFC class each queue honours.

mod common;

use bufferlab_tm::{
    ConfigError, DropReason, PortConfig, Scheduling, TmConfig, TrafficManager, MAX_QUEUES,
};
use common::{drain, tm_with, GBPS};

/// A manager whose ports may have `n` queues, port 0 with all of them at 1 Gb/s.
fn with_queues(n: u8, scheduling: Scheduling) -> TrafficManager<u32> {
    let mut tm = TrafficManager::new(TmConfig {
        queues_per_port: n,
        ..TmConfig::default()
    })
    .expect("valid config");
    let cfg = PortConfig {
        rate_bps: GBPS,
        num_queues: n,
        scheduling,
        ..PortConfig::default()
    };
    tm.configure_port(0, cfg).expect("valid port");
    tm
}

#[test]
fn a_tofino1_port_has_32_queues_served_by_priority() {
    let mut tm = with_queues(32, Scheduling::StrictPriority);
    // All five arrive at 0 before the port picks: highest queue first, FIFO within one.
    for (k, q) in [(0u32, 5u8), (1, 12), (2, 31), (3, 20), (4, 31)] {
        tm.enqueue(0, 0, q, 1000, k).expect("admitted");
    }
    let r = tm.enqueue(0, 0, 32, 1000, 9).expect_err("no queue 32");
    assert_eq!(r.reason, DropReason::QueueOutOfRange);
    assert_eq!(tm.queue_stats(0, 31).expect("queue 31").depth_pkts, 2);
    let order: Vec<(u32, u8)> = drain(&mut tm).iter().map(|d| (d.item, d.queue)).collect();
    assert_eq!(order, [(2, 31), (4, 31), (3, 20), (1, 12), (0, 5)]);
    assert_eq!(
        tm.port_stats(0)
            .expect("port")
            .dropped_queue_out_of_range
            .pkts,
        1
    );
}

#[test]
fn a_tofino2_port_has_128_queues_and_drr_reaches_the_last() {
    let mut quanta = [1000u32; 128];
    quanta[127] = 2000;
    let mut tm = with_queues(MAX_QUEUES, Scheduling::drr(&quanta));
    for k in 0..4 {
        tm.enqueue(0, 0, 127, 1000, 100 + k).expect("admitted");
        tm.enqueue(0, 0, 64, 1000, k).expect("admitted");
    }
    let queues: Vec<u8> = drain(&mut tm).iter().map(|d| d.queue).collect();
    // The round visits 64 (one frame of credit per round), then 127 (two);
    // once 127 has drained, 64 sends its last two.
    assert_eq!(queues, [64, 127, 127, 64, 127, 127, 64, 64]);
}

#[test]
fn queues_per_port_bounds_num_queues_and_queue_settings() {
    let mut tm = tm_with(1_000_000, 3, PortConfig::default());
    assert_eq!(tm.queues_per_port(), 8);
    let cfg = PortConfig {
        num_queues: 32,
        ..PortConfig::default()
    };
    assert_eq!(
        tm.configure_port(3, cfg),
        Err(ConfigError::TooManyQueues {
            num_queues: 32,
            max: 8
        })
    );
    tm.set_queues_per_port(32).expect("in range");
    tm.configure_port(3, cfg).expect("32 queues fit");
    assert_eq!(
        tm.set_queues_per_port(8),
        Err(ConfigError::TooManyQueues {
            num_queues: 32,
            max: 8
        })
    );
    assert_eq!(
        tm.set_queues_per_port(129),
        Err(ConfigError::NumQueues(129))
    );
    assert_eq!(
        tm.set_queue_rate_pps(3, 32, 10),
        Err(ConfigError::QueueOutOfRange(32))
    );
    tm.set_queue_rate_pps(3, 31, 10).expect("queue 31 exists");
    assert_eq!(tm.port_config(3).expect("port").queue_rate_pps[31], 10);
}

#[test]
fn pfc_pauses_the_queues_of_a_class() {
    let mut tm = with_queues(32, Scheduling::StrictPriority);
    // A frame on the wire first, so the others queue behind it.
    tm.enqueue(0, 0, 0, 1000, 0).expect("admitted");
    assert!(tm.dequeue(0).is_some());
    for (k, q) in [(1u32, 3u8), (2, 11), (3, 27), (4, 4)] {
        tm.enqueue(0, 0, q, 1000, k).expect("admitted");
    }
    // Class 3 (queues 3, 11, 19, 27 by default) paused for 100 µs.
    tm.pause(0, 0, 1 << 3, 100_000).expect("port exists");
    let out = drain(&mut tm);
    let got: Vec<(u8, u64)> = out.iter().map(|d| (d.queue, d.tx_start)).collect();
    // Queue 4 goes when the wire frees (8192 ns); class 3 waits for the pause to end.
    assert_eq!(
        got,
        [(4, 8_192), (27, 100_000), (11, 108_192), (3, 116_384)]
    );

    // Mapping queue 4 to class 3 instead holds it too.
    let mut tm = with_queues(32, Scheduling::StrictPriority);
    let mut cfg = *tm.port_config(0).expect("port");
    cfg.pfc_cos[4] = 3;
    tm.configure_port(0, cfg).expect("valid");
    tm.enqueue(0, 0, 4, 1000, 0).expect("admitted");
    tm.pause(0, 0, 1 << 3, 50_000).expect("port exists");
    assert_eq!(tm.next_event_time(), Some(50_000));
}
