//! The rate-limiter queue (RLQ): a bounded FIFO whose frames leave paced at the
//! regulated rate (congestion.md §1.4).
//!
//! Pacing: a frame may start once the previous one's time at the regulated rate has
//! passed; a frame that finds the queue idle starts at once. Without a rate the queue
//! paces nothing (the host's link is then the only limit). `hold_until` keeps every
//! frame in until a time: one hold, so a caller with two reasons to stop the queue (the
//! live sender's PAUSE and BCN(0,0) back-off) keeps them apart and holds until the later;
//! the simulator holds the RLQ only for a back-off (PAUSE stops its NIC). A frame that
//! does not fit is handed back: the caller decides whether that is a drop or
//! back-pressure on its source.

use std::collections::VecDeque;

use crate::wire::Serialiser;

/// FIFO of frames up to `capacity_bytes`, paced at an optional rate.
#[derive(Debug)]
pub struct RateLimiterQueue<T> {
    capacity_bytes: u64,
    overhead_bytes: u32,
    pacer: Option<Serialiser>,
    frames: VecDeque<(T, u32)>,
    occupancy_bytes: u64,
    next_start_ns: u64,
    resume_ns: u64,
    refused_frames: u64,
}

impl<T> RateLimiterQueue<T> {
    /// An empty queue; `rate_bps` None paces nothing. Each frame costs its bytes plus
    /// `overhead_bytes` at the rate, as on the wire.
    pub fn new(
        capacity_bytes: u64,
        rate_bps: Option<u64>,
        overhead_bytes: u32,
    ) -> Result<Self, String> {
        if capacity_bytes == 0 {
            return Err("RLQ capacity_bytes must be positive".into());
        }
        if rate_bps == Some(0) {
            return Err("RLQ rate_bps must be positive".into());
        }
        Ok(RateLimiterQueue {
            capacity_bytes,
            overhead_bytes,
            pacer: rate_bps.map(Serialiser::new),
            frames: VecDeque::new(),
            occupancy_bytes: 0,
            next_start_ns: 0,
            resume_ns: 0,
            refused_frames: 0,
        })
    }

    /// Capacity, bytes.
    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    /// Bytes queued.
    pub fn occupancy_bytes(&self) -> u64 {
        self.occupancy_bytes
    }

    /// Frames queued.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Whether no frame is queued.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Frames refused because they did not fit.
    pub fn refused_frames(&self) -> u64 {
        self.refused_frames
    }

    /// The pacing rate, bit/s (None: unpaced).
    pub fn rate_bps(&self) -> Option<u64> {
        self.pacer.as_ref().map(Serialiser::rate_bps)
    }

    /// Whether a frame of `bytes` could ever fit.
    pub fn can_hold(&self, bytes: u32) -> bool {
        u64::from(bytes) <= self.capacity_bytes
    }

    /// Whether a frame of `bytes` fits now.
    pub fn fits(&self, bytes: u32) -> bool {
        self.occupancy_bytes + u64::from(bytes) <= self.capacity_bytes
    }

    /// Enqueues a frame; hands it back (and counts it) when it does not fit.
    pub fn offer(&mut self, item: T, bytes: u32) -> Result<(), T> {
        if !self.fits(bytes) {
            self.refused_frames += 1;
            return Err(item);
        }
        self.frames.push_back((item, bytes));
        self.occupancy_bytes += u64::from(bytes);
        Ok(())
    }

    /// Enqueues a frame that arrives at `now_ns`: as `offer`, and a frame that finds the
    /// queue idle after its paced time starts a new run at `now_ns`. Callers that take
    /// frames with `release` need this: `release` lets each frame leave at its paced
    /// time, which for a frame offered after an idle spell lies before it arrived, and the
    /// frames behind it would follow back to back until the schedule caught up.
    pub fn offer_at(&mut self, now_ns: u64, item: T, bytes: u32) -> Result<(), T> {
        if self.frames.is_empty() && now_ns > self.next_start_ns && self.fits(bytes) {
            if let Some(pacer) = &mut self.pacer {
                pacer.restart();
            }
            self.next_start_ns = now_ns;
        }
        self.offer(item, bytes)
    }

    /// When the head frame may leave (None when empty).
    pub fn head_ready_ns(&self) -> Option<u64> {
        if self.frames.is_empty() {
            None
        } else {
            Some(self.next_start_ns.max(self.resume_ns))
        }
    }

    /// Takes the head frame if it may leave at `now_ns`: `(item, bytes)`.
    pub fn pop(&mut self, now_ns: u64) -> Option<(T, u32)> {
        if self.head_ready_ns()? > now_ns {
            return None;
        }
        let (item, bytes) = self.frames.pop_front()?;
        self.occupancy_bytes -= u64::from(bytes);
        if let Some(pacer) = &mut self.pacer {
            // A frame that waited for its turn continues the paced run; one that found the
            // queue idle starts a new run.
            if now_ns > self.next_start_ns {
                pacer.restart();
                self.next_start_ns = now_ns;
            }
            let wire = u64::from(bytes) + u64::from(self.overhead_bytes);
            self.next_start_ns = self.next_start_ns.saturating_add(pacer.next_ns(wire));
        } else {
            self.next_start_ns = now_ns;
        }
        Some((item, bytes))
    }

    /// Every frame that may leave by `now_ns`, in order (they leave at their paced times).
    pub fn release(&mut self, now_ns: u64) -> Vec<T> {
        let mut out = Vec::new();
        while let Some(item) = self.release_one(now_ns) {
            out.push(item);
        }
        out
    }

    /// The head frame if it may leave by `now_ns`, taken at its paced time (so a frame
    /// released late keeps the paced run); for a sender that looks for a hold between frames.
    pub fn release_one(&mut self, now_ns: u64) -> Option<T> {
        let ready = self.head_ready_ns()?;
        if ready > now_ns {
            return None;
        }
        self.pop(ready).map(|(item, _)| item)
    }

    /// Changes the pacing rate (None: unpaced); the wait still owed for the last
    /// frame is rescaled to the new rate.
    pub fn set_rate(&mut self, now_ns: u64, rate_bps: Option<u64>) -> Result<(), String> {
        if rate_bps == Some(0) {
            return Err("RLQ rate_bps must be positive".into());
        }
        let old = self.rate_bps();
        match (old, rate_bps) {
            (Some(old), Some(new)) if self.next_start_ns > now_ns => {
                let owed = u128::from(self.next_start_ns - now_ns) * u128::from(old);
                let scaled = owed.div_ceil(u128::from(new));
                self.next_start_ns =
                    now_ns.saturating_add(u64::try_from(scaled).unwrap_or(u64::MAX));
            }
            (_, None) => self.next_start_ns = self.next_start_ns.min(now_ns),
            _ => {}
        }
        match (&mut self.pacer, rate_bps) {
            (Some(pacer), Some(rate)) => pacer.set_rate(rate),
            (pacer, rate) => *pacer = rate.map(Serialiser::new),
        }
        Ok(())
    }

    /// Nothing leaves before `resume_ns`; a later call replaces it, shorter or not.
    pub fn hold_until(&mut self, resume_ns: u64) {
        self.resume_ns = resume_ns;
    }

    /// The time before which nothing leaves, ns.
    pub fn held_until_ns(&self) -> u64 {
        self.resume_ns
    }

    /// The queued frames, head first: `(item, bytes)`.
    pub fn iter(&self) -> impl Iterator<Item = (&T, u32)> + '_ {
        self.frames.iter().map(|(item, bytes)| (item, *bytes))
    }

    /// Removes every frame (e.g. when a limiter is taken away), in order.
    pub fn drain_all(&mut self) -> impl Iterator<Item = (T, u32)> + '_ {
        self.occupancy_bytes = 0;
        self.frames.drain(..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paced_frames_leave_one_wire_time_apart_and_the_first_at_once() {
        // 1 Gbit/s, 1,000-byte frames, no overhead: 8,000 ns each.
        let mut q = RateLimiterQueue::new(10_000, Some(1_000_000_000), 0).unwrap();
        for i in 0..3 {
            q.offer(i, 1000).unwrap();
        }
        assert_eq!(q.head_ready_ns(), Some(0));
        assert_eq!(q.pop(100), Some((0, 1000)));
        assert_eq!(q.head_ready_ns(), Some(8_100));
        assert_eq!(q.pop(8_099), None);
        assert_eq!(q.pop(8_100), Some((1, 1000)));
        assert_eq!(q.head_ready_ns(), Some(16_100));
    }

    #[test]
    fn a_full_queue_hands_the_frame_back_and_counts_it() {
        let mut q = RateLimiterQueue::new(2_500, Some(1_000_000_000), 0).unwrap();
        assert!(q.offer("a", 1000).is_ok());
        assert!(q.offer("b", 1000).is_ok());
        assert_eq!(q.offer("c", 1000), Err("c"));
        assert_eq!(q.refused_frames(), 1);
        assert_eq!(q.occupancy_bytes(), 2000);
    }

    #[test]
    fn a_rate_change_rescales_the_wait_still_owed() {
        let mut q = RateLimiterQueue::new(10_000, Some(1_000_000_000), 0).unwrap();
        q.offer(0, 1000).unwrap();
        q.offer(1, 1000).unwrap();
        q.pop(0).unwrap();
        // 4,000 ns of the 8,000 ns gap are left at 1 Gbit/s: 8,000 ns at 500 Mbit/s.
        q.set_rate(4_000, Some(500_000_000)).unwrap();
        assert_eq!(q.head_ready_ns(), Some(12_000));
        q.set_rate(5_000, None).unwrap();
        assert_eq!(q.head_ready_ns(), Some(5_000));
    }

    #[test]
    fn a_hold_keeps_frames_in_and_release_paces_them_after_it() {
        let mut q = RateLimiterQueue::new(10_000, Some(1_000_000_000), 24).unwrap();
        q.offer(0, 976).unwrap();
        q.offer(1, 976).unwrap();
        q.hold_until(50_000);
        assert!(q.release(49_999).is_empty());
        // 976 + 24 bytes = 8,000 ns at 1 Gbit/s.
        assert_eq!(q.release(57_999), vec![0]);
        assert_eq!(q.release(58_000), vec![1]);
    }

    #[test]
    fn a_frame_offered_at_its_arrival_after_idle_starts_a_new_paced_run() {
        // 1 Gbit/s, 1,000-byte frames: 8,000 ns each.
        let mut q = RateLimiterQueue::new(10_000, Some(1_000_000_000), 0).unwrap();
        q.offer_at(0, 'a', 1000).unwrap();
        assert_eq!(q.release(0), vec!['a']);
        q.offer_at(100_000, 'b', 1000).unwrap();
        q.offer_at(100_000, 'c', 1000).unwrap();
        assert_eq!(q.head_ready_ns(), Some(100_000));
        assert_eq!(q.release(100_000), vec!['b']);
        assert_eq!(q.head_ready_ns(), Some(108_000));
        // Arriving before the paced time, a frame keeps it; a refused one changes nothing.
        assert_eq!(q.release(108_000), vec!['c']);
        q.offer_at(110_000, 'd', 1000).unwrap();
        assert_eq!(q.head_ready_ns(), Some(116_000));
        assert_eq!(q.release(116_000), vec!['d']);
        assert_eq!(q.offer_at(200_000, 'e', 20_000), Err('e'));
        q.offer_at(120_000, 'f', 1000).unwrap();
        assert_eq!(q.head_ready_ns(), Some(124_000));
    }

    #[test]
    fn iter_shows_the_queue_head_first_without_taking_frames() {
        let mut q = RateLimiterQueue::new(10_000, None, 0).unwrap();
        q.offer('a', 100).unwrap();
        q.offer('b', 200).unwrap();
        assert_eq!(q.iter().collect::<Vec<_>>(), vec![(&'a', 100), (&'b', 200)]);
        assert_eq!((q.len(), q.occupancy_bytes()), (2, 300));
    }

    #[test]
    fn zero_rates_and_capacities_are_refused() {
        assert!(RateLimiterQueue::<u8>::new(0, None, 0).is_err());
        assert!(RateLimiterQueue::<u8>::new(1, Some(0), 0).is_err());
        let mut q = RateLimiterQueue::<u8>::new(1, None, 0).unwrap();
        assert!(q.set_rate(0, Some(0)).is_err());
    }
}
