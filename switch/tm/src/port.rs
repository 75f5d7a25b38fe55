//! One egress port: its queues, scheduler and shaper, transmitting one frame at a time.

use crate::config::{PortConfig, V1MODEL_QUEUES};
use crate::flowcontrol::IngressCharge;
use crate::queue::{Queue, Queued};
use crate::scheduler::{queues_of, Mask, Scheduler};
use crate::shaper::Shaper;
use crate::stats::{DropReason, PortStats};

/// A frame leaving a port, with its timing and BMv2 queueing metadata.
#[derive(Debug, PartialEq, Eq)]
pub struct Dequeued<T> {
    /// The caller's handle.
    pub item: T,
    /// Egress port.
    pub port: u16,
    /// Queue (priority) it was served from, BMv2's `qid`.
    pub queue: u8,
    /// When it was admitted, ns (`enq_timestamp`).
    pub enq_time: u64,
    /// When its first bit starts on the wire, ns: the buffer is released and
    /// egress runs then (`deq_timedelta` = `tx_start - enq_time`).
    pub tx_start: u64,
    /// When its last bit leaves the port, ns.
    pub tx_end: u64,
    /// When its last bit reaches the peer, ns (`tx_end + delay_ns`).
    pub arrival: u64,
    /// Frames left in its queue after it was removed (`deq_qdepth`).
    pub deq_qdepth_pkts: u32,
    /// Frame bytes left in its queue after it was removed.
    pub deq_qdepth_bytes: u64,
    /// Buffer cells left in its queue after it was removed (Tofino's `deq_qdepth`).
    pub deq_qdepth_cells: u64,
    /// Frame bytes.
    pub frame_bytes: u32,
    /// Buffer cells the frame held.
    pub frame_cells: u32,
    /// The application pool and the cells of it the frame held (its queue's
    /// cells above the guaranteed minimum), if its queue uses a pool.
    pub app_pool_cells: Option<(u8, u32)>,
    /// What it held on its ingress side (returned by the manager).
    pub(crate) ingress: Option<IngressCharge>,
}

/// State of one egress port.
#[derive(Debug)]
pub(crate) struct Port<T> {
    id: u16,
    pub cfg: PortConfig,
    /// At least eight queues (a v1model port's), more when `num_queues` asks:
    /// a Tofino port of 128 queues costs its memory only where it is configured.
    queues: Vec<Queue<T>>,
    shaper: Shaper,
    scheduler: Scheduler,
    /// When the last started frame's last bit leaves, ns.
    free_at: u64,
    /// No frame starts before the latest reconfiguration, ns.
    not_before: u64,
    /// Bit q set iff queue q holds a frame.
    backlogged: Mask,
    /// How the last frame started, so its wire time can be redone with the
    /// bytes egress really sent (`retime_last`).
    last: Option<LastStart>,
    pub stats: PortStats,
}

/// The start of a port's last frame: its time, whether it followed the one
/// before back to back, and the shaper's carry before it.
#[derive(Debug, Clone, Copy)]
struct LastStart {
    start: u64,
    back_to_back: bool,
    carry: u64,
}

impl<T> Port<T> {
    /// An idle port `id` with settings `cfg` (already validated).
    pub(crate) fn new(id: u16, cfg: PortConfig) -> Self {
        let n = usize::from(cfg.num_queues.max(V1MODEL_QUEUES));
        Port {
            id,
            cfg,
            queues: (0..n).map(|q| Queue::new(cfg.queue_rate_pps[q])).collect(),
            shaper: Shaper::new(cfg.rate_bps, cfg.wire_overhead_bytes),
            scheduler: Scheduler::new(n),
            free_at: 0,
            not_before: 0,
            backlogged: 0,
            last: None,
            stats: PortStats::default(),
        }
    }

    /// Applies new settings (already validated) at `now` to frames not yet started.
    ///
    /// Frames already queued stay, even in queues above a reduced
    /// `num_queues`: they drain, only new arrivals are refused there. A frame
    /// the old settings held back (e.g. by its pps rate) starts at `now` at
    /// the earliest, never in the past before the change was made.
    pub(crate) fn reconfigure(&mut self, cfg: PortConfig, now: u64) {
        self.not_before = self.not_before.max(now);
        for q in self.queues.len()..usize::from(cfg.num_queues) {
            self.queues.push(Queue::new(cfg.queue_rate_pps[q]));
        }
        self.shaper
            .reconfigure(cfg.rate_bps, cfg.wire_overhead_bytes);
        for (queue, &pps) in self.queues.iter_mut().zip(cfg.queue_rate_pps.iter()) {
            queue.pacer.set_rate(pps);
        }
        if cfg.scheduling != self.cfg.scheduling {
            self.scheduler.reset();
        }
        self.scheduler.grow(self.queues.len());
        self.cfg = cfg;
    }

    /// Holds the queues of the PFC classes in `class_mask` (bit c = class c;
    /// queue q honours class `pfc_cos[q]`) until `until`, ns; a frame already
    /// on the wire finishes.
    pub(crate) fn pause(&mut self, class_mask: u8, until: u64) {
        for (queue, &class) in self.queues.iter_mut().zip(self.cfg.pfc_cos.iter()) {
            if class_mask & (1 << class) != 0 {
                queue.paused_until = until;
            }
        }
    }

    /// Queue `q`, if the port has it.
    pub(crate) fn queue(&self, q: u8) -> Option<&Queue<T>> {
        self.queues.get(usize::from(q))
    }

    /// Queue `q` to change, if the port has it.
    pub(crate) fn queue_mut(&mut self, q: u8) -> Option<&mut Queue<T>> {
        self.queues.get_mut(usize::from(q))
    }

    /// Appends an admitted frame to queue `q` (one the port has); whether it
    /// became the queue's head, the only case that can move [`Port::next_start`].
    pub(crate) fn push(&mut self, q: u8, frame: Queued<T>) -> bool {
        let Some(queue) = self.queues.get_mut(usize::from(q)) else {
            return false;
        };
        let new_head = queue.is_empty();
        let s = &mut self.stats;
        s.occupancy_bytes += u64::from(frame.bytes);
        s.max_occupancy_bytes = s.max_occupancy_bytes.max(s.occupancy_bytes);
        s.occupancy_cells += u64::from(frame.cells);
        s.max_occupancy_cells = s.max_occupancy_cells.max(s.occupancy_cells);
        queue.push(frame);
        self.backlogged |= 1 << q;
        new_head
    }

    /// Counts a frame refused at queue `q`.
    pub(crate) fn count_drop(&mut self, q: u8, reason: DropReason, frame_bytes: u32) {
        if let Some(queue) = self.queues.get_mut(usize::from(q)) {
            queue.stats.count_drop(reason, frame_bytes);
        }
    }

    /// Earliest time the port can start its next frame, if it holds any.
    #[inline(always)]
    pub(crate) fn next_start(&self) -> Option<u64> {
        let ready = match self.backlogged {
            0 => None,
            // One backlogged queue, the usual case: no scan.
            one if one.is_power_of_two() => {
                let q = one.trailing_zeros() as usize;
                self.queues.get(q).and_then(Queue::head_ready_at)
            }
            _ => self
                .backlogged_queues()
                .filter_map(|q| self.queues[usize::from(q)].head_ready_at())
                .min(),
        };
        ready.map(|ready| ready.max(self.free_at).max(self.not_before))
    }

    /// Starts the next frame at `start` (>= `next_start()`): the scheduler
    /// picks among the queues whose head may start then.
    pub(crate) fn transmit(&mut self, start: u64) -> Option<Dequeued<T>> {
        let start = start.max(self.free_at).max(self.not_before);
        let back_to_back = start == self.free_at;
        let ready_by_start = |q: &Queue<T>| q.head_ready_at().is_some_and(|ready| ready <= start);
        let eligible = if self.backlogged.is_power_of_two() {
            // One backlogged queue, the usual case: its bit or none.
            let q = self.backlogged.trailing_zeros() as usize;
            if self.queues.get(q).is_some_and(ready_by_start) {
                self.backlogged
            } else {
                0
            }
        } else {
            self.backlogged_queues()
                .filter(|&q| ready_by_start(&self.queues[usize::from(q)]))
                .fold(0 as Mask, |mask, q| mask | (1 << q))
        };
        let queues = &self.queues;
        let q = self
            .scheduler
            .pick(&self.cfg.scheduling, eligible, self.backlogged, |q| {
                queues[usize::from(q)].head().map_or(0, |f| f.bytes)
            })?;
        let queue = &mut self.queues[usize::from(q)];
        let frame = queue.pop(start)?;
        let now_empty = queue.is_empty();
        if now_empty {
            self.backlogged &= !(1 << q);
        }
        self.scheduler.served(q, now_empty);
        self.last = Some(LastStart {
            start,
            back_to_back,
            carry: self.shaper.remainder(),
        });
        let tx_end = start.saturating_add(self.shaper.serialise_ns(frame.bytes, back_to_back));
        self.free_at = tx_end;
        self.stats.occupancy_bytes -= u64::from(frame.bytes);
        self.stats.occupancy_cells -= u64::from(frame.cells);
        self.stats.transmitted.add(frame.bytes);
        Some(Dequeued {
            item: frame.item,
            port: self.id,
            queue: q,
            enq_time: frame.enq_time,
            tx_start: start,
            tx_end,
            arrival: tx_end.saturating_add(self.cfg.delay_ns),
            deq_qdepth_pkts: queue.stats.depth_pkts,
            deq_qdepth_bytes: queue.stats.depth_bytes,
            deq_qdepth_cells: queue.stats.depth_cells,
            frame_bytes: frame.bytes,
            frame_cells: frame.cells,
            app_pool_cells: frame.pool_charge,
            ingress: frame.ingress,
        })
    }

    /// Redoes the wire time of the frame `transmit` started last with the
    /// `wire_bytes` that really left (None: egress dropped it, the wire stayed
    /// idle); the new end of its last bit, ns. Must come before the next start.
    pub(crate) fn retime_last(&mut self, wire_bytes: Option<u32>) -> Option<u64> {
        let last = self.last.take()?;
        self.shaper.restore(last.carry);
        self.free_at = match wire_bytes {
            Some(bytes) => last
                .start
                .saturating_add(self.shaper.serialise_ns(bytes, last.back_to_back)),
            None => last.start,
        };
        Some(self.free_at)
    }

    /// Indices of the queues holding frames.
    fn backlogged_queues(&self) -> impl Iterator<Item = u8> {
        queues_of(self.backlogged)
    }
}
