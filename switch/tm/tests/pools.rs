//! Application pools as Tofino's TM has them: a queue's guaranteed cells, then
//! growth in its pool up to a static limit or D(t) = (size − used) · BAF.

mod common;

use bufferlab_tm::{
    Baf, ConfigError, DropReason, PortConfig, QueueBuffer, TmConfig, TrafficManager,
};
use common::{drain, tm_with, GBPS};

/// 80-byte cells, a 12 500-cell buffer, and port 1 with two queues as `bufs` say.
fn tm_with_pools(pool0_cells: u64, bufs: [QueueBuffer; 2]) -> TrafficManager<u32> {
    let mut tm = TrafficManager::new(TmConfig {
        pool_bytes: 1_000_000,
        cell_bytes: Some(80),
        ..TmConfig::default()
    })
    .expect("valid");
    let mut cfg = PortConfig {
        num_queues: 2,
        ..PortConfig::default()
    };
    cfg.queue_buffer[..2].copy_from_slice(&bufs);
    tm.configure_port(1, cfg).expect("valid port");
    tm.set_app_pool_cells(0, pool0_cells).expect("pool 0");
    tm
}

/// Offers `n` frames of `bytes` to `queue` at time 0 (nothing leaves meanwhile);
/// returns how many were admitted.
fn offer(tm: &mut TrafficManager<u32>, queue: u8, n: u32, bytes: u32) -> u32 {
    (0..n)
        .filter(|&k| tm.enqueue(0, 1, queue, bytes, k).is_ok())
        .count() as u32
}

#[test]
fn guaranteed_cells_then_a_static_limit_in_the_pool() {
    let q = QueueBuffer {
        guaranteed_cells: 10,
        pool: Some(0),
        pool_max_cells: 20,
        ..QueueBuffer::default()
    };
    let mut tm = tm_with_pools(1000, [q, QueueBuffer::default()]);
    // 800-byte frames are 10 cells: the first fills the guarantee, the next two
    // take 10 + 10 pool cells, the fourth would make 30 > 20.
    assert_eq!(offer(&mut tm, 0, 4, 800), 3);
    assert_eq!(tm.app_pools().used_cells[0], 20);
    let s = tm.queue_stats(1, 0).expect("queue");
    assert_eq!((s.depth_cells, s.dropped_app_pool.pkts), (30, 1));
    let r = tm.enqueue(0, 1, 0, 80, 9).expect_err("still at the limit");
    assert_eq!(r.reason, DropReason::AppPoolLimit);
    drain(&mut tm);
    assert_eq!(tm.app_pools().used_cells[0], 0);
    assert_eq!(tm.app_pools().max_used_cells[0], 20);
}

#[test]
fn a_dynamic_limit_shares_the_free_pool() {
    let q = QueueBuffer {
        pool: Some(0),
        dynamic_baf: Baf::Pct50,
        ..QueueBuffer::default()
    };
    let mut tm = tm_with_pools(100, [q, q]);
    // One-cell frames. Queue 0 alone: it admits while k + 1 <= (100 − k) / 2,
    // so up to k = 33 (34 > 33 when k = 33): 33 cells, BAF/(1+BAF) of the pool.
    assert_eq!(offer(&mut tm, 0, 40, 80), 33);
    // Queue 1 then sees 67 free: k + 1 <= (67 − k) / 2 holds up to k = 22.
    assert_eq!(offer(&mut tm, 1, 40, 80), 22);
    assert_eq!(tm.app_pools().used_cells[0], 55);
    let drops: Vec<u64> = (0..2)
        .map(|q| tm.queue_stats(1, q).expect("queue").dropped_app_pool.pkts)
        .collect();
    assert_eq!(drops, [7, 18]);
}

#[test]
fn the_static_limit_holds_when_the_dynamic_one_is_smaller() {
    let q = QueueBuffer {
        pool: Some(0),
        pool_max_cells: 40,
        dynamic_baf: Baf::Pct1_5,
        ..QueueBuffer::default()
    };
    let mut tm = tm_with_pools(100, [q, QueueBuffer::default()]);
    // D = (100 − k) · 1.5 % is at most 1 cell; the queue still gets its 40.
    assert_eq!(offer(&mut tm, 0, 50, 80), 40);
}

#[test]
fn hysteresis_holds_a_queue_below_its_limit_until_it_drains() {
    let q = QueueBuffer {
        pool: Some(0),
        pool_max_cells: 10,
        hysteresis_cells: 4,
        ..QueueBuffer::default()
    };
    let mut tm = tm_with_pools(100, [q, QueueBuffer::default()]);
    assert_eq!(offer(&mut tm, 0, 11, 80), 10);
    // Refused until its use is down to 10 − 4 = 6 cells: at 7 still refused, at 6 admitted.
    for _ in 0..3 {
        let t = tm.next_event_time().expect("queued");
        tm.dequeue(t).expect("starts");
    }
    assert_eq!(offer(&mut tm, 0, 1, 80), 0);
    let t = tm.next_event_time().expect("queued");
    tm.dequeue(t).expect("starts");
    assert_eq!(offer(&mut tm, 0, 1, 80), 1);
    // The limit is 10 again: 7 + 3 fit, the eleventh cell does not.
    assert_eq!(offer(&mut tm, 0, 4, 80), 3);
}

#[test]
fn pools_are_0_to_3() {
    let mut tm = tm_with(1_000_000, 0, PortConfig::default());
    assert_eq!(tm.set_app_pool_cells(4, 10), Err(ConfigError::AppPool(4)));
    let mut cfg = PortConfig {
        rate_bps: GBPS,
        ..PortConfig::default()
    };
    cfg.queue_buffer[0].pool = Some(4);
    assert_eq!(tm.configure_port(0, cfg), Err(ConfigError::AppPool(4)));
}
