//! Per-flow accounting at a receiver: frames, bytes, loss by sequence gaps, latency.

use crate::header::DataHeader;

/// What a sink has seen of one flow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlowAccount {
    /// Frames received.
    pub frames: u64,
    /// Bytes received (frame bytes, no FCS).
    pub bytes: u64,
    /// First frame's arrival, ns.
    pub first_rx_ns: u64,
    /// Last frame's arrival, ns.
    pub last_rx_ns: u64,
    /// Frames whose sequence number was below one already seen.
    pub reordered: u64,
    /// Sequence numbers skipped (frames lost or still to come).
    pub gaps: u64,
    /// One past the highest sequence number seen.
    pub next_seq: u64,
    /// Smallest one-way latency, ns.
    pub latency_min_ns: u64,
    /// Largest one-way latency, ns.
    pub latency_max_ns: u64,
    /// Sum of latencies, ns (mean = sum / frames).
    pub latency_sum_ns: u128,
}

impl FlowAccount {
    /// Counts one frame of `bytes` with header `header` that arrived at `rx_ns`.
    pub fn record(&mut self, rx_ns: u64, bytes: usize, header: &DataHeader) {
        let latency = rx_ns.saturating_sub(header.tx_ns);
        if self.frames == 0 {
            self.first_rx_ns = rx_ns;
            self.latency_min_ns = latency;
        }
        self.frames += 1;
        self.bytes += bytes as u64;
        self.last_rx_ns = rx_ns;
        self.latency_min_ns = self.latency_min_ns.min(latency);
        self.latency_max_ns = self.latency_max_ns.max(latency);
        self.latency_sum_ns += u128::from(latency);
        let seq = u64::from(header.seq);
        if seq >= self.next_seq {
            self.gaps += seq - self.next_seq;
            self.next_seq = seq + 1;
        } else {
            self.reordered += 1;
            self.gaps = self.gaps.saturating_sub(1);
        }
    }

    /// Mean latency, ns (0 before the first frame).
    pub fn latency_mean_ns(&self) -> f64 {
        if self.frames == 0 {
            0.0
        } else {
            self.latency_sum_ns as f64 / self.frames as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_gaps_reorders_and_latency() {
        let mut a = FlowAccount::default();
        for (seq, tx, rx) in [
            (0u32, 0u64, 100u64),
            (2, 10, 150),
            (1, 5, 160),
            (5, 20, 220),
        ] {
            a.record(
                rx,
                1500,
                &DataHeader {
                    flow: 1,
                    seq,
                    tx_ns: tx,
                },
            );
        }
        assert_eq!((a.frames, a.bytes), (4, 6000));
        assert_eq!((a.gaps, a.reordered, a.next_seq), (2, 1, 6));
        assert_eq!((a.latency_min_ns, a.latency_max_ns), (100, 200));
        assert_eq!(a.latency_mean_ns(), (100.0 + 140.0 + 155.0 + 200.0) / 4.0);
        assert_eq!((a.first_rx_ns, a.last_rx_ns), (100, 220));
    }
}
