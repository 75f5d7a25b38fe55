//! The traffic manager: admits frames into per-port queues sharing one pool,
//! and hands them back in departure-time order across ports.

use crate::admission::{admit, Occupancy, Size};
use crate::calendar::Calendar;
use crate::config::{ConfigError, PortConfig, QueueLimit, TmConfig, MAX_QUEUES, NUM_PORTS};
use crate::flowcontrol::{FlowControlFrame, Ingress, PortFlowControl, PpgConfig};
use crate::pools::{admit_in_pool, AppPools};
use crate::port::{Dequeued, Port};
use crate::queue::Queued;
use crate::shaper::pause_quanta_ns;
use crate::stats::{DropReason, PortStats, QueueStats, TmStats};

/// Queue state seen by an admitted frame, as BMv2's `enq_qdepth`: before the frame joined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Enqueued {
    /// Frames in the queue before this one (`enq_qdepth`).
    pub enq_qdepth_pkts: u32,
    /// Frame bytes in the queue before this one.
    pub enq_qdepth_bytes: u64,
    /// Frame bytes in the shared pool before this one.
    pub pool_used_bytes: u64,
    /// Buffer cells in the queue before this one (Tofino's `enq_qdepth`;
    /// bytes when the manager has no cell size).
    pub enq_qdepth_cells: u64,
    /// Buffer cells in the shared pool before this one.
    pub pool_used_cells: u64,
    /// Admission time used for the frame (`enq_timestamp`), ns.
    pub enq_time: u64,
}

/// A refused frame, handed back with the reason.
#[derive(Debug, PartialEq, Eq)]
pub struct Rejected<T> {
    /// The caller's handle, returned untouched.
    pub item: T,
    /// The first admission check that failed.
    pub reason: DropReason,
}

/// Shared buffer pool, 512 ports of up to 128 queues each, driven by a clock passed in.
#[derive(Debug)]
pub struct TrafficManager<T> {
    pool_bytes: u64,
    /// Bytes per buffer cell; 1 when the buffer is counted in bytes.
    cell_bytes: u32,
    /// Queues a port may have (`TmConfig::queues_per_port`).
    queues_per_port: u8,
    /// The application pools queues may grow in.
    pools: AppPools,
    /// Ingress accounting, PPGs and the PAUSE / PFC frames they ask for.
    ingress: Ingress,
    /// Per pipe, the (port, queue) a frame dropped with deflect-on-drop goes to.
    mirror_on_drop: [Option<(u16, u8)>; 4],
    ports: Vec<Port<T>>,
    calendar: Calendar,
    stats: TmStats,
    /// Latest `now` seen; time never runs backwards inside the manager.
    clock: u64,
}

impl<T> TrafficManager<T> {
    /// A traffic manager with every port set to `cfg.default_port`.
    pub fn new(cfg: TmConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(TrafficManager {
            pool_bytes: cfg.pool_bytes,
            cell_bytes: cfg.cell_bytes.unwrap_or(1),
            queues_per_port: cfg.queues_per_port,
            pools: AppPools::default(),
            ingress: Ingress::new(NUM_PORTS),
            mirror_on_drop: [None; 4],
            ports: (0..NUM_PORTS)
                .map(|id| Port::new(id, cfg.default_port))
                .collect(),
            calendar: Calendar::new(NUM_PORTS),
            stats: TmStats::default(),
            clock: 0,
        })
    }

    /// Replaces a port's settings; they apply to frames not yet started, from
    /// the latest time the manager has seen (`now` of the last call).
    pub fn configure_port(&mut self, port: u16, cfg: PortConfig) -> Result<(), ConfigError> {
        cfg.validate()?;
        cfg.fits(self.queues_per_port)?;
        let p = self
            .ports
            .get_mut(usize::from(port))
            .ok_or(ConfigError::PortOutOfRange(port))?;
        p.reconfigure(cfg, self.clock);
        let next = p.next_start();
        self.calendar.set(port, next);
        Ok(())
    }

    /// A port's settings, or `None` for a port above 511.
    pub fn port_config(&self, port: u16) -> Option<&PortConfig> {
        self.ports.get(usize::from(port)).map(|p| &p.cfg)
    }

    /// Sets one queue's cap (BMv2 `set_queue_depth` with `QueueLimit::Packets`).
    pub fn set_queue_limit(
        &mut self,
        port: u16,
        queue: u8,
        limit: QueueLimit,
    ) -> Result<(), ConfigError> {
        let mut cfg = *self.checked_port(port)?;
        *cfg.queue_limits
            .get_mut(self.checked_queue(queue)?)
            .ok_or(ConfigError::QueueOutOfRange(queue))? = limit;
        self.configure_port(port, cfg)
    }

    /// Sets one queue's departure rate in packets/s, 0 = unlimited (BMv2 `set_queue_rate`).
    pub fn set_queue_rate_pps(
        &mut self,
        port: u16,
        queue: u8,
        pps: u64,
    ) -> Result<(), ConfigError> {
        let mut cfg = *self.checked_port(port)?;
        *cfg.queue_rate_pps
            .get_mut(self.checked_queue(queue)?)
            .ok_or(ConfigError::QueueOutOfRange(queue))? = pps;
        self.configure_port(port, cfg)
    }

    /// Resizes the shared pool; frames already held stay, new ones see the new size.
    pub fn set_pool_bytes(&mut self, pool_bytes: u64) -> Result<(), ConfigError> {
        if pool_bytes == 0 {
            return Err(ConfigError::PoolBytesZero);
        }
        self.pool_bytes = pool_bytes;
        Ok(())
    }

    /// Counts the buffer in cells of `cell_bytes` (None: in bytes), as
    /// `TmConfig::cell_bytes`; refused while any frame is buffered, so every
    /// frame leaves with the cells it was admitted with.
    pub fn set_cell_bytes(&mut self, cell_bytes: Option<u32>) -> Result<(), ConfigError> {
        if cell_bytes == Some(0) {
            return Err(ConfigError::CellBytesZero);
        }
        if self.stats.pool_used_cells != 0 {
            return Err(ConfigError::BufferNotEmpty);
        }
        self.cell_bytes = cell_bytes.unwrap_or(1);
        Ok(())
    }

    /// The cell size in bytes, or None when the buffer is counted in bytes.
    pub fn cell_bytes(&self) -> Option<u32> {
        (self.cell_bytes > 1).then_some(self.cell_bytes)
    }

    /// Buffer cells a frame of `frame_bytes` holds: ⌈bytes / cell⌉.
    #[inline]
    pub fn cells_of(&self, frame_bytes: u32) -> u32 {
        // Every enqueue asks; a buffer counted in bytes needs no division.
        match self.cell_bytes {
            1 => frame_bytes,
            cell => frame_bytes.div_ceil(cell),
        }
    }

    /// Honours a PAUSE (802.3x: all classes) or PFC (per class) received at
    /// `now` on `port`: the queues of the classes in `class_mask` (bit c =
    /// class c; queue q honours class `pfc_cos[q]`, q mod 8 by default) start
    /// no frame for `pause_ns`; a new pause replaces a running one and 0
    /// resumes at once.
    pub fn pause(
        &mut self,
        now: u64,
        port: u16,
        class_mask: u8,
        pause_ns: u64,
    ) -> Result<(), ConfigError> {
        let now = self.advance_clock(now);
        let p = self
            .ports
            .get_mut(usize::from(port))
            .ok_or(ConfigError::PortOutOfRange(port))?;
        p.pause(class_mask, now.saturating_add(pause_ns));
        let next = p.next_start();
        self.calendar.set(port, next);
        Ok(())
    }

    /// Admits a frame of `frame_bytes` into `queue` of `port` at `now` (ns), or
    /// hands it back with the first failing check: queue index, queue cap, port
    /// threshold, pool capacity (tail drop). Every refusal is counted.
    pub fn enqueue(
        &mut self,
        now: u64,
        port: u16,
        queue: u8,
        frame_bytes: u32,
        item: T,
    ) -> Result<Enqueued, Rejected<T>> {
        self.enqueue_from(now, None, port, queue, frame_bytes, item)
    }

    /// `enqueue` of a frame that came in on `ingress` = (port, iCoS): it is
    /// also counted against that port and priority group, which may refuse it
    /// or ask for PAUSE / PFC (`take_flow_control_frame`).
    pub fn enqueue_from(
        &mut self,
        now: u64,
        ingress: Option<(u16, u8)>,
        port: u16,
        queue: u8,
        frame_bytes: u32,
        item: T,
    ) -> Result<Enqueued, Rejected<T>> {
        let now = self.advance_clock(now);
        let pause_ns = ingress.and_then(|(in_port, _)| self.pause_ns(in_port));
        let (cells, pool_cells) = (self.cells_of(frame_bytes), self.pool_cells());
        let Some(p) = self.ports.get_mut(usize::from(port)) else {
            self.stats.dropped_port_out_of_range.add(frame_bytes);
            return Err(Rejected {
                item,
                reason: DropReason::PortOutOfRange,
            });
        };
        let queue_stats = match p.queue(queue) {
            Some(q) if queue < p.cfg.num_queues => q.stats,
            _ => {
                p.stats.dropped_queue_out_of_range.add(frame_bytes);
                return Err(Rejected {
                    item,
                    reason: DropReason::QueueOutOfRange,
                });
            }
        };
        let size = Size {
            bytes: frame_bytes,
            cells,
        };
        let occ = Occupancy {
            queue_pkts: queue_stats.depth_pkts,
            queue_bytes: queue_stats.depth_bytes,
            queue_cells: queue_stats.depth_cells,
            port_bytes: p.stats.occupancy_bytes,
            port_cells: p.stats.occupancy_cells,
            pool_used: self.stats.pool_used_cells,
            pool_cells,
        };
        let limit = p.cfg.queue_limits[usize::from(queue)];
        if let Err(reason) = admit(limit, p.cfg.threshold, occ, size) {
            p.count_drop(queue, reason, frame_bytes);
            return Err(Rejected { item, reason });
        }
        let buf = p.cfg.queue_buffer[usize::from(queue)];
        let mut pool_charge = None;
        if let (Some(pool), Some(q)) = (buf.pool, p.queue_mut(queue)) {
            let (pi, cells) = (usize::from(pool), occ.queue_cells);
            match admit_in_pool(
                &self.pools,
                &buf,
                pi,
                cells,
                size.cells,
                &mut q.pool_dropping,
            ) {
                Ok(charge) => pool_charge = Some((pool, charge)),
                Err(()) => {
                    let reason = DropReason::AppPoolLimit;
                    p.count_drop(queue, reason, frame_bytes);
                    return Err(Rejected { item, reason });
                }
            }
        }
        let mut ingress_charge = None;
        if let Some((in_port, icos)) = ingress {
            match self.ingress.admit(now, in_port, icos, size.cells, pause_ns) {
                Ok(c) => ingress_charge = Some(c),
                Err(reason) => {
                    p.count_drop(queue, reason, frame_bytes);
                    return Err(Rejected { item, reason });
                }
            }
        }
        let p = &mut self.ports[usize::from(port)];
        let new_head = p.push(
            queue,
            Queued {
                item,
                enq_time: now,
                bytes: frame_bytes,
                cells: size.cells,
                pool_charge,
                ingress: ingress_charge,
            },
        );
        if let Some((pool, charge)) = pool_charge {
            let i = usize::from(pool);
            let pools = &mut self.pools;
            pools.used_cells[i] += u64::from(charge);
            pools.max_used_cells[i] = pools.max_used_cells[i].max(pools.used_cells[i]);
        }
        // Behind a head already queued, the frame cannot change when the port starts next.
        if new_head {
            let next = p.next_start();
            self.calendar.set(port, next);
        }
        let pool_used_bytes = self.stats.pool_used_bytes;
        let s = &mut self.stats;
        s.pool_used_bytes += u64::from(frame_bytes);
        s.max_pool_used_bytes = s.max_pool_used_bytes.max(s.pool_used_bytes);
        s.pool_used_cells += u64::from(size.cells);
        s.max_pool_used_cells = s.max_pool_used_cells.max(s.pool_used_cells);
        Ok(Enqueued {
            enq_qdepth_pkts: occ.queue_pkts,
            enq_qdepth_bytes: occ.queue_bytes,
            pool_used_bytes,
            enq_qdepth_cells: occ.queue_cells,
            pool_used_cells: occ.pool_used,
            enq_time: now,
        })
    }

    /// Earliest time (ns) at which `dequeue` can return a frame, if any is queued.
    pub fn next_event_time(&self) -> Option<u64> {
        self.calendar.peek().map(|(t, _)| t)
    }

    /// The next frame whose start time is <= `now`, earliest first across
    /// ports (ties to the lower port); its buffer space is released.
    ///
    /// `tx_start` is the frame's scheduled start, which is `now` when the
    /// caller polls at `next_event_time()` and earlier when it polls late, so
    /// late polling never slows a port down.
    pub fn dequeue(&mut self, now: u64) -> Option<Dequeued<T>> {
        let now = self.advance_clock(now);
        let (start, port) = self.calendar.peek()?;
        if start > now {
            return None;
        }
        let p = self.ports.get_mut(usize::from(port))?;
        let sent = p.transmit(start);
        let next = p.next_start();
        self.calendar.set(port, next);
        let d = sent?;
        self.stats.pool_used_bytes -= u64::from(d.frame_bytes);
        self.stats.pool_used_cells -= u64::from(d.frame_cells);
        if let Some((pool, charge)) = d.app_pool_cells {
            let used = &mut self.pools.used_cells[usize::from(pool)];
            *used = used.saturating_sub(u64::from(charge));
        }
        if let Some(c) = d.ingress {
            let rate = self
                .ports
                .get(usize::from(c.port))
                .map_or(0, |q| q.cfg.rate_bps);
            let quanta = self
                .ingress
                .ports
                .get(usize::from(c.port))
                .map_or(0, |i| i.fc.pause_quanta);
            self.ingress.release(now, c, pause_quanta_ns(quanta, rate));
        }
        Some(d)
    }

    /// The wire time of the frame `dequeue` last returned for `port`, redone
    /// with the bytes that left after egress (`None`: egress dropped it): the
    /// TM buffers what ingress emitted (a TNA program's bridged header too),
    /// but the port serialises what egress emits. The new `(tx_end, arrival)`.
    /// Call it before the next `dequeue`.
    pub fn retime_last(&mut self, port: u16, wire_bytes: Option<u32>) -> Option<(u64, u64)> {
        let p = self.ports.get_mut(usize::from(port))?;
        let tx_end = p.retime_last(wire_bytes)?;
        let arrival = tx_end.saturating_add(p.cfg.delay_ns);
        let next = p.next_start();
        self.calendar.set(port, next);
        Some((tx_end, arrival))
    }

    /// Counters and depth of one queue, or `None` if the port or queue does not exist.
    pub fn queue_stats(&self, port: u16, queue: u8) -> Option<QueueStats> {
        self.ports
            .get(usize::from(port))
            .and_then(|p| p.queue(queue))
            .map(|q| q.stats)
    }

    /// Counters of one port, or `None` for a port above 511.
    pub fn port_stats(&self, port: u16) -> Option<PortStats> {
        self.ports.get(usize::from(port)).map(|p| p.stats)
    }

    /// Counters of the whole traffic manager.
    pub fn stats(&self) -> TmStats {
        TmStats {
            xoff_sent: self.ingress.xoff_sent,
            xon_sent: self.ingress.xon_sent,
            ..self.stats
        }
    }

    /// Sets `port`'s ingress limits and flow control (PAUSE, PFC or none).
    pub fn set_port_flow_control(
        &mut self,
        port: u16,
        fc: PortFlowControl,
    ) -> Result<(), ConfigError> {
        if let Some(c) = fc.cos_to_icos.iter().find(|&&c| c > 7) {
            return Err(ConfigError::PfcCos(0, *c));
        }
        let ip = self
            .ingress
            .ports
            .get_mut(usize::from(port))
            .ok_or(ConfigError::PortOutOfRange(port))?;
        ip.fc = fc;
        Ok(())
    }

    /// A port's ingress limits and flow control.
    pub fn port_flow_control(&self, port: u16) -> Option<PortFlowControl> {
        self.ingress.ports.get(usize::from(port)).map(|i| i.fc)
    }

    /// Sets the priority group of `port`'s iCoS `icos` (0..=7).
    pub fn set_ppg(&mut self, port: u16, icos: u8, ppg: PpgConfig) -> Result<(), ConfigError> {
        if ppg.buffer.pool.is_some_and(|p| p > 3) {
            return Err(ConfigError::AppPool(ppg.buffer.pool.unwrap_or(0)));
        }
        let ip = self
            .ingress
            .ports
            .get_mut(usize::from(port))
            .ok_or(ConfigError::PortOutOfRange(port))?;
        *ip.ppg
            .get_mut(usize::from(icos))
            .ok_or(ConfigError::PfcCos(icos, icos))? = ppg;
        Ok(())
    }

    /// The priority group of `port`'s iCoS `icos`.
    pub fn ppg(&self, port: u16, icos: u8) -> Option<PpgConfig> {
        self.ingress
            .ports
            .get(usize::from(port))
            .and_then(|i| i.ppg.get(usize::from(icos)).copied())
    }

    /// Sizes ingress application pool `pool` (0..=3, Tofino's IG_APP_POOL_n) in cells.
    pub fn set_ig_app_pool_cells(&mut self, pool: u8, cells: u64) -> Result<(), ConfigError> {
        let size = self
            .ingress
            .pools
            .size_cells
            .get_mut(usize::from(pool))
            .ok_or(ConfigError::AppPool(pool))?;
        *size = cells;
        Ok(())
    }

    /// The ingress application pools' sizes and use, cells.
    pub fn ig_app_pools(&self) -> AppPools {
        self.ingress.pools
    }

    /// The next PAUSE / PFC frame the TM asks a MAC to send, oldest first.
    pub fn take_flow_control_frame(&mut self) -> Option<FlowControlFrame> {
        self.ingress.frames.pop_front()
    }

    /// Whether a PAUSE / PFC frame waits to be sent.
    pub fn has_flow_control_frames(&self) -> bool {
        !self.ingress.frames.is_empty()
    }

    /// Sets where frames dropped with deflect-on-drop go for pipe `pipe`
    /// (0..=3): a (port, queue), or None to drop them (Tofino's mirror-on-drop
    /// destination).
    pub fn set_mirror_on_drop(
        &mut self,
        pipe: u8,
        dest: Option<(u16, u8)>,
    ) -> Result<(), ConfigError> {
        if let Some((port, _)) = dest.filter(|&(p, _)| p >= NUM_PORTS) {
            return Err(ConfigError::PortOutOfRange(port));
        }
        *self
            .mirror_on_drop
            .get_mut(usize::from(pipe))
            .ok_or(ConfigError::Pipe(pipe))? = dest;
        Ok(())
    }

    /// Pipe `pipe`'s deflect-on-drop destination.
    pub fn mirror_on_drop(&self, pipe: u8) -> Option<(u16, u8)> {
        self.mirror_on_drop
            .get(usize::from(pipe))
            .copied()
            .flatten()
    }

    /// Frame bytes queued on a port (0 for a port that does not exist).
    pub fn port_occupancy_bytes(&self, port: u16) -> u64 {
        self.ports
            .get(usize::from(port))
            .map_or(0, |p| p.stats.occupancy_bytes)
    }

    /// Frame bytes held in the shared pool.
    pub fn pool_used_bytes(&self) -> u64 {
        self.stats.pool_used_bytes
    }

    /// Size of the shared pool in bytes.
    pub fn pool_bytes(&self) -> u64 {
        self.pool_bytes
    }

    /// Buffer cells held in the shared pool (bytes when there is no cell size).
    pub fn pool_used_cells(&self) -> u64 {
        self.stats.pool_used_cells
    }

    /// Size of the shared pool in cells: ⌊pool_bytes / cell⌋.
    #[inline]
    pub fn pool_cells(&self) -> u64 {
        match self.cell_bytes {
            1 => self.pool_bytes,
            cell => self.pool_bytes / u64::from(cell),
        }
    }

    /// Sizes application pool `pool` (0..=3, Tofino's EG_APP_POOL_n) to `cells`;
    /// cells already in use stay, new frames see the new size.
    pub fn set_app_pool_cells(&mut self, pool: u8, cells: u64) -> Result<(), ConfigError> {
        let size = self
            .pools
            .size_cells
            .get_mut(usize::from(pool))
            .ok_or(ConfigError::AppPool(pool))?;
        *size = cells;
        Ok(())
    }

    /// The application pools' sizes and use, cells.
    pub fn app_pools(&self) -> AppPools {
        self.pools
    }

    /// Queues a port may have (8 for v1model, 32 on Tofino 1, 128 on Tofino 2).
    pub fn queues_per_port(&self) -> u8 {
        self.queues_per_port
    }

    /// Lets ports have up to `n` queues (1..=`MAX_QUEUES`); refused while a
    /// port is configured with more.
    pub fn set_queues_per_port(&mut self, n: u8) -> Result<(), ConfigError> {
        if n == 0 || n > MAX_QUEUES {
            return Err(ConfigError::NumQueues(n));
        }
        if let Some(p) = self.ports.iter().find(|p| p.cfg.num_queues > n) {
            return Err(ConfigError::TooManyQueues {
                num_queues: p.cfg.num_queues,
                max: n,
            });
        }
        self.queues_per_port = n;
        Ok(())
    }

    /// `queue` as an index, if ports of this manager may have it.
    fn checked_queue(&self, queue: u8) -> Result<usize, ConfigError> {
        if queue >= self.queues_per_port {
            return Err(ConfigError::QueueOutOfRange(queue));
        }
        Ok(usize::from(queue))
    }

    /// How long `port`'s XOFF pauses its peer, ns (None: the port has no rate).
    fn pause_ns(&self, port: u16) -> Option<u64> {
        let rate = self.ports.get(usize::from(port))?.cfg.rate_bps;
        let quanta = self.ingress.ports.get(usize::from(port))?.fc.pause_quanta;
        pause_quanta_ns(quanta, rate)
    }

    /// The settings of an existing port.
    fn checked_port(&self, port: u16) -> Result<&PortConfig, ConfigError> {
        self.port_config(port)
            .ok_or(ConfigError::PortOutOfRange(port))
    }

    /// Moves the clock to `now` unless `now` is in its past; returns the clock.
    fn advance_clock(&mut self, now: u64) -> u64 {
        self.clock = self.clock.max(now);
        self.clock
    }
}
