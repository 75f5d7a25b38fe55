//! The traffic manager between ingress and egress: a shared buffer pool,
//! per-port queues with admission thresholds, a scheduler, a port shaper and
//! a propagation delay. Time is always passed in (`now` in ns), never read.
