//! Counters of queues, ports and the whole traffic manager, and drop reasons.

/// Why a frame was not admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// The port number is not in 0..=511.
    PortOutOfRange,
    /// The queue number is not below the port's `num_queues` (BMv2 drops too).
    QueueOutOfRange,
    /// The queue's packet or byte cap would be exceeded.
    QueueFull,
    /// The port's share of the shared pool would be exceeded.
    PortThreshold,
    /// The shared pool has no room for the frame.
    PoolFull,
    /// The queue is at its limit in its application pool (static, or the
    /// dynamic limit of its burst-absorption factor), or the pool is full.
    AppPoolLimit,
    /// The ingress port or priority group is over its limit without flow control.
    IngressLimit,
    /// Flow control was asserted and the skid (headroom) is full too.
    SkidFull,
}

impl DropReason {
    /// Short snake_case name for logs and counter columns.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::PortOutOfRange => "port_out_of_range",
            DropReason::QueueOutOfRange => "queue_out_of_range",
            DropReason::QueueFull => "queue_full",
            DropReason::PortThreshold => "port_threshold",
            DropReason::PoolFull => "pool_full",
            DropReason::AppPoolLimit => "app_pool_limit",
            DropReason::IngressLimit => "ingress_limit",
            DropReason::SkidFull => "skid_full",
        }
    }
}

impl std::fmt::Display for DropReason {
    /// Writes the reason's snake_case name.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Frames and bytes counted together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    /// Frames.
    pub pkts: u64,
    /// Frame bytes (no wire overhead).
    pub bytes: u64,
}

impl Count {
    /// Counts one frame of `bytes` bytes.
    pub(crate) fn add(&mut self, bytes: u32) {
        self.pkts += 1;
        self.bytes += u64::from(bytes);
    }
}

/// Counters of one (port, queue).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Frames queued now.
    pub depth_pkts: u32,
    /// Frame bytes queued now.
    pub depth_bytes: u64,
    /// Largest `depth_pkts` seen.
    pub max_depth_pkts: u32,
    /// Largest `depth_bytes` seen.
    pub max_depth_bytes: u64,
    /// Buffer cells queued now (bytes when the manager has no cell size).
    pub depth_cells: u64,
    /// Largest `depth_cells` seen.
    pub max_depth_cells: u64,
    /// Frames admitted.
    pub enqueued: Count,
    /// Frames that started transmission.
    pub dequeued: Count,
    /// Frames refused by the queue's cap.
    pub dropped_queue_full: Count,
    /// Frames refused by the port threshold.
    pub dropped_port_threshold: Count,
    /// Frames refused because the pool was full.
    pub dropped_pool_full: Count,
    /// Frames refused by the queue's application-pool limit.
    pub dropped_app_pool: Count,
    /// Frames refused on their ingress side (port or PPG limit, full skid).
    pub dropped_ingress: Count,
}

impl QueueStats {
    /// All frames refused at this queue, whatever the reason.
    pub fn dropped(&self) -> Count {
        let reasons = [
            self.dropped_queue_full,
            self.dropped_port_threshold,
            self.dropped_pool_full,
            self.dropped_app_pool,
            self.dropped_ingress,
        ];
        reasons.iter().fold(Count::default(), |sum, c| Count {
            pkts: sum.pkts + c.pkts,
            bytes: sum.bytes + c.bytes,
        })
    }

    /// Counts a refusal under its reason.
    pub(crate) fn count_drop(&mut self, reason: DropReason, bytes: u32) {
        match reason {
            DropReason::QueueFull => self.dropped_queue_full.add(bytes),
            DropReason::PortThreshold => self.dropped_port_threshold.add(bytes),
            DropReason::PoolFull => self.dropped_pool_full.add(bytes),
            DropReason::AppPoolLimit => self.dropped_app_pool.add(bytes),
            DropReason::IngressLimit | DropReason::SkidFull => self.dropped_ingress.add(bytes),
            // Counted by the port or the traffic manager: no queue exists for them.
            DropReason::PortOutOfRange | DropReason::QueueOutOfRange => {}
        }
    }
}

/// Counters of one port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortStats {
    /// Frame bytes queued on the port (all queues).
    pub occupancy_bytes: u64,
    /// Largest `occupancy_bytes` seen.
    pub max_occupancy_bytes: u64,
    /// Buffer cells queued on the port (all queues).
    pub occupancy_cells: u64,
    /// Largest `occupancy_cells` seen.
    pub max_occupancy_cells: u64,
    /// Frames that started transmission.
    pub transmitted: Count,
    /// Frames sent to a queue number at or above `num_queues`.
    pub dropped_queue_out_of_range: Count,
}

/// Counters of the whole traffic manager.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TmStats {
    /// Frame bytes held in the shared pool now.
    pub pool_used_bytes: u64,
    /// Largest `pool_used_bytes` seen.
    pub max_pool_used_bytes: u64,
    /// Buffer cells held in the shared pool now.
    pub pool_used_cells: u64,
    /// Largest `pool_used_cells` seen.
    pub max_pool_used_cells: u64,
    /// Frames sent to a port number above 511.
    pub dropped_port_out_of_range: Count,
    /// XOFF frames (PAUSE or PFC) the TM asked the MACs to send, refreshes included.
    pub xoff_sent: u64,
    /// XON frames (pause_time 0) the TM asked the MACs to send.
    pub xon_sent: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_sum_over_reasons_and_reasons_have_names() {
        let mut q = QueueStats::default();
        q.count_drop(DropReason::QueueFull, 100);
        q.count_drop(DropReason::PoolFull, 50);
        q.count_drop(DropReason::PoolFull, 50);
        q.count_drop(DropReason::PortThreshold, 7);
        assert_eq!(
            q.dropped(),
            Count {
                pkts: 4,
                bytes: 207
            }
        );
        assert_eq!(
            q.dropped_pool_full,
            Count {
                pkts: 2,
                bytes: 100
            }
        );
        assert_eq!(DropReason::PortThreshold.to_string(), "port_threshold");
    }
}
