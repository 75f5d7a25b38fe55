//! A buffer counted in cells, as Tofino's TM counts it: each frame holds
//! ⌈len / cell⌉ cells, and depths, occupancy, limits and the pool are in cells.

mod common;

use bufferlab_tm::{
    ConfigError, DropReason, PortConfig, QueueLimit, Threshold, TmConfig, TrafficManager,
};
use common::{drain, tm_with, GBPS};

/// A manager with 80-byte cells (Tofino 1), a pool of `pool_bytes` and port 1 at 1 Gb/s.
fn tofino1(pool_bytes: u64, cfg: PortConfig) -> TrafficManager<u32> {
    let mut tm = TrafficManager::new(TmConfig {
        pool_bytes,
        cell_bytes: Some(80),
        ..TmConfig::default()
    })
    .expect("valid config");
    tm.configure_port(
        1,
        PortConfig {
            rate_bps: GBPS,
            ..cfg
        },
    )
    .expect("valid port");
    tm
}

#[test]
fn frames_hold_whole_cells_and_depths_read_in_cells() {
    let mut tm = tofino1(1_000_000, PortConfig::default());
    // 64 B -> 1 cell, 80 B -> 1, 81 B -> 2, 1500 B -> 19 (18.75 rounded up).
    let enq: Vec<_> = [64u32, 80, 81, 1500]
        .iter()
        .enumerate()
        .map(|(k, &len)| tm.enqueue(0, 1, 0, len, k as u32).expect("admitted"))
        .collect();
    let depths: Vec<(u64, u64, u64)> = enq
        .iter()
        .map(|e| (e.enq_qdepth_cells, e.enq_qdepth_bytes, e.pool_used_cells))
        .collect();
    assert_eq!(depths, [(0, 0, 0), (1, 64, 1), (2, 144, 2), (4, 225, 4)]);
    let q = tm.queue_stats(1, 0).expect("queue exists");
    assert_eq!((q.depth_cells, q.depth_bytes, q.depth_pkts), (23, 1725, 4));
    assert_eq!(tm.port_stats(1).expect("port").occupancy_cells, 23);
    assert_eq!(tm.pool_used_cells(), 23);
    assert_eq!(tm.pool_cells(), 12_500);
    let out = drain(&mut tm);
    let deq: Vec<(u64, u32)> = out
        .iter()
        .map(|d| (d.deq_qdepth_cells, d.frame_cells))
        .collect();
    assert_eq!(deq, [(22, 1), (21, 1), (19, 2), (0, 19)]);
    assert_eq!(tm.pool_used_cells(), 0);
    assert_eq!(tm.stats().max_pool_used_cells, 23);
}

#[test]
fn cell_limits_and_the_pool_are_counted_in_cells() {
    // Queue cap of 10 cells: 81-byte frames take 2 cells each, so 5 fit.
    let mut cfg = PortConfig::default();
    cfg.queue_limits[0] = QueueLimit::Cells(10);
    let mut tm = tofino1(1_000_000, cfg);
    let admitted = (0..8)
        .filter(|&k| tm.enqueue(0, 1, 0, 81, k).is_ok())
        .count();
    assert_eq!(admitted, 5);
    let q = tm.queue_stats(1, 0).expect("queue");
    assert_eq!((q.depth_cells, q.dropped_queue_full.pkts), (10, 3));

    // A pool of 800 bytes is 10 cells: five 2-cell frames fill it although
    // they carry only 405 bytes.
    let mut tm = tofino1(800, PortConfig::default());
    let results: Vec<_> = (0..6)
        .map(|k| tm.enqueue(0, 1, 0, 81, k).map(|_| ()).map_err(|r| r.reason))
        .collect();
    assert_eq!(results[..5], [Ok(()); 5]);
    assert_eq!(results[5], Err(DropReason::PoolFull));
    assert_eq!(tm.pool_used_bytes(), 405);

    // A port threshold in cells.
    let cfg = PortConfig {
        threshold: Threshold::StaticCells(3),
        ..PortConfig::default()
    };
    let mut tm = tofino1(1_000_000, cfg);
    assert!(tm.enqueue(0, 1, 0, 160, 0).is_ok());
    let r = tm.enqueue(0, 1, 0, 81, 1).expect_err("2 + 2 cells > 3");
    assert_eq!(r.reason, DropReason::PortThreshold);
    assert!(tm.enqueue(0, 1, 0, 80, 2).is_ok());
}

#[test]
fn cell_size_changes_only_on_an_empty_buffer() {
    let mut tm = TrafficManager::<u32>::new(TmConfig::default()).expect("valid");
    assert_eq!(tm.cell_bytes(), None);
    assert_eq!(tm.cells_of(1500), 1500);
    tm.enqueue(0, 0, 0, 100, 0).expect("admitted");
    assert_eq!(
        tm.set_cell_bytes(Some(176)),
        Err(ConfigError::BufferNotEmpty)
    );
    drain(&mut tm);
    assert_eq!(tm.set_cell_bytes(Some(0)), Err(ConfigError::CellBytesZero));
    tm.set_cell_bytes(Some(176)).expect("empty buffer");
    assert_eq!(tm.cell_bytes(), Some(176));
    // Tofino 2: 1500 B -> 9 cells (8.52 rounded up).
    assert_eq!(tm.cells_of(1500), 9);
    let e = tm.enqueue(0, 0, 0, 1500, 1).expect("admitted");
    assert_eq!(e.enq_qdepth_cells, 0);
    assert_eq!(tm.queue_stats(0, 0).expect("queue").depth_cells, 9);
}

#[test]
fn without_a_cell_size_cells_are_bytes() {
    let mut tm = tm_with(1_000_000, 0, PortConfig::default());
    tm.enqueue(0, 0, 0, 100, 0).expect("admitted");
    let e = tm.enqueue(0, 0, 0, 50, 1).expect("admitted");
    assert_eq!((e.enq_qdepth_cells, e.enq_qdepth_bytes), (100, 100));
    assert_eq!(tm.pool_used_cells(), tm.pool_used_bytes());
}
