//! The traffic manager between ingress and egress: a shared buffer pool,
//! per-port queues with admission thresholds, a scheduler, a port shaper and
//! a propagation delay. Time is always passed in (`now` in ns), never read,
//! so the same code runs on the wall clock and in a virtual-time simulation.
//!
//! ```
//! use bufferlab_tm::{PortConfig, TmConfig, TrafficManager};
//!
//! let mut tm = TrafficManager::new(TmConfig::default()).expect("valid config");
//! let port = PortConfig { rate_bps: 1_000_000_000, delay_ns: 5_000, ..PortConfig::default() };
//! tm.configure_port(1, port).expect("valid port");
//! let enq = tm.enqueue(0, 1, 0, 1000, "frame a").expect("admitted");
//! assert_eq!(enq.enq_qdepth_pkts, 0);
//! tm.enqueue(0, 1, 0, 1000, "frame b").expect("admitted");
//! // Virtual time: jump to each event, take every frame that is due.
//! let mut sent = Vec::new();
//! while let Some(t) = tm.next_event_time() {
//!     while let Some(d) = tm.dequeue(t) {
//!         sent.push((d.item, d.tx_start, d.arrival));
//!     }
//! }
//! // (1000 + 24) bytes * 8 at 1 Gb/s = 8192 ns on the wire, then 5 µs of link.
//! assert_eq!(sent, [("frame a", 0, 13_192), ("frame b", 8_192, 21_384)]);
//! assert_eq!(tm.pool_used_bytes(), 0);
//! ```

mod admission;
mod calendar;
mod config;
mod flowcontrol;
mod link;
mod manager;
mod pools;
mod port;
mod queue;
mod scheduler;
mod shaper;
mod stats;

pub use config::{
    ConfigError, PortConfig, QueueLimit, Scheduling, Threshold, TmConfig, DEFAULT_POOL_BYTES,
    ETHERNET_WIRE_OVERHEAD_BYTES, MAX_QUEUES, NUM_PORTS, V1MODEL_QUEUES,
};
pub use flowcontrol::{FlowControlFrame, FlowControlMode, PortFlowControl, PpgConfig};
pub use link::DelayLine;
pub use manager::{Enqueued, Rejected, TrafficManager};
pub use pools::{AppPools, Baf, QueueBuffer, APP_POOLS};
pub use port::Dequeued;
pub use shaper::pause_quanta_ns;
pub use stats::{Count, DropReason, PortStats, QueueStats, TmStats};
