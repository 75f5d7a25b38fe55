//! Picks which of a port's queues sends next: strict priority or deficit round robin.
//!
//! Queues are described by bit masks (bit q = queue q): `eligible` queues have a
//! head frame that may start now, `backlogged` queues hold any frame at all.

use crate::config::{Scheduling, MAX_QUEUES};

/// A set of a port's queues, bit q = queue q (up to `MAX_QUEUES` = 128).
pub(crate) type Mask = u128;

/// The queues of `mask`, lowest first.
pub(crate) fn queues_of(mut mask: Mask) -> impl Iterator<Item = u8> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let q = mask.trailing_zeros() as u8;
            mask &= mask - 1;
            q
        })
    })
}

/// Scheduler state of one port.
#[derive(Clone, Debug)]
pub(crate) struct Scheduler {
    /// DRR credit of each queue the port has, in bytes.
    deficit: Vec<u64>,
    /// Queue the DRR round is visiting.
    cursor: u8,
    /// Whether the visited queue already received its quantum on this visit.
    credited: bool,
}

impl Default for Scheduler {
    /// A scheduler over eight queues.
    fn default() -> Self {
        Scheduler::new(8)
    }
}

impl Scheduler {
    /// A scheduler whose DRR round visits queues `0..queues`.
    pub(crate) fn new(queues: usize) -> Self {
        Scheduler {
            deficit: vec![0; queues.clamp(1, usize::from(MAX_QUEUES))],
            cursor: 0,
            credited: false,
        }
    }

    /// Forgets DRR credit, as after a change of scheduling discipline.
    pub(crate) fn reset(&mut self) {
        *self = Scheduler::new(self.deficit.len());
    }

    /// Lets the DRR round visit queues `0..queues` (never fewer than it had).
    pub(crate) fn grow(&mut self, queues: usize) {
        if queues > self.deficit.len() {
            self.deficit.resize(queues.min(usize::from(MAX_QUEUES)), 0);
        }
    }

    /// Picks the queue to serve among `eligible`, charging DRR credit for `head_bytes(q)`.
    pub(crate) fn pick(
        &mut self,
        scheduling: &Scheduling,
        eligible: Mask,
        backlogged: Mask,
        head_bytes: impl Fn(u8) -> u32,
    ) -> Option<u8> {
        if eligible == 0 {
            return None;
        }
        match scheduling {
            Scheduling::StrictPriority => Some((Mask::BITS - 1 - eligible.leading_zeros()) as u8),
            Scheduling::Drr { quantum_bytes } => {
                Some(self.pick_drr(quantum_bytes, eligible, backlogged, head_bytes))
            }
        }
    }

    /// Tells DRR that queue `q` was just served and whether it is now empty.
    pub(crate) fn served(&mut self, q: u8, now_empty: bool) {
        if now_empty {
            // An emptied queue keeps no credit (DRR), and the round moves on.
            if let Some(d) = self.deficit.get_mut(usize::from(q)) {
                *d = 0;
            }
            if q == self.cursor {
                self.advance();
            }
        }
    }

    /// Deficit round robin over the eligible queues; `eligible` is not empty
    /// and names only queues the round visits.
    fn pick_drr(
        &mut self,
        quantum: &[u32; MAX_QUEUES as usize],
        eligible: Mask,
        backlogged: Mask,
        head_bytes: impl Fn(u8) -> u32,
    ) -> u8 {
        let visited = eligible & self.visited();
        if visited == 0 {
            // Only queues the round does not visit may send (the port grows the
            // round with its queues, so this is a safety net): serve the lowest.
            return eligible.trailing_zeros() as u8;
        }
        let eligible = visited;
        loop {
            for _ in 0..self.deficit.len() {
                let q = self.cursor;
                let qi = usize::from(q);
                if eligible & (1 << q) != 0 {
                    if !self.credited {
                        self.deficit[qi] += u64::from(quantum[qi]);
                        self.credited = true;
                    }
                    let head = u64::from(head_bytes(q));
                    if head <= self.deficit[qi] {
                        self.deficit[qi] -= head;
                        return q;
                    }
                } else if backlogged & (1 << q) == 0 {
                    self.deficit[qi] = 0;
                }
                self.advance();
            }
            // A whole round served nobody: skip straight to the round in which
            // the first queue has saved enough, instead of looping quantum by quantum.
            let rounds = queues_of(eligible)
                .map(|q| {
                    let qi = usize::from(q);
                    let short = u64::from(head_bytes(q)) - self.deficit[qi];
                    short.div_ceil(u64::from(quantum[qi].max(1)))
                })
                .min()
                .unwrap_or(1);
            for q in queues_of(eligible) {
                let qi = usize::from(q);
                self.deficit[qi] += (rounds - 1) * u64::from(quantum[qi]);
            }
        }
    }

    /// The queues the DRR round visits.
    fn visited(&self) -> Mask {
        match self.deficit.len() {
            n if n >= Mask::BITS as usize => Mask::MAX,
            n => (1 << n) - 1,
        }
    }

    /// Moves the round to the next queue.
    fn advance(&mut self) {
        self.cursor = ((usize::from(self.cursor) + 1) % self.deficit.len()) as u8;
        self.credited = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_priority_serves_the_highest_eligible_queue() {
        let mut s = Scheduler::default();
        let sp = Scheduling::StrictPriority;
        assert_eq!(s.pick(&sp, 0b0000_0101, 0b1000_0101, |_| 100), Some(2));
        assert_eq!(s.pick(&sp, 0b1000_0000, 0b1000_0000, |_| 100), Some(7));
        assert_eq!(s.pick(&sp, 0, 0b1000_0000, |_| 100), None);
    }

    #[test]
    fn a_port_of_128_queues_is_served_by_priority_and_by_drr() {
        let mut s = Scheduler::new(128);
        let sp = Scheduling::StrictPriority;
        let mask: Mask = (1 << 127) | (1 << 100) | 1;
        assert_eq!(s.pick(&sp, mask, mask, |_| 100), Some(127));
        assert_eq!(s.pick(&sp, mask & !(1 << 127), mask, |_| 100), Some(100));
        let mut quantum = [1500; MAX_QUEUES as usize];
        quantum[100] = 3000;
        let drr = Scheduling::Drr {
            quantum_bytes: quantum,
        };
        // Queues 3 and 100 backlogged with 1500-byte frames: 100 sends two per round.
        let two: Mask = (1 << 3) | (1 << 100);
        let order: Vec<u8> = (0..6)
            .map(|_| {
                let q = s.pick(&drr, two, two, |_| 1500).unwrap_or(0);
                s.served(q, false);
                q
            })
            .collect();
        assert_eq!(order, [3, 100, 100, 3, 100, 100]);
        assert_eq!(queues_of(two).collect::<Vec<_>>(), [3, 100]);
    }

    #[test]
    fn drr_serves_bytes_in_proportion_to_quanta() {
        let mut s = Scheduler::default();
        let mut quantum = [1; MAX_QUEUES as usize];
        quantum[0] = 1000;
        quantum[1] = 3000;
        let drr = Scheduling::Drr {
            quantum_bytes: quantum,
        };
        let mut bytes = [0u64; 2];
        for _ in 0..4000 {
            let q = s.pick(&drr, 0b11, 0b11, |_| 500).unwrap_or(9);
            bytes[usize::from(q)] += 500;
            s.served(q, false);
        }
        assert_eq!(bytes[0] * 3, bytes[1]);
    }

    #[test]
    fn drr_with_small_quanta_skips_idle_rounds() {
        let mut s = Scheduler::default();
        let drr = Scheduling::Drr {
            quantum_bytes: [1; MAX_QUEUES as usize],
        };
        // 1500-byte frames with 1-byte quanta: both queues alternate.
        let order: Vec<u8> = (0..4)
            .map(|_| {
                let q = s.pick(&drr, 0b101, 0b101, |_| 1500).unwrap_or(9);
                s.served(q, false);
                q
            })
            .collect();
        assert_eq!(order, [0, 2, 0, 2]);
    }

    /// Frame size of the k-th frame of queue q in the comparison below.
    fn size(q: usize, k: usize) -> u32 {
        64 + ((q * 7919 + k * 104_729) % 1451) as u32
    }

    #[test]
    fn drr_matches_the_textbook_loop_with_small_quanta() {
        // Shreedhar & Varghese's loop: visit queues in turn, add the quantum,
        // send while the head fits. Every queue here stays backlogged.
        let mut quantum = [1u32; MAX_QUEUES as usize];
        quantum[..8].copy_from_slice(&[100, 1, 700, 64, 1500, 3, 999, 250]);
        let mut textbook = Vec::new();
        let mut deficit = [0u64; 8];
        let mut next = [0usize; 8];
        'rounds: loop {
            for q in 0..8 {
                deficit[q] += u64::from(quantum[q]);
                while u64::from(size(q, next[q])) <= deficit[q] {
                    deficit[q] -= u64::from(size(q, next[q]));
                    next[q] += 1;
                    textbook.push(q as u8);
                    if textbook.len() == 3000 {
                        break 'rounds;
                    }
                }
            }
        }
        let mut s = Scheduler::default();
        let drr = Scheduling::Drr {
            quantum_bytes: quantum,
        };
        let mut sent = [0usize; 8];
        let ours: Vec<u8> = (0..3000)
            .map(|_| {
                let q = s
                    .pick(&drr, 0xFF, 0xFF, |q| {
                        size(usize::from(q), sent[usize::from(q)])
                    })
                    .unwrap_or(9);
                sent[usize::from(q)] += 1;
                s.served(q, false);
                q
            })
            .collect();
        assert_eq!(ours, textbook);
    }

    #[test]
    fn drr_emptied_queue_loses_its_credit() {
        let mut s = Scheduler::default();
        let drr = Scheduling::Drr {
            quantum_bytes: [10_000; MAX_QUEUES as usize],
        };
        assert_eq!(s.pick(&drr, 0b1, 0b1, |_| 100), Some(0));
        s.served(0, true);
        assert_eq!(s.deficit[0], 0);
        assert_eq!(s.cursor, 1);
    }
}
