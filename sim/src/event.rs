//! The event queue: events in time order, ties in the order they were scheduled,
//! so a run is the same every time.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use bufferlab_hosts::bcn::BcnFeedback;

use crate::frames::FrameId;

/// A node of the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeRef {
    /// A switch, by index.
    Switch(u32),
    /// A host, by index.
    Host(u32),
}

/// Something that happens at a time.
#[derive(Debug, Clone, Copy)]
pub enum Event {
    /// A source offers the frame it has ready.
    Generate { source: u32 },
    /// A host's link may take a frame (it went idle, a pacer or a pause let go).
    NicWake { host: u32 },
    /// A frame's last bit arrived at a host, or (after the switch latency) enters a switch.
    Arrive {
        node: NodeRef,
        port: u16,
        link: u32,
        frame: FrameId,
    },
    /// A host acts on a BCN (its response time after the frame arrived).
    Feedback { source: u32, bcn: BcnFeedback },
    /// A source's BCN reaction point asked for its timer (drift) at this time.
    RpTimer { source: u32 },
    /// A host's Python reaction model gets a feedback frame.
    HookFeedback { source: u32, frame: FrameId },
    /// A timer a Python reaction model set.
    HookTimer { source: u32, token: u64 },
    /// A TCP flow's timer (its start, RTO, TLP, RACK, delayed ACK).
    TcpTimer { flow: u32 },
    /// Time to take one sample of every recorded series.
    Record,
}

/// Events by (time, order of scheduling).
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(u64, u64, Slot)>>,
    seq: u64,
}

/// An event in the heap, ordered only by (time, seq).
#[derive(Clone, Copy)]
struct Slot(Event);

impl PartialEq for Slot {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for Slot {}
impl PartialOrd for Slot {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Slot {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl EventQueue {
    /// Schedules `event` at `t_ns`.
    pub fn push(&mut self, t_ns: u64, event: Event) {
        self.seq += 1;
        self.heap.push(Reverse((t_ns, self.seq, Slot(event))));
    }

    /// The earliest event's time.
    pub fn peek_ns(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((t, ..))| *t)
    }

    /// Removes the earliest event.
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        self.heap.pop().map(|Reverse((t, _, Slot(e)))| (t, e))
    }

    /// Events waiting.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_come_out_by_time_then_by_scheduling_order() {
        let mut q = EventQueue::default();
        q.push(20, Event::Record);
        q.push(10, Event::NicWake { host: 1 });
        q.push(10, Event::NicWake { host: 2 });
        let order: Vec<(u64, Option<u32>)> = std::iter::from_fn(|| q.pop())
            .map(|(t, e)| {
                (
                    t,
                    if let Event::NicWake { host } = e {
                        Some(host)
                    } else {
                        None
                    },
                )
            })
            .collect();
        assert_eq!(order, vec![(10, Some(1)), (10, Some(2)), (20, None)]);
    }
}
