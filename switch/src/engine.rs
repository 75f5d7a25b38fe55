//! The switch around the pipeline: ingress at `send` time, the traffic
//! manager, egress at each frame's `tx_start`, delivery at its `arrival`.
//! One thread, a virtual clock passed in by the caller and a seeded random
//! generator: the same inputs give bit-for-bit the same outputs.
//!
//! Where this differs from simple_switch, on purpose:
//! - resubmitted and recirculated packets run again at once instead of
//!   waiting in an input buffer, and one received frame may cause at most
//!   `MAX_PASSES` passes (ingress, recirculation, E2E clone) before it is
//!   dropped and counted, where BMv2 would loop forever;
//! - a failed `assert`/`assume` drops the packet and is counted instead of
//!   aborting the process;
//! - the traffic manager serialises a frame by its length at enqueue time
//!   (received length adjusted by `add_header`/`remove_header` in ingress),
//!   so headers added in egress do not lengthen its time on the wire;
//! - fields are at most 128 bits wide (the loader names wider ones).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use bufferlab_tm::{TmConfig, TrafficManager};

use crate::arch::pktgen::{Generation, PacketGenerator};
use crate::arch::tna::TnaTarget;
use crate::bits::mask;
use crate::error::{LoadError, RuntimeError};
use crate::gress::Gress;
use crate::packet::Packet;
use crate::program::{FieldId, Program, ProgramKind};
use crate::trace::{TraceLevel, TraceLine, Tracer};
use crate::trace_pkt;

/// simple_switch `instance_type` values.
pub mod instance {
    /// A packet received on a port.
    pub const NORMAL: u128 = 0;
    /// Ingress-to-egress clone.
    pub const INGRESS_CLONE: u128 = 1;
    /// Egress-to-egress clone.
    pub const EGRESS_CLONE: u128 = 2;
    /// Recirculated packet.
    pub const RECIRC: u128 = 4;
    /// Multicast copy.
    pub const REPLICATION: u128 = 5;
    /// Resubmitted packet.
    pub const RESUBMIT: u128 = 6;
}

/// Pipeline passes one received frame may cause (resubmits and
/// recirculations), so a program that loops forever cannot hang the engine.
pub(crate) const MAX_PASSES: u32 = 256;

/// Digests kept until the controller takes them; further ones are counted
/// and dropped (BMv2's learn queue is bounded too).
pub(crate) const MAX_PENDING_DIGESTS: usize = 65536;

/// Trace lines kept until the caller takes them; older ones go first.
pub const MAX_TRACE_LINES: usize = 100_000;

/// Delivered-frame buffers kept for reuse once the caller hands them back.
const MAX_SPARE_BUFFERS: usize = 65536;

/// A frame that left the switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// Egress port.
    pub port: u16,
    /// Frame bytes.
    pub frame: Vec<u8>,
    /// Time the last bit reached the peer, ns.
    pub t_ns: u64,
}

/// A clone (mirror) session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CloneSession {
    /// Egress port of the copy.
    pub port: Option<u16>,
    /// Multicast group the copy is replicated to.
    pub mcast_grp: Option<u16>,
    /// Truncate copies to this many bytes.
    pub truncate: Option<u32>,
}

/// A digest (learn) message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    /// Learn list id.
    pub list_id: u32,
    /// Learn list name.
    pub name: String,
    /// Field values, in list order.
    pub values: Vec<u128>,
    /// Time of the ingress pass that generated it, ns.
    pub t_ns: u64,
}

/// Counters the engine keeps beyond the traffic manager's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EngineStats {
    /// Frames received through `send`.
    pub received: u64,
    /// Frames delivered to an output port.
    pub transmitted: u64,
    /// Dropped by the program (egress_spec = drop port, in ingress or egress).
    pub dropped_by_program: u64,
    /// Refused by the traffic manager.
    pub dropped_by_tm: u64,
    /// Of `dropped_by_tm`: the priority names no queue of the egress port (BMv2 logs
    /// "Priority out of range" and drops); per port in the traffic manager's port counters.
    pub dropped_priority_out_of_range: u64,
    /// Dropped after a failed assert/assume.
    pub dropped_by_assert: u64,
    /// Dropped because one frame caused more than the allowed passes.
    pub dropped_pass_limit: u64,
    /// Multicast copies made.
    pub replicated: u64,
    /// Packets the packet generator made (TNA).
    pub generated: u64,
    /// Clones made.
    pub cloned: u64,
    /// Resubmissions.
    pub resubmitted: u64,
    /// Recirculations.
    pub recirculated: u64,
    /// Digests dropped because the controller did not take them in time.
    pub digests_dropped: u64,
    /// 802.3x PAUSE / PFC frames consumed by ports that honour them.
    pub pause_frames: u64,
    /// Consumed PAUSE / PFC frames that could not apply: the port has no rate
    /// (a pause time in quanta needs the link's bit time).
    pub pause_frames_ignored: u64,
}

/// EtherType of MAC Control frames (802.3x PAUSE, 802.1Qbb PFC).
const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
/// MAC Control opcodes.
const OPCODE_PAUSE: u16 = 0x0001;
const OPCODE_PFC: u16 = 0x0101;

/// The switch engine in deterministic (virtual-time) mode.
pub struct Engine {
    /// The loaded program (v1model), or a TNA program's first gress (pipe 0's
    /// ingress). Held inline so v1model's packet path borrows its program and
    /// state as plain fields.
    pub main: Gress,
    /// A TNA program's other gresses, in order: pipe 0's egress, then each further
    /// pipe's ingress and egress (gress `2·pipe + 1` is pipe's egress). Empty for v1model.
    pub(crate) more: Vec<Gress>,
    /// The TNA target around a TNA program (None for v1model).
    pub(crate) tna: Option<Box<TnaTarget>>,
    /// A TNA program's packet generators, one per pipe (none for v1model).
    pub(crate) pktgen: Vec<PacketGenerator>,
    // The generator's frame buffer, kept between packets.
    pub(crate) pktgen_frame: Vec<u8>,
    pub(crate) tm: TrafficManager<u32>,
    pub(crate) pool: Vec<Packet>,
    pub(crate) free: Vec<u32>,
    pub(crate) passes: Vec<u32>,
    pub(crate) mcast: HashMap<u16, Vec<(u16, u16)>>,
    pub(crate) sessions: HashMap<u32, CloneSession>,
    pub(crate) pending: BinaryHeap<Reverse<(u64, u64, u16, u32)>>,
    pub(crate) out_bufs: Vec<Vec<u8>>,
    pub(crate) free_bufs: Vec<u32>,
    pub(crate) spare: Vec<Vec<u8>>,
    pub(crate) delivered: VecDeque<Output>,
    pub(crate) packet_in: VecDeque<Output>,
    pub(crate) digests: VecDeque<Digest>,
    /// CPU port (`--cpu-port`): frames sent to it go to the packet-in queue.
    pub cpu_port: Option<u16>,
    // Ports whose MAC honours received PAUSE/PFC frames (bit per port).
    honour_pause: [u64; 8],
    // (port, priority) pairs whose out-of-range drop was logged (a bit per priority), so a
    // misconfigured port logs once instead of once per packet.
    pub(crate) priority_logged: Vec<[u64; 4]>,
    pub(crate) now: u64,
    pub(crate) seq: u64,
    // Id of the next frame received, for the trace's `[id.copy]`.
    next_packet_id: u64,
    /// Counters.
    pub stats: EngineStats,
    // Programs are compiled to machine code (false: `--no-jit`).
    jit: bool,
}

#[inline]
pub(crate) fn set(p: &Program, pkt: &mut Packet, f: Option<FieldId>, width_mask: u128, v: u128) {
    if let Some(f) = f {
        pkt.phv.set(p, f, v & width_mask);
    }
}

impl Engine {
    /// Loads a BMv2 JSON text with a traffic-manager configuration and a random seed;
    /// its actions and controls run as machine code where they compile.
    pub fn new(json: &str, tm: TmConfig, seed: u64) -> Result<Engine, LoadError> {
        Engine::with_jit(json, tm, seed, true)
    }

    /// As [`Engine::new`], with the actions and controls compiled to machine code
    /// (`jit`) or all interpreted (`--no-jit`).
    pub fn with_jit(
        json: &str,
        mut tm: TmConfig,
        seed: u64,
        jit: bool,
    ) -> Result<Engine, LoadError> {
        let (mut main, mut more, tna) = load_target(json, seed)?;
        if jit {
            for g in std::iter::once(&mut main).chain(more.iter_mut()) {
                g.set_jit(true);
            }
        }
        if let Some(t) = tna.as_deref() {
            // A Tofino program's TM counts its target's cells and has its queues per port.
            tm.cell_bytes = Some(t.info.cell_bytes);
            tm.queues_per_port = t.info.tm_queues_per_port();
        }
        let tm = TrafficManager::new(tm).map_err(|e| LoadError(format!("traffic manager: {e}")))?;
        let pktgen = generators(tna.as_deref());
        Ok(Engine {
            main,
            more,
            tna,
            pktgen,
            pktgen_frame: vec![],
            tm,
            pool: vec![],
            free: vec![],
            passes: vec![],
            mcast: HashMap::new(),
            sessions: HashMap::new(),
            pending: BinaryHeap::new(),
            out_bufs: vec![],
            free_bufs: vec![],
            spare: vec![],
            delivered: VecDeque::new(),
            packet_in: VecDeque::new(),
            digests: VecDeque::new(),
            cpu_port: None,
            honour_pause: [0; 8],
            priority_logged: vec![[0; 4]; usize::from(bufferlab_tm::NUM_PORTS)],
            now: 0,
            seq: 0,
            next_packet_id: 0,
            stats: EngineStats::default(),
            jit,
        })
    }

    /// Replaces the program (P4Runtime SetForwardingPipelineConfig): tables,
    /// stateful objects, value sets, digests, multicast groups and clone
    /// sessions start empty; ports, buffer settings, counters of the traffic
    /// manager and the clock stay. Refused while frames are queued or in flight.
    pub fn set_program(&mut self, json: &str) -> Result<(), RuntimeError> {
        if self.next_frame_ns().is_some() {
            return Err(RuntimeError::FailedPrecondition(
                "frames are still queued or in flight: drain before changing the program".into(),
            ));
        }
        let (mut main, mut more, tna) =
            load_target(json, 0).map_err(|e| RuntimeError::InvalidArgument(e.0))?;
        if let Some(t) = tna.as_deref() {
            // Nothing is buffered (checked above), so the cell size may change.
            self.tm
                .set_cell_bytes(Some(t.info.cell_bytes))
                .and_then(|()| self.tm.set_queues_per_port(t.info.tm_queues_per_port()))
                .map_err(|e| RuntimeError::FailedPrecondition(e.to_string()))?;
        }
        let rng = self.main.st.rng.clone();
        let drop_port = self.main.st.drop_port;
        main.st.trace = self.main.st.trace.take();
        for g in std::iter::once(&mut main).chain(more.iter_mut()) {
            g.st.rng = rng.clone();
            g.st.drop_port = drop_port;
            if self.jit {
                g.set_jit(true);
            }
        }
        self.pktgen = generators(tna.as_deref());
        self.main = main;
        self.more = more;
        self.tna = tna;
        self.pool.clear();
        self.free.clear();
        self.passes.clear();
        self.mcast.clear();
        self.sessions.clear();
        self.digests.clear();
        Ok(())
    }

    /// Turns the per-packet trace on at `level` (BMv2's `debug` or `trace`) or off
    /// (None); lines not yet taken are kept while the level stays the same.
    pub fn set_trace(&mut self, level: Option<TraceLevel>) {
        self.main.st.trace = level.map(|l| match self.main.st.trace.take() {
            Some(t) if t.level() == l => t,
            _ => Box::new(Tracer::new(l, MAX_TRACE_LINES)),
        });
    }

    /// The trace lines recorded since the last call, oldest first, and how many were
    /// lost because nobody took them in time (at most `MAX_TRACE_LINES` are kept).
    pub fn take_trace(&mut self) -> (Vec<TraceLine>, u64) {
        self.main
            .st
            .trace
            .as_deref_mut()
            .map_or((vec![], 0), Tracer::take)
    }

    /// Compiles the program's actions and controls to machine code (`on`, kept for
    /// programs loaded later), or drops it so that everything is interpreted.
    pub fn set_jit(&mut self, on: bool) {
        self.jit = on;
        for g in self.gresses_mut() {
            g.set_jit(on);
        }
    }

    /// Whether programs are compiled to machine code, and what compiling the loaded
    /// one did, summed over its gresses (blocks named `gress N: ...` past the first).
    pub fn jit_report(&self) -> (bool, crate::jit::Report) {
        let mut sum = crate::jit::Report::default();
        for g in 0..self.gress_count() {
            let r = &self.gress(g).jit;
            sum.compiled += r.compiled;
            sum.interpreted += r.interpreted;
            sum.compile_us += r.compile_us;
            sum.fallbacks
                .extend(r.fallbacks.iter().map(|(b, why)| match g {
                    0 => (b.clone(), why.clone()),
                    g => (format!("gress {g}: {b}"), why.clone()),
                }));
        }
        (self.jit, sum)
    }

    /// Gress `g` (0 is `main`).
    pub(crate) fn gress(&self, g: usize) -> &Gress {
        match g {
            0 => &self.main,
            _ => &self.more[g - 1],
        }
    }

    /// Gress `g` (0 is `main`), to change.
    pub(crate) fn gress_mut(&mut self, g: usize) -> &mut Gress {
        match g {
            0 => &mut self.main,
            _ => &mut self.more[g - 1],
        }
    }

    /// How many gresses the loaded program has (1 for v1model).
    pub(crate) fn gress_count(&self) -> usize {
        1 + self.more.len()
    }

    /// Every gress, to change.
    pub(crate) fn gresses_mut(&mut self) -> impl Iterator<Item = &mut Gress> {
        std::iter::once(&mut self.main).chain(self.more.iter_mut())
    }

    /// Queues a digest of learn list `list` (of gress `g`) with packet `h`'s values, or
    /// counts it dropped when the controller has not taken the earlier ones.
    pub(crate) fn digest(&mut self, g: usize, h: u32, list: u32, now: u64) {
        if self.digests.len() >= MAX_PENDING_DIGESTS {
            self.stats.digests_dropped += 1;
            return;
        }
        let prog = &self.gress(g).prog;
        if let Some(l) = prog.learn_lists.get(&list) {
            let pkt = &self.pool[h as usize];
            let values = l.fields.iter().map(|f| pkt.phv.get(prog, *f)).collect();
            self.digests.push_back(Digest {
                list_id: list,
                name: l.name.clone(),
                values,
                t_ns: now,
            });
        }
    }

    /// Sends packet `h`'s deparsed bytes out of `port`, to reach the peer at `arrival`,
    /// and frees the packet.
    pub(crate) fn transmit(&mut self, h: u32, port: u16, arrival: u64) {
        let pkt = &self.pool[h as usize];
        trace_pkt!(
            self.main.st,
            pkt,
            Debug,
            "Transmitting packet of size {} out of port {}",
            pkt.out.len(),
            port
        );
        let buf = match self.free_bufs.pop() {
            Some(b) => b,
            None => {
                self.out_bufs.push(Vec::new());
                (self.out_bufs.len() - 1) as u32
            }
        };
        // Hand the deparsed buffer over instead of copying it; the packet
        // keeps the recycled one for its next use.
        std::mem::swap(
            &mut self.out_bufs[buf as usize],
            &mut self.pool[h as usize].out,
        );
        self.seq += 1;
        self.pending.push(Reverse((arrival, self.seq, port, buf)));
        self.release(h);
    }

    /// The pipeline's event counters, summed over the gresses.
    pub fn exec_stats(&self) -> crate::exec::ExecStats {
        let mut sum = crate::exec::ExecStats::default();
        for g in 0..self.gress_count() {
            let s = self.gress(g).st.stats;
            sum.assert_failures += s.assert_failures;
            sum.parser_errors += s.parser_errors;
            sum.checksum_errors += s.checksum_errors;
        }
        sum
    }

    /// Current virtual time, ns.
    pub fn now(&self) -> u64 {
        self.now
    }

    pub(crate) fn alloc(&mut self) -> u32 {
        let h = match self.free.pop() {
            Some(h) => h,
            None => {
                self.pool.push(Packet::new(&self.main.prog));
                self.passes.push(0);
                (self.pool.len() - 1) as u32
            }
        };
        self.passes[h as usize] = 0;
        h
    }

    /// A pool packet for a copy of `parent`: it inherits the parent's pass
    /// count so clone/recirculate chains stay bounded too.
    pub(crate) fn alloc_copy(&mut self, parent: u32) -> u32 {
        let c = self.alloc();
        self.passes[c as usize] = self.passes[parent as usize];
        let (orig, copy) = two(&mut self.pool, parent, c);
        orig.copies += 1;
        copy.id = orig.id;
        copy.copy = orig.copies;
        copy.copies = orig.copies;
        c
    }

    pub(crate) fn release(&mut self, h: u32) {
        self.free.push(h);
    }

    pub(crate) fn fmask(&self, f: Option<FieldId>) -> u128 {
        f.map_or(0, |f| mask(self.main.prog.fields[f as usize].width))
    }

    pub(crate) fn field(&self, h: u32, f: FieldId) -> u128 {
        self.pool[h as usize].phv.get(&self.main.prog, f)
    }

    /// Receives `frame` on `port` at `t_ns`: runs everything due before, then
    /// parser and ingress, then hands the packet to the traffic manager.
    pub fn send(&mut self, port: u16, frame: &[u8], t_ns: u64) -> Result<(), RuntimeError> {
        if let Some(h) = self.arrival(port, frame, t_ns)? {
            self.pool[h as usize].receive(&self.main.prog, frame, t_ns);
            self.start_ingress(h, port, t_ns);
        }
        Ok(())
    }

    /// As [`Engine::send`], taking the frame's buffer instead of copying it:
    /// `frame` is left holding an empty buffer for the caller to reuse.
    pub fn send_buffer(
        &mut self,
        port: u16,
        frame: &mut Vec<u8>,
        t_ns: u64,
    ) -> Result<(), RuntimeError> {
        if let Some(h) = self.arrival(port, frame, t_ns)? {
            self.pool[h as usize].receive_buffer(&self.main.prog, frame, t_ns);
            self.start_ingress(h, port, t_ns);
        }
        Ok(())
    }

    /// Checks an arrival, runs everything due before it and counts it; the
    /// pool packet to load it into, or None when the MAC consumed it.
    fn arrival(&mut self, port: u16, frame: &[u8], t_ns: u64) -> Result<Option<u32>, RuntimeError> {
        if t_ns < self.now {
            return Err(RuntimeError::FailedPrecondition(format!(
                "send at {t_ns} ns is before the engine's time {} ns",
                self.now
            )));
        }
        if port >= bufferlab_tm::NUM_PORTS {
            return Err(RuntimeError::InvalidArgument(format!(
                "port {port}: ports are 0..=511"
            )));
        }
        self.advance(t_ns);
        self.stats.received += 1;
        if self.honour_pause[usize::from(port / 64)] & (1 << (port % 64)) != 0
            && self.mac_control(port, frame)
        {
            return Ok(None);
        }
        Ok(Some(self.alloc()))
    }

    /// Sets the arrival's standard metadata of loaded packet `h` and runs ingress.
    pub(crate) fn start_ingress(&mut self, h: u32, port: u16, t_ns: u64) {
        let sm = self.main.prog.std;
        let pkt = &mut self.pool[h as usize];
        pkt.id = self.next_packet_id;
        pkt.copy = 0;
        pkt.copies = 0;
        self.next_packet_id += 1;
        trace_pkt!(
            self.main.st,
            pkt,
            Debug,
            "Processing packet received on port {}",
            port
        );
        if self.tna.is_some() {
            self.tna_ingress(h, port, t_ns);
            return;
        }
        pkt.phv.set(
            &self.main.prog,
            sm.ingress_port,
            u128::from(port) & mask(self.main.prog.fields[sm.ingress_port as usize].width),
        );
        let len = u128::from(pkt.ingress_len);
        pkt.phv.set(&self.main.prog, sm.packet_length, len);
        let m = self.fmask(sm.ingress_global_timestamp);
        set(
            &self.main.prog,
            &mut self.pool[h as usize],
            sm.ingress_global_timestamp,
            m,
            u128::from(t_ns / 1000),
        );
        self.ingress(h, t_ns);
    }

    /// Makes a port's MAC consume received 802.3x PAUSE and PFC frames and
    /// hold its own egress queues for the time they ask (as a NIC or switch
    /// MAC does); other frames still go to the pipeline.
    pub fn set_honour_pause(&mut self, port: u16, on: bool) -> Result<(), RuntimeError> {
        if port >= bufferlab_tm::NUM_PORTS {
            return Err(RuntimeError::InvalidArgument(format!(
                "port {port}: ports are 0..=511"
            )));
        }
        let (w, b) = (usize::from(port / 64), port % 64);
        if on {
            self.honour_pause[w] |= 1 << b;
        } else {
            self.honour_pause[w] &= !(1 << b);
        }
        Ok(())
    }

    /// Handles a MAC Control frame on a port that honours pause; false if
    /// the frame is not PAUSE/PFC (it then goes to the pipeline).
    fn mac_control(&mut self, port: u16, frame: &[u8]) -> bool {
        let be16 = |i: usize| {
            frame
                .get(i..i + 2)
                .map(|b| u16::from_be_bytes([b[0], b[1]]))
        };
        if be16(12) != Some(ETHERTYPE_MAC_CONTROL) {
            return false;
        }
        // (queue mask, quanta) pairs: PAUSE holds every queue, PFC one per enabled class.
        let mut holds = [(0u8, 0u16); 8];
        let n = match (be16(14), be16(16)) {
            (Some(OPCODE_PAUSE), Some(quanta)) => {
                holds[0] = (0xff, quanta);
                1
            }
            (Some(OPCODE_PFC), Some(enable)) => {
                let mut n = 0;
                for class in 0..8u8 {
                    if enable & (1 << class) != 0 {
                        let Some(quanta) = be16(18 + 2 * usize::from(class)) else {
                            return false;
                        };
                        holds[n] = (1 << class, quanta);
                        n += 1;
                    }
                }
                n
            }
            _ => return false,
        };
        self.stats.pause_frames += 1;
        let rate = self.tm.port_config(port).map_or(0, |c| c.rate_bps);
        for &(queue_mask, quanta) in &holds[..n] {
            match bufferlab_tm::pause_quanta_ns(quanta, rate) {
                Some(ns) => {
                    // The port exists (checked by `send`), so pausing it cannot fail.
                    let _ = self.tm.pause(self.now, port, queue_mask, ns);
                }
                None => {
                    self.stats.pause_frames_ignored += 1;
                    break;
                }
            }
        }
        true
    }

    /// Runs every traffic-manager event up to `t_ns` in time order (egress at
    /// each frame's start of transmission) and delivers frames that arrive by then.
    pub fn advance(&mut self, t_ns: u64) {
        loop {
            // A generated packet enters ingress before a frame due at the same time leaves.
            let generated = self.pktgen_next_ns().filter(|&tp| tp <= t_ns);
            if let Some(tp) =
                generated.filter(|&tp| self.tm.next_event_time().is_none_or(|te| tp <= te))
            {
                self.generate(tp);
                continue;
            }
            match self.tm.next_event_time() {
                Some(te) if te <= t_ns => match self.tm.dequeue(te) {
                    Some(d) => {
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
                    None => break,
                },
                _ => break,
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
    fn next_frame_ns(&self) -> Option<u64> {
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

    /// Receives `count` copies of `frame` on `port`, the first at `t0_ns`, then
    /// every `gap_ns` (load generation without a round trip per frame).
    pub fn send_repeated(
        &mut self,
        port: u16,
        frame: &[u8],
        count: u64,
        t0_ns: u64,
        gap_ns: u64,
    ) -> Result<(), RuntimeError> {
        for i in 0..count {
            self.send(port, frame, t0_ns + i * gap_ns)?;
        }
        Ok(())
    }

    /// Discards delivered frames (keeping their buffers); returns how many there were.
    pub fn discard_received(&mut self) -> usize {
        let n = self.delivered.len();
        while let Some(o) = self.delivered.pop_front() {
            self.recycle(o.frame);
        }
        n
    }

    /// Frames delivered so far (in arrival order), removed from the engine.
    pub fn take_received(&mut self) -> Vec<Output> {
        self.delivered.drain(..).collect()
    }

    /// Moves the frames delivered so far (in arrival order) onto the end of
    /// `out`: a caller that keeps `out` allocates nothing once it has grown.
    pub fn drain_received_into(&mut self, out: &mut Vec<Output>) {
        out.extend(self.delivered.drain(..));
    }

    /// Frames delivered to the CPU port (packet-in), removed from the engine.
    pub fn take_packet_in(&mut self) -> Vec<Output> {
        self.packet_in.drain(..).collect()
    }

    /// Digests generated so far, removed from the engine.
    pub fn take_digests(&mut self) -> Vec<Digest> {
        self.digests.drain(..).collect()
    }

    /// Gives a delivered frame's buffer back for reuse.
    pub fn recycle(&mut self, frame: Vec<u8>) {
        if self.spare.len() < MAX_SPARE_BUFFERS {
            self.spare.push(frame);
        }
    }
}

/// A packet generator per pipe of a TNA program.
fn generators(tna: Option<&TnaTarget>) -> Vec<PacketGenerator> {
    let Some(tna) = tna else {
        return vec![];
    };
    let generation = match tna.info.name.as_str() {
        "tofino2" => Generation::Tofino2,
        _ => Generation::Tofino1,
    };
    (0..tna.pipe_names().count() as u8)
        .map(|pipe| PacketGenerator::new(generation, pipe))
        .collect()
}

/// The program a JSON document holds: a v1model program, or a TNA/T2NA program's
/// gresses (the first apart) and its target.
type Loaded = (Gress, Vec<Gress>, Option<Box<TnaTarget>>);

/// Loads a BMv2 JSON document for v1model, or a TNA JSON document (compiler/README.md
/// "TNA JSON", told apart by its `arch`).
fn load_target(json: &str, seed: u64) -> Result<Loaded, LoadError> {
    let root = crate::load::parse(json)?;
    match root.get("arch").and_then(serde_json::Value::as_str) {
        Some("tna" | "t2na") => {
            let (mut gresses, target) = TnaTarget::load(&root, seed)?;
            let main = gresses.remove(0);
            Ok((main, gresses, Some(Box::new(target))))
        }
        Some(other) if other != "v1model" => Err(LoadError(format!(
            "arch: '{other}' is not an architecture the engine runs (v1model, tna, t2na)"
        ))),
        _ => Ok((
            Gress::load(&root, ProgramKind::V1model, seed)?,
            vec![],
            None,
        )),
    }
}

/// Two distinct packets of the pool, borrowed together.
pub(crate) fn two(pool: &mut [Packet], a: u32, b: u32) -> (&mut Packet, &mut Packet) {
    let (a, b) = (a as usize, b as usize);
    if a < b {
        let (x, y) = pool.split_at_mut(b);
        (&mut x[a], &mut y[0])
    } else {
        let (x, y) = pool.split_at_mut(a);
        (&mut y[0], &mut x[b])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::MatchValue;

    const L3: &str = include_str!("../../tests/engine/fixtures/l3.json");

    fn ipv4_frame(dst: [u8; 4], ttl: u8) -> Vec<u8> {
        let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00];
        let mut ip = vec![0x45, 0, 0, 20, 0, 0, 0x40, 0, ttl, 17, 0, 0, 10, 0, 0, 1];
        ip.extend_from_slice(&dst);
        let c = crate::hash::csum16(&ip) as u16;
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        f.extend_from_slice(&ip);
        f.extend_from_slice(b"payload");
        f
    }

    fn engine() -> Engine {
        let mut e = Engine::new(L3, TmConfig::default(), 1).unwrap();
        e.table_add(
            "MyIngress.ipv4_lpm",
            vec![MatchValue::Lpm(0x0a00_0200, 24)],
            "MyIngress.ipv4_forward",
            vec![0x0000_0000_0abc, 3],
            0,
        )
        .unwrap();
        e
    }

    #[test]
    fn routes_decrements_ttl_and_fixes_checksum() {
        let mut e = engine();
        e.send(1, &ipv4_frame([10, 0, 2, 7], 64), 1000).unwrap();
        e.drain();
        let out = e.take_received();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].port, 3);
        let f = &out[0].frame;
        assert_eq!(&f[0..6], &[0, 0, 0, 0, 0x0a, 0xbc]);
        assert_eq!(&f[6..12], &[0, 0, 0, 0, 0, 2]);
        assert_eq!(f[22], 63);
        assert_eq!(crate::hash::csum16(&f[14..34]), 0);
        assert_eq!(&f[34..], b"payload");
        assert_eq!(
            e.counter_read("MyIngress.port_bytes", 3).unwrap(),
            CounterCell {
                packets: 1,
                bytes: f.len() as u64
            }
        );
    }

    #[test]
    fn miss_drops_and_counts() {
        let mut e = engine();
        e.send(1, &ipv4_frame([10, 0, 3, 7], 64), 0).unwrap();
        e.drain();
        assert!(e.take_received().is_empty());
        assert_eq!(e.stats.dropped_by_program, 1);
    }

    #[test]
    fn same_inputs_same_outputs() {
        let run = || {
            let mut e = engine();
            for i in 0..50u64 {
                e.send(
                    (i % 4) as u16,
                    &ipv4_frame([10, 0, 2, i as u8], 64),
                    i * 100,
                )
                .unwrap();
            }
            e.drain();
            e.take_received()
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn a_frame_sent_by_buffer_leaves_as_one_sent_by_copy() {
        let run = |by_buffer: bool| {
            let mut e = engine();
            for i in 0..4u8 {
                let mut frame = ipv4_frame([10, 0, 2, i], 64 - i);
                let t = u64::from(i) * 1000;
                if by_buffer {
                    e.send_buffer(1, &mut frame, t).unwrap();
                    assert!(frame.is_empty(), "the caller gets an empty buffer back");
                } else {
                    e.send(1, &frame, t).unwrap();
                }
            }
            e.drain();
            e.take_received()
        };
        let out = run(true);
        assert_eq!(out.len(), 4);
        assert_eq!(out, run(false));
    }

    #[test]
    fn drain_received_into_appends_in_arrival_order() {
        let mut e = engine();
        let mut out = Vec::new();
        e.send(1, &ipv4_frame([10, 0, 2, 1], 64), 0).unwrap();
        e.drain();
        e.drain_received_into(&mut out);
        e.send(1, &ipv4_frame([10, 0, 2, 2], 64), 1000).unwrap();
        e.drain();
        e.drain_received_into(&mut out);
        assert_eq!(
            out.iter().map(|o| o.frame[33]).collect::<Vec<_>>(),
            vec![1, 2]
        );
        assert_eq!(
            out.iter().map(|o| o.t_ns).collect::<Vec<_>>(),
            vec![0, 1000]
        );
        assert!(e.take_received().is_empty(), "drained frames are gone");
    }

    use crate::state::CounterCell;
}
