//! The traffic manager between ingress and egress: a shared buffer pool,
//! per-port queues with admission thresholds, a scheduler, a port shaper and
//! a propagation delay. Time is always passed in (`now` in ns), never read,
//! so the same code runs on the wall clock and in a virtual-time simulation.

mod admission;
mod calendar;
mod config;
mod manager;
mod port;
mod queue;
mod scheduler;
mod shaper;
mod stats;

pub use config::{
    ConfigError, PortConfig, QueueLimit, Scheduling, Threshold, TmConfig, DEFAULT_POOL_BYTES,
    ETHERNET_WIRE_OVERHEAD_BYTES, MAX_QUEUES, NUM_PORTS,
};
pub use manager::{Enqueued, Rejected, TrafficManager};
pub use port::Dequeued;
pub use shaper::pause_quanta_ns;
pub use stats::{Count, DropReason, PortStats, QueueStats, TmStats};
