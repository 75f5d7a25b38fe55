//! Moving the virtual clock: traffic-manager events and packet-generator
//! timers in time order, and frames in flight delivered when they arrive.

use std::cmp::Reverse;

use super::{Engine, Output};

impl Engine {
    /// Runs every traffic-manager event up to `t_ns` in time order (egress at
    /// each frame's start of transmission) and delivers frames that arrive by then.
    pub fn advance(&mut self, t_ns: u64) {
        loop {
            let next_frame = self.tm.next_event_time();
            // A generated packet enters ingress before a frame due at the same time leaves.
            if let Some(tp) = self
                .pktgen_next_ns()
                .filter(|&tp| tp <= t_ns && next_frame.is_none_or(|te| tp <= te))
            {
                self.generate(tp);
                continue;
            }
            let Some(d) = next_frame
                .filter(|&te| te <= t_ns)
                .and_then(|te| self.tm.dequeue(te))
            else {
                break;
            };
            self.now = self.now.max(d.tx_start);
            if self.tna.is_some() {
                self.tna_egress(d);
            } else {
                self.egress(d);
            }
            if self.tm.has_flow_control_frames() {
                self.send_flow_control();
            }
        }
        self.now = self.now.max(t_ns);
        while let Some(Reverse((arrival, _, port, buf))) = self.pending.peek().copied() {
            if arrival > t_ns {
                break;
            }
            self.pending.pop();
            let spare = self.spare.pop().unwrap_or_default();
            let frame = std::mem::replace(&mut self.out_bufs[buf as usize], spare);
            self.free_bufs.push(buf);
            let out = Output {
                port,
                frame,
                t_ns: arrival,
            };
            if Some(port) == self.cpu_port {
                self.packet_in.push_back(out);
            } else {
                self.delivered.push_back(out);
            }
            self.stats.transmitted += 1;
        }
    }

    /// Earliest time (ns) at which `advance` has something to do: a frame to
    /// start transmitting or one to deliver, or a packet the generator makes;
    /// None when the switch is idle.
    pub fn next_event_ns(&self) -> Option<u64> {
        self.next_frame_ns()
            .into_iter()
            .chain(self.pktgen_next_ns())
            .min()
    }

    /// Earliest time a queued frame starts or a sent one arrives.
    pub(super) fn next_frame_ns(&self) -> Option<u64> {
        let next_tm = self.tm.next_event_time();
        let next_arrival = self.pending.peek().map(|Reverse((a, ..))| *a);
        next_tm.into_iter().chain(next_arrival).min()
    }

    /// Runs until nothing is queued or in flight; returns the time reached. A running
    /// packet generator (whose timers never end) makes its packets on the way but does
    /// not keep `drain` going.
    pub fn drain(&mut self) -> u64 {
        while let Some(t) = self.next_frame_ns() {
            self.advance(t.max(self.now));
        }
        self.now
    }
}
