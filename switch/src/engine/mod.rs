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

use crate::arch::tna::TnaTarget;
use crate::error::{LoadError, RuntimeError};
use crate::externs::pktgen::PacketGenerator;
use crate::gress::Gress;
use crate::packet::Packet;
use crate::trace::{TraceLevel, TraceLine, Tracer};

mod arrival;
mod clock;
mod outputs;
mod pool;
mod target;
#[cfg(test)]
mod tests;

pub(crate) use pool::two;
use target::{generators, load_target};

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
            sum.tables_in_place += r.tables_in_place;
            sum.parser_states += r.parser_states;
            sum.deparser_headers += r.deparser_headers;
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
}
