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

/// Events by (time, order of scheduling). The heap orders small keys (time,
/// sequence, slot); the events themselves wait in slots beside it, so a
/// push or pop moves 24 bytes per heap level instead of a whole event.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(u64, u64, u32)>>,
    slots: Vec<Event>,
    free: Vec<u32>,
    seq: u64,
}

impl EventQueue {
    /// Schedules `event` at `t_ns`.
    pub fn push(&mut self, t_ns: u64, event: Event) {
        self.seq += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = event;
                slot
            }
            None => {
                self.slots.push(event);
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 events waiting")
            }
        };
        self.heap.push(Reverse((t_ns, self.seq, slot)));
    }

    /// The earliest event's time.
    pub fn peek_ns(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((t, ..))| *t)
    }

    /// Removes the earliest event.
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        let Reverse((t, _, slot)) = self.heap.pop()?;
        self.free.push(slot);
        Some((t, self.slots[slot as usize]))
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

    #[test]
    fn interleaved_pushes_and_pops_keep_the_order_and_reuse_the_slots() {
        let mut q = EventQueue::default();
        for host in 0..4 {
            q.push(100 - u64::from(host), Event::NicWake { host });
        }
        assert_eq!(q.pop().map(|(t, _)| t), Some(97));
        assert_eq!(q.pop().map(|(t, _)| t), Some(98));
        q.push(98, Event::NicWake { host: 7 });
        q.push(99, Event::NicWake { host: 8 });
        assert_eq!(q.slots.len(), 4, "the two freed slots hold the new events");
        let rest: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop())
            .map(|(t, e)| match e {
                Event::NicWake { host } => (t, host),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(rest, vec![(98, 7), (99, 1), (99, 8), (100, 0)]);
        assert!(q.is_empty());
    }
}
