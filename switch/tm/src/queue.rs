//! One FIFO queue of frames with its depth, counters and packet pacer.

use std::collections::VecDeque;

use crate::flowcontrol::IngressCharge;
use crate::shaper::PpsPacer;
use crate::stats::QueueStats;

/// A frame waiting in a queue.
#[derive(Debug)]
pub(crate) struct Queued<T> {
    /// The caller's handle.
    pub item: T,
    /// Time it was admitted, ns.
    pub enq_time: u64,
    /// Frame bytes.
    pub bytes: u32,
    /// Buffer cells it holds.
    pub cells: u32,
    /// Of `cells`, those charged to an application pool, and which pool.
    pub pool_charge: Option<(u8, u32)>,
    /// What it holds on its ingress side, when the caller named its ingress.
    pub ingress: Option<IngressCharge>,
}

/// A FIFO of frames; its storage is kept when it drains, so a warmed-up queue
/// never allocates.
#[derive(Debug)]
pub(crate) struct Queue<T> {
    frames: VecDeque<Queued<T>>,
    pub stats: QueueStats,
    pub pacer: PpsPacer,
    /// No frame may start before this time, ns (802.3x PAUSE / PFC from the peer).
    pub paused_until: u64,
    /// The queue hit its application-pool limit and waits for its hysteresis.
    pub pool_dropping: bool,
}

impl<T> Queue<T> {
    /// An empty queue paced at `rate_pps` (0 = unlimited).
    pub(crate) fn new(rate_pps: u64) -> Self {
        Queue {
            frames: VecDeque::new(),
            stats: QueueStats::default(),
            pacer: PpsPacer::new(rate_pps),
            paused_until: 0,
            pool_dropping: false,
        }
    }

    /// The oldest frame, if any.
    pub(crate) fn head(&self) -> Option<&Queued<T>> {
        self.frames.front()
    }

    /// Appends an admitted frame.
    pub(crate) fn push(&mut self, frame: Queued<T>) {
        let s = &mut self.stats;
        s.enqueued.add(frame.bytes);
        s.depth_pkts += 1;
        s.depth_bytes += u64::from(frame.bytes);
        s.depth_cells += u64::from(frame.cells);
        s.max_depth_pkts = s.max_depth_pkts.max(s.depth_pkts);
        s.max_depth_bytes = s.max_depth_bytes.max(s.depth_bytes);
        s.max_depth_cells = s.max_depth_cells.max(s.depth_cells);
        self.frames.push_back(frame);
    }

    /// Removes the oldest frame as it starts transmission at `start`.
    pub(crate) fn pop(&mut self, start: u64) -> Option<Queued<T>> {
        let frame = self.frames.pop_front()?;
        let s = &mut self.stats;
        s.dequeued.add(frame.bytes);
        s.depth_pkts -= 1;
        s.depth_bytes -= u64::from(frame.bytes);
        s.depth_cells -= u64::from(frame.cells);
        self.pacer.on_start(start);
        Some(frame)
    }

    /// Earliest time the head frame may start, from its admission, the pacer and a pause.
    #[inline]
    pub(crate) fn head_ready_at(&self) -> Option<u64> {
        self.head().map(|f| {
            f.enq_time
                .max(self.pacer.allowed_at())
                .max(self.paused_until)
        })
    }

    /// Whether the queue holds no frame.
    pub(crate) fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }
}
