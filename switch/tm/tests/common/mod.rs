//! Helpers shared by the integration tests.

use bufferlab_tm::{Dequeued, PortConfig, TmConfig, TrafficManager};

/// One gigabit per second, in bit/s.
pub const GBPS: u64 = 1_000_000_000;

/// A traffic manager with a pool of `pool_bytes` and `cfg` on `port`.
pub fn tm_with(pool_bytes: u64, port: u16, cfg: PortConfig) -> TrafficManager<u32> {
    let mut tm = TrafficManager::new(TmConfig {
        pool_bytes,
        ..TmConfig::default()
    })
    .expect("valid config");
    tm.configure_port(port, cfg).expect("valid port config");
    tm
}

/// Dequeues everything, polling exactly at each event time.
pub fn drain<T>(tm: &mut TrafficManager<T>) -> Vec<Dequeued<T>> {
    let mut out = Vec::new();
    while let Some(t) = tm.next_event_time() {
        while let Some(d) = tm.dequeue(t) {
            out.push(d);
        }
    }
    out
}
