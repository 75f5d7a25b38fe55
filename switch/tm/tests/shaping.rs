//! Port shaper, wire overhead and propagation delay, seen through the public API.

use bufferlab_tm::{PortConfig, TmConfig, TrafficManager};

const GBPS: u64 = 1_000_000_000;

fn tm_with(port_cfg: PortConfig) -> TrafficManager<u32> {
    let mut tm = TrafficManager::new(TmConfig {
        pool_bytes: 10_000_000,
        default_port: PortConfig::default(),
    })
    .expect("valid config");
    tm.configure_port(3, port_cfg).expect("valid port config");
    tm
}

/// Drains everything, polling exactly at each event time.
fn drain(tm: &mut TrafficManager<u32>) -> Vec<bufferlab_tm::Dequeued<u32>> {
    let mut out = Vec::new();
    while let Some(t) = tm.next_event_time() {
        while let Some(d) = tm.dequeue(t) {
            out.push(d);
        }
    }
    out
}

#[test]
fn burst_leaves_at_the_port_rate() {
    let mut tm = tm_with(PortConfig {
        rate_bps: GBPS,
        ..PortConfig::default()
    });
    for i in 0..10 {
        tm.enqueue(1_000, 3, 0, 1000, i).expect("admitted");
    }
    let out = drain(&mut tm);
    assert_eq!(out.len(), 10);
    for (k, d) in out.iter().enumerate() {
        let k = k as u64;
        // (1000 + 24) * 8 bits at 1 Gb/s = 8192 ns per frame.
        assert_eq!(d.item, k as u32);
        assert_eq!(d.tx_start, 1_000 + k * 8192);
        assert_eq!(d.tx_end, 1_000 + (k + 1) * 8192);
        assert_eq!(d.arrival, d.tx_end);
    }
    assert_eq!(tm.pool_used_bytes(), 0);
}
