//! TNA's (and T2NA's) walk of a packet, as a Tofino pipe does it: the ingress
//! parser reads the intrinsic metadata and port metadata the target puts in front
//! of the frame, ingress runs, the ingress deparser emits the packet and its
//! requests (mirror, resubmit, digest), the traffic manager queues what
//! `ig_intr_md_for_tm` says, the egress parser reads the egress intrinsic metadata
//! (queue depths in TM cells, times in ns) in front of what ingress emitted, and
//! egress and its deparser run. Each pipe's ingress and egress are separate
//! programs ([`Gress`]es) that share nothing but the bytes between them.
//!
//! Where this differs from the hardware, on purpose (switch/README.md "TNA on the engine"):
//! - the congestion-state fields (`enq_congest_stat`, `app_pool_congest_stat`...) read 0;
//! - a resubmitted packet's resubmit request is ignored (Tofino resubmits once).

use std::collections::HashMap;

use bufferlab_tm::Dequeued;
use serde_json::Value;

use crate::bits::{mask, BitWriter};
use crate::engine::{two, Engine, MAX_PASSES};
use crate::error::{LoadError, RuntimeError};
use crate::exec::{self, State};
use crate::gress::Gress;
use crate::packet::Packet;
use crate::program::{ExtractTarget, FieldId, ParserOp, Prepended, Program, ProgramKind};
use crate::trace_pkt;

/// The target a TNA JSON document was compiled for (its `target_info`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetInfo {
    /// `tofino` or `tofino2`.
    pub name: String,
    /// Bytes per traffic-manager cell (80 on Tofino 1, 176 on Tofino 2).
    pub cell_bytes: u32,
    /// Bytes of port metadata before the frame (8 on Tofino 1, 24 on Tofino 2).
    pub port_metadata_bytes: usize,
    /// Queues per port the architecture names (32 on Tofino 1, 128 on Tofino 2).
    pub queues_per_port: u32,
}

impl TargetInfo {
    /// Queues per port as the traffic manager takes them (1..=`MAX_QUEUES`).
    pub(crate) fn tm_queues_per_port(&self) -> u8 {
        self.queues_per_port
            .clamp(1, u32::from(bufferlab_tm::MAX_QUEUES)) as u8
    }
}

/// A TNA program's target: its pipes and the per-port state the control plane sets.
#[derive(Debug, Clone)]
pub struct TnaTarget {
    /// `tna` or `t2na`.
    pub arch: String,
    /// What the program was compiled for.
    pub info: TargetInfo,
    /// Pipe names (the `Pipeline` instances of `Switch`), in pipe order.
    pipes: Vec<String>,
    /// Port metadata per port (the control plane's value; absent ports read 0).
    port_metadata: HashMap<u16, Vec<u8>>,
    /// The ingress parser of each port a `MultiParserSwitch` program's control plane
    /// assigned (0, the first, where none was).
    port_parser: HashMap<u16, u8>,
    /// The header vector T2NA's ghost control runs in (it has no packet).
    ghost_pkt: Packet,
    /// `gh_intr_md.ping_pong` of the next ghost update.
    ping_pong: bool,
}

fn load_err(ctx: &str, msg: impl std::fmt::Display) -> LoadError {
    LoadError(format!("{ctx}: {msg}"))
}

impl TnaTarget {
    /// Loads a TNA JSON document: each pipe's ingress and egress (gresses in the
    /// engine's order: pipe 0 ingress, pipe 0 egress, pipe 1 ingress, ...) and the target.
    pub(crate) fn load(root: &Value, seed: u64) -> Result<(Vec<Gress>, TnaTarget), LoadError> {
        let arch = root
            .get("arch")
            .and_then(Value::as_str)
            .unwrap_or("tna")
            .to_string();
        let ti = root
            .get("target_info")
            .ok_or_else(|| load_err("target_info", "missing"))?;
        let num = |k: &str| -> Result<u64, LoadError> {
            ti.get(k)
                .and_then(Value::as_u64)
                .ok_or_else(|| load_err("target_info", format!("missing integer '{k}'")))
        };
        let port_metadata_bits = num("port_metadata_bits")?;
        if !port_metadata_bits.is_multiple_of(8) || port_metadata_bits > 512 {
            return Err(load_err(
                "target_info",
                format!("port_metadata_bits {port_metadata_bits} is not whole bytes up to 512"),
            ));
        }
        let info = TargetInfo {
            name: ti
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("tofino")
                .to_string(),
            cell_bytes: num("cell_bytes")?.clamp(1, 4096) as u32,
            port_metadata_bytes: (port_metadata_bits / 8) as usize,
            queues_per_port: num("queues_per_port")? as u32,
        };
        let pipes_json = root
            .get("pipes")
            .and_then(Value::as_array)
            .ok_or_else(|| load_err("pipes", "missing array"))?;
        if pipes_json.is_empty() || pipes_json.len() > 4 {
            return Err(load_err(
                "pipes",
                format!("{} pipes: a Switch has 1 to 4", pipes_json.len()),
            ));
        }
        let mut gresses = Vec::with_capacity(2 * pipes_json.len());
        let mut pipes = vec![];
        for (i, pipe) in pipes_json.iter().enumerate() {
            let name = pipe
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| load_err(&format!("pipes[{i}]"), "missing string 'name'"))?;
            for (key, kind) in [
                ("ingress", ProgramKind::TnaIngress),
                ("egress", ProgramKind::TnaEgress),
            ] {
                let ctx = format!("pipes[{i}] '{name}' {key}");
                let doc = pipe.get(key).ok_or_else(|| load_err(&ctx, "missing"))?;
                let seed = seed.wrapping_add(gresses.len() as u64);
                let mut gress = Gress::load(doc, kind, seed).map_err(|e| load_err(&ctx, e.0))?;
                if kind == ProgramKind::TnaEgress && !extracts_prepended(&gress.prog) {
                    // The target strips egress intrinsic metadata the egress parser never
                    // extracts (open-p4studio's tna_pvs parses its own header first):
                    // it is not put in front of the packet at all.
                    gress.prog.tna.prepended = None;
                }
                gresses.push(gress);
            }
            pipes.push(name.to_string());
        }
        Ok((
            gresses,
            TnaTarget {
                arch,
                info,
                pipes,
                port_metadata: HashMap::new(),
                port_parser: HashMap::new(),
                ghost_pkt: Packet::default(),
                ping_pong: false,
            },
        ))
    }

    /// The pipes' names, in pipe order.
    pub fn pipe_names(&self) -> impl Iterator<Item = &str> {
        self.pipes.iter().map(String::as_str)
    }

    /// The pipe whose program serves `port`: the only one, or Tofino's pipe of the
    /// dev port (bits 8:7); None when the program has no pipe there.
    fn pipe_of_port(&self, port: u16) -> Option<usize> {
        if self.pipes.len() == 1 {
            return Some(0);
        }
        let pipe = usize::from((port >> 7) & 3);
        (pipe < self.pipes.len()).then_some(pipe)
    }
}

/// Whether a gress's parser extracts the intrinsic header the target prepends.
fn extracts_prepended(p: &Program) -> bool {
    let Some(h) = p.tna.prepended else {
        return false;
    };
    p.parse_states.iter().any(|s| {
        s.ops
            .iter()
            .any(|op| matches!(op, ParserOp::Extract(ExtractTarget::Header(x)) if *x == h))
    })
}

/// Marks `ig_intr_md_for_tm.ucast_egress_port` as never written: one above what the
/// field holds, which any write of the program clears (writes are cut to the width).
fn mark_port_unset(p: &Program, pkt: &mut Packet) {
    if let Some(f) = p.tna.ucast_egress_port {
        pkt.phv.set(p, f, 1 << p.fields[f as usize].width.min(63));
    }
}

/// Whether the program wrote a unicast port (see [`mark_port_unset`]).
fn port_was_set(p: &Program, pkt: &Packet) -> bool {
    p.tna
        .ucast_egress_port
        .is_some_and(|f| pkt.phv.get(p, f) <= mask(p.fields[f as usize].width))
}

/// Whether `port` is a Tofino dev port: local numbers 0..=71 in each of the 4 pipes.
fn port_exists(port: u16) -> bool {
    port < 512 && port & 0x7f <= 71
}

/// Gress `g`'s program and state beside a packet of the pool.
fn split<'e>(
    main: &'e mut Gress,
    more: &'e mut [Gress],
    pool: &'e mut [Packet],
    g: usize,
    h: u32,
) -> (&'e Program, &'e mut State, &'e mut Packet) {
    let gress = match g {
        0 => main,
        _ => &mut more[g - 1],
    };
    (&gress.prog, &mut gress.st, &mut pool[h as usize])
}

/// Sets a prepended intrinsic field of `pkt` (cut to its width) when the program has it.
fn set_prepended(p: &Program, pkt: &mut Packet, field: Prepended, v: u128) {
    if let Some(f) = p.tna.prepended_fields[field as usize] {
        pkt.phv.set(p, f, v & mask(p.fields[f as usize].width));
    }
}

/// Sets an intrinsic metadata field when the program has it.
fn set_meta(p: &Program, pkt: &mut Packet, f: Option<FieldId>, v: u128) {
    if let Some(f) = f {
        pkt.phv.set(p, f, v & mask(p.fields[f as usize].width));
    }
}

/// Reads an intrinsic metadata field (0 when the program has none).
fn get_meta(p: &Program, pkt: &Packet, f: Option<FieldId>) -> u128 {
    f.map_or(0, |f| pkt.phv.get(p, f))
}

/// Puts the prepended intrinsic header (its fields as set in the PHV), then
/// `slot` (padded with zeros to `slot_bytes`), then `body` into `pkt.data`, and
/// resets the PHV for the parser. `pkt.out` is used as scratch.
fn prepend(p: &Program, pkt: &mut Packet, slot: Option<&[u8]>, slot_bytes: usize, body: Body) {
    let mut buf = std::mem::take(&mut pkt.out);
    buf.clear();
    if let Some(h) = p.tna.prepended {
        let mut w = BitWriter::new(&mut buf);
        exec::emit_header_bits(p, pkt, h, &mut w);
        w.finish();
    }
    if let Some(slot) = slot {
        let n = slot.len().min(slot_bytes);
        buf.extend_from_slice(&slot[..n]);
        buf.resize(buf.len() + slot_bytes - n, 0);
    }
    match body {
        Body::Data => buf.extend_from_slice(&pkt.data),
        Body::Received => buf.extend_from_slice(&pkt.tna.received),
    }
    std::mem::swap(&mut pkt.data, &mut buf);
    pkt.out = buf;
    pkt.phv.reset(p);
    pkt.cursor = 0;
}

/// Which bytes of a packet a block or a copy takes.
#[derive(Clone, Copy)]
enum Body {
    /// The packet's `data`.
    Data,
    /// The frame as first received (a resubmission).
    Received,
}

/// What a gress's parser, control and deparser made of a packet.
enum Ran {
    /// The parser reached `reject`.
    Rejected,
    /// An `assert`/`assume` failed.
    AssertFailed,
    /// Deparsed into `pkt.out`, with the deparser metadata's `drop_ctl`.
    Deparsed { drop_ctl: u128 },
}

/// Runs gress `p`'s parser (from `init`), control (ingress or egress) and deparser on `pkt`.
fn run_blocks(p: &Program, st: &mut State, pkt: &mut Packet, init: Option<u32>) -> Ran {
    exec::parse_from(p, st, pkt, init);
    if pkt.flags.rejected {
        return Ran::Rejected;
    }
    match p.kind {
        ProgramKind::TnaEgress => exec::run_pipeline(p, st, pkt, &p.egress, &p.flat.egress),
        _ => exec::run_pipeline(p, st, pkt, &p.ingress, &p.flat.ingress),
    }
    if pkt.flags.assert_failed {
        return Ran::AssertFailed;
    }
    exec::deparse(p, st, pkt);
    Ran::Deparsed {
        drop_ctl: get_meta(p, pkt, p.tna.drop_ctl),
    }
}

/// Drop-control bits of `*_intr_md_for_dprsr.drop_ctl`.
const DROP: u128 = 0b001;
const NO_MIRROR: u128 = 0b100;

impl Engine {
    /// The loaded program's architecture (`v1model`, `tna`, `t2na`) and target
    /// (`bmv2`, `tofino`, `tofino2`).
    pub fn arch(&self) -> (&str, &str) {
        match self.tna.as_deref() {
            Some(t) => (&t.arch, &t.info.name),
            None => ("v1model", "bmv2"),
        }
    }

    /// Sets the port metadata the ingress parser of `port` finds before each frame
    /// (`port_metadata_unpack`), as the control plane's `$PORT_METADATA` table does;
    /// `bytes` shorter than the slot are padded with zeros.
    pub fn set_port_metadata(&mut self, port: u16, bytes: Vec<u8>) -> Result<(), RuntimeError> {
        let Some(tna) = self.tna.as_deref_mut() else {
            return Err(RuntimeError::FailedPrecondition(
                "port metadata belongs to TNA programs; this one is v1model".into(),
            ));
        };
        if bytes.len() > tna.info.port_metadata_bytes {
            return Err(RuntimeError::InvalidArgument(format!(
                "port metadata of {} bytes: {} has {} per port",
                bytes.len(),
                tna.info.name,
                tna.info.port_metadata_bytes
            )));
        }
        tna.port_metadata.insert(port, bytes);
        Ok(())
    }

    /// Assigns ingress parser `parser` (0 the first, 1 `parser_1`, ...) of a
    /// `MultiParserSwitch` program to `port`, as Tofino's control plane does.
    pub fn set_port_parser(&mut self, port: u16, parser: u8) -> Result<(), RuntimeError> {
        let Some(pipe) = self.tna.as_deref().and_then(|t| t.pipe_of_port(port)) else {
            return Err(RuntimeError::FailedPrecondition(format!(
                "port {port}: no TNA pipe serves it (a v1model program has one parser)"
            )));
        };
        let parsers = 1 + self.gress(2 * pipe).prog.other_parsers.len();
        if usize::from(parser) >= parsers {
            return Err(RuntimeError::InvalidArgument(format!(
                "parser {parser}: port {port}'s pipe has {parsers} ingress parser(s)"
            )));
        }
        if let Some(tna) = self.tna.as_deref_mut() {
            tna.port_parser.insert(port, parser);
        }
        Ok(())
    }

    /// The port metadata of `port` (empty when never set).
    pub fn port_metadata(&self, port: u16) -> Vec<u8> {
        self.tna
            .as_deref()
            .and_then(|t| t.port_metadata.get(&port).cloned())
            .unwrap_or_default()
    }

    /// The deparser's `drop_ctl` when the blocks ran to the end; otherwise counts why
    /// packet `h` stopped (parser reject, failed assert), frees it and gives None.
    fn deparsed(&mut self, ran: Ran, h: u32) -> Option<u128> {
        match ran {
            Ran::Deparsed { drop_ctl } => return Some(drop_ctl),
            Ran::Rejected => self.stats.dropped_by_program += 1,
            Ran::AssertFailed => self.stats.dropped_by_assert += 1,
        }
        self.release(h);
        None
    }

    /// Moves the trace (kept in `main`'s state) to gress `g` for its blocks, or back:
    /// called in pairs, so every gress's lines go to the one trace, in order.
    fn lend_tracer(&mut self, g: usize) {
        if g != 0 {
            std::mem::swap(&mut self.main.st.trace, &mut self.more[g - 1].st.trace);
        }
    }

    /// Runs T2NA's ghost control of `port`'s pipe on a change of the length of `port`'s
    /// queue `queue`: `gh_intr_md` carries the queue's id (the port's number within its
    /// pipe times 16 plus the queue, for a port's first 16 queues), its length in cells
    /// now, the pipe and a bit that alternates between updates. Tofino 2's ghost thread
    /// reports queue lengths continuously; here each enqueue and dequeue reports one.
    fn tna_ghost(&mut self, port: u16, queue: u8) {
        let Some(pipe) = self.tna.as_deref().and_then(|t| t.pipe_of_port(port)) else {
            return;
        };
        let g = 2 * pipe;
        if queue >= 16 || self.gress(g).prog.ghost.init.is_none() {
            return;
        }
        let cells = self
            .tm
            .queue_stats(port, queue)
            .map_or(0, |s| s.depth_cells);
        let Some(tna) = self.tna.as_deref_mut() else {
            return;
        };
        tna.ping_pong = !tna.ping_pong;
        let ping_pong = tna.ping_pong;
        let mut pkt = std::mem::take(&mut tna.ghost_pkt);
        let gress = match g {
            0 => &mut self.main,
            _ => &mut self.more[g - 1],
        };
        let (p, st) = (&gress.prog, &mut gress.st);
        pkt.phv.reshape(p);
        let meta = p.tna;
        set_meta(
            p,
            &mut pkt,
            meta.ghost_qid,
            u128::from((port & 0x7f) << 4 | u16::from(queue)),
        );
        set_meta(p, &mut pkt, meta.ghost_qlength, u128::from(cells));
        set_meta(p, &mut pkt, meta.ghost_pipe_id, pipe as u128);
        set_meta(p, &mut pkt, meta.ghost_ping_pong, u128::from(ping_pong));
        // The ghost thread is not a packet: its work stays out of the packet trace.
        let trace = st.trace.take();
        exec::run_pipeline(p, st, &mut pkt, &p.ghost, &p.flat.ghost);
        st.trace = trace;
        if let Some(tna) = self.tna.as_deref_mut() {
            tna.ghost_pkt = pkt;
        }
    }

    /// A TNA program's ingress for received packet `h` (loaded, not yet parsed).
    pub(crate) fn tna_ingress(&mut self, h: u32, port: u16, now: u64) {
        let Some(tna) = self.tna.as_deref() else {
            return;
        };
        let Some(pipe) = tna.pipe_of_port(port) else {
            self.stats.dropped_by_program += 1;
            trace_pkt!(
                self.main.st,
                self.pool[h as usize],
                Debug,
                "Dropping packet: no pipe of the program serves port {}",
                port
            );
            self.release(h);
            return;
        };
        let g = 2 * pipe;
        let parser = tna.port_parser.get(&port).copied().unwrap_or(0);
        let slot_bytes = tna.info.port_metadata_bytes;
        let port_md = tna.port_metadata.get(&port).cloned().unwrap_or_default();
        loop {
            self.passes[h as usize] += 1;
            let (p, _, pkt) = split(&mut self.main, &mut self.more, &mut self.pool, g, h);
            pkt.now = now;
            pkt.phv.reshape(p);
            let resubmitted = pkt.tna.resubmitted;
            set_prepended(p, pkt, Prepended::ResubmitFlag, u128::from(resubmitted));
            set_prepended(p, pkt, Prepended::IngressPort, u128::from(port));
            set_prepended(p, pkt, Prepended::IngressMacTstamp, u128::from(now));
            if resubmitted {
                let header = std::mem::take(&mut pkt.tna.resubmit_header);
                prepend(p, pkt, Some(&header), slot_bytes, Body::Received);
                pkt.tna.resubmit_header = header;
            } else {
                if p.externs.resubmits || p.externs.mirrors {
                    // The deparser spends `data`; a resubmission and an ingress mirror
                    // need the frame as received.
                    pkt.tna.received.clear();
                    pkt.tna.received.extend_from_slice(&pkt.data);
                }
                prepend(p, pkt, Some(&port_md), slot_bytes, Body::Data);
            }
            set_meta(p, pkt, p.tna.global_tstamp, u128::from(now));
            mark_port_unset(p, pkt);
            pkt.tna.clear_requests();
            self.lend_tracer(g);
            let (p, st, pkt) = split(&mut self.main, &mut self.more, &mut self.pool, g, h);
            let init = match parser {
                0 => p.init_state,
                n => p.other_parsers.get(usize::from(n) - 1).copied().flatten(),
            };
            let ran = run_blocks(p, st, pkt, init);
            let resubmit = pkt.tna.resubmit && !resubmitted && p.externs.resubmits;
            let digest = pkt.flags.digest.take();
            let mirror_session = pkt.tna.mirror_session;
            self.lend_tracer(g);
            let Some(drop_ctl) = self.deparsed(ran, h) else {
                return;
            };
            let mirror = mirror_session.filter(|_| drop_ctl & NO_MIRROR == 0);
            if let Some(list) = digest {
                self.digest(g, h, list, now);
            }
            if let Some(session) = mirror {
                self.tna_mirror(h, session, Body::Received, now);
            }
            if resubmit {
                self.stats.resubmitted += 1;
                if self.passes[h as usize] >= MAX_PASSES {
                    self.stats.dropped_pass_limit += 1;
                    self.release(h);
                    return;
                }
                let pkt = &mut self.pool[h as usize];
                pkt.tna.resubmitted = true;
                pkt.copies += 1;
                pkt.copy = pkt.copies;
                continue;
            }
            if drop_ctl & DROP != 0 {
                self.stats.dropped_by_program += 1;
                trace_pkt!(
                    self.main.st,
                    self.pool[h as usize],
                    Debug,
                    "Dropping packet at the end of ingress (drop_ctl {})",
                    drop_ctl
                );
                self.release(h);
                return;
            }
            break;
        }
        self.tna_to_tm(g, h, now);
    }

    /// Hands an ingress-deparsed packet to the traffic manager as `ig_intr_md_for_tm`
    /// says: multicast groups, a copy to the CPU, or its unicast port and queue.
    fn tna_to_tm(&mut self, g: usize, h: u32, now: u64) {
        let p = &self.gress(g).prog;
        let pkt = &self.pool[h as usize];
        let meta = p.tna;
        let port = get_meta(p, pkt, meta.ucast_egress_port) as u16;
        let qid = get_meta(p, pkt, meta.qid).min(255) as u8;
        let bypass = get_meta(p, pkt, meta.bypass_egress) != 0;
        let groups = [
            get_meta(p, pkt, meta.mcast_grp_a) as u16,
            get_meta(p, pkt, meta.mcast_grp_b) as u16,
        ];
        let to_cpu = get_meta(p, pkt, meta.copy_to_cpu) != 0;
        // A port Tofino does not have (local number above 71, e.g. 0x1FF, the value
        // programs write to mean "no unicast copy") sends nothing.
        let unicast = port_was_set(p, pkt) && port_exists(port);
        // Where it came from, for the TM's ingress accounting (PPGs, PAUSE/PFC),
        // and whether a TM drop deflects it.
        let in_port = p.tna.prepended_fields[Prepended::IngressPort as usize];
        let from = (
            get_meta(p, pkt, in_port) as u16,
            (get_meta(p, pkt, meta.ingress_cos) & 7) as u8,
        );
        let deflect = get_meta(p, pkt, meta.deflect_on_drop) != 0;
        let t = &mut self.pool[h as usize].tna;
        (t.from, t.deflect_on_drop) = (Some(from), deflect);
        self.pool[h as usize].tna.bypass_egress = bypass;
        if to_cpu {
            if let Some(cpu) = self.cpu_port {
                let c = self.tna_copy(h, None);
                self.tna_enqueue(c, cpu, 0, now);
            }
        }
        let multicast = groups.iter().any(|&grp| grp != 0);
        for grp in groups.into_iter().filter(|&grp| grp != 0) {
            let replicas = self.mcast.get(&grp).cloned().unwrap_or_default();
            for (rid, out_port) in replicas {
                let c = self.tna_copy(h, None);
                self.pool[c as usize].tna.rid = rid;
                self.stats.replicated += 1;
                self.tna_enqueue(c, out_port, qid, now);
            }
        }
        if multicast && !unicast {
            self.release(h);
            return;
        }
        if !unicast {
            // Tofino drops a packet ingress gave no destination.
            self.stats.dropped_by_program += 1;
            trace_pkt!(
                self.main.st,
                self.pool[h as usize],
                Debug,
                "Dropping packet: ingress set no egress port or multicast group"
            );
            self.release(h);
            return;
        }
        trace_pkt!(
            self.main.st,
            self.pool[h as usize],
            Debug,
            "Egress port is {}, queue {}",
            port,
            qid
        );
        self.tna_enqueue(h, port, qid, now);
    }

    /// A copy of packet `h` as a new pool packet: its deparsed bytes, or for a mirror
    /// its mirror header and then `body` (the frame as received for an ingress mirror,
    /// the deparsed packet for an egress one).
    fn tna_copy(&mut self, h: u32, mirror: Option<Body>) -> u32 {
        let c = self.alloc_copy(h);
        let (orig, copy) = two(&mut self.pool, h, c);
        copy.out.clear();
        if mirror.is_some() {
            copy.out.extend_from_slice(&orig.tna.mirror_header);
        }
        match mirror {
            Some(Body::Received) => copy.out.extend_from_slice(&orig.tna.received),
            _ => copy.out.extend_from_slice(&orig.out),
        }
        copy.tna.reset();
        copy.tna.bypass_egress = orig.tna.bypass_egress && mirror.is_none();
        copy.flags = Default::default();
        copy.ingress_len = orig.ingress_len;
        copy.now = orig.now;
        c
    }

    /// Mirrors packet `h` to `session`: its mirror header, then `body`, cut to the
    /// session's truncation length.
    fn tna_mirror(&mut self, h: u32, session: u16, body: Body, now: u64) {
        let Some(cs) = self.sessions.get(&u32::from(session)).copied() else {
            trace_pkt!(
                self.main.st,
                self.pool[h as usize],
                Debug,
                "Mirror session {} is not configured: no copy",
                session
            );
            return;
        };
        if self.passes[h as usize] >= MAX_PASSES {
            self.stats.dropped_pass_limit += 1;
            return;
        }
        self.stats.cloned += 1;
        let c = self.tna_copy(h, Some(body));
        self.passes[c as usize] += 1;
        if let Some(t) = cs.truncate {
            self.pool[c as usize].out.truncate(t as usize);
        }
        if let Some(grp) = cs.mcast_grp {
            let replicas = self.mcast.get(&grp).cloned().unwrap_or_default();
            for (rid, out_port) in replicas {
                let r = self.tna_copy(c, None);
                self.pool[r as usize].tna.rid = rid;
                self.tna_enqueue(r, out_port, 0, now);
            }
        }
        match cs.port {
            Some(port) => self.tna_enqueue(c, port, 0, now),
            None => self.release(c),
        }
    }

    /// Queues packet `h`'s bytes (`out`) on `port`'s queue `qid`.
    fn tna_enqueue(&mut self, h: u32, port: u16, qid: u8, now: u64) {
        let bytes = self.pool[h as usize].out.len() as u32;
        let from = self.pool[h as usize].tna.from;
        let queued = self.tm.enqueue_from(now, from, port, qid, bytes, h);
        if self.tm.has_flow_control_frames() {
            self.send_flow_control();
        }
        match queued {
            Ok(e) => {
                // The TM counts this program's target's cells (`target_info.cell_bytes`).
                self.pool[h as usize].tna.enq_qdepth_cells =
                    u32::try_from(e.enq_qdepth_cells).unwrap_or(u32::MAX);
                self.tna_ghost(port, qid);
            }
            Err(r) if self.tna_deflect(r.item, r.reason, now) => {}
            Err(r) => {
                self.stats.dropped_by_tm += 1;
                trace_pkt!(
                    self.main.st,
                    self.pool[r.item as usize],
                    Debug,
                    "Dropping packet at enqueue: {} (port {}, queue {})",
                    r.reason.name(),
                    port,
                    qid
                );
                if r.reason == bufferlab_tm::DropReason::QueueOutOfRange {
                    self.stats.dropped_priority_out_of_range += 1;
                }
                self.release(r.item);
            }
        }
    }

    /// A TNA program's egress for a packet leaving the traffic manager.
    pub(crate) fn tna_egress(&mut self, d: Dequeued<u32>) {
        let h = d.item;
        let t = d.tx_start;
        self.tna_ghost(d.port, d.queue);
        if self.pool[h as usize].tna.bypass_egress {
            self.send_as_emitted(h, d.port, d.arrival);
            return;
        }
        let Some(tna) = self.tna.as_deref() else {
            return;
        };
        let Some(pipe) = tna.pipe_of_port(d.port) else {
            self.stats.dropped_by_program += 1;
            self.tm.retime_last(d.port, None);
            self.release(h);
            return;
        };
        let g = 2 * pipe + 1;
        let (p, _, pkt) = split(&mut self.main, &mut self.more, &mut self.pool, g, h);
        pkt.now = t;
        // The egress parser's input is what ingress emitted (for a mirror copy, its
        // mirror header first): move it to `data` before building the prefix.
        std::mem::swap(&mut pkt.data, &mut pkt.out);
        pkt.phv.reshape(p);
        let fields = [
            (Prepended::EgressPort, u128::from(d.port)),
            (Prepended::EnqQdepth, u128::from(pkt.tna.enq_qdepth_cells)),
            (Prepended::EnqTstamp, u128::from(d.enq_time)),
            (Prepended::DeqQdepth, u128::from(d.deq_qdepth_cells)),
            (Prepended::DeqTimedelta, u128::from(t - d.enq_time)),
            (Prepended::EgressRid, u128::from(pkt.tna.rid)),
            (Prepended::EgressQid, u128::from(d.queue)),
            (Prepended::DeflectionFlag, u128::from(pkt.tna.deflected)),
            (Prepended::PktLength, pkt.data.len() as u128),
        ];
        for (field, v) in fields {
            set_prepended(p, pkt, field, v);
        }
        prepend(p, pkt, None, 0, Body::Data);
        set_meta(p, pkt, p.tna.global_tstamp, u128::from(t));
        pkt.tna.clear_requests();
        pkt.flags = Default::default();
        self.lend_tracer(g);
        let (p, st, pkt) = split(&mut self.main, &mut self.more, &mut self.pool, g, h);
        let ran = run_blocks(p, st, pkt, p.init_state);
        let mirror_session = pkt.tna.mirror_session;
        self.lend_tracer(g);
        let Some(drop_ctl) = self.deparsed(ran, h) else {
            self.tm.retime_last(d.port, None);
            return;
        };
        let mirror = mirror_session.filter(|_| drop_ctl & NO_MIRROR == 0);
        if let Some(session) = mirror {
            self.tna_mirror(h, session, Body::Data, t);
        }
        if drop_ctl & DROP != 0 {
            self.stats.dropped_by_program += 1;
            trace_pkt!(
                self.main.st,
                self.pool[h as usize],
                Debug,
                "Dropping packet at the end of egress (drop_ctl {})",
                drop_ctl
            );
            self.tm.retime_last(d.port, None);
            self.release(h);
            return;
        }
        self.send_as_emitted(h, d.port, d.arrival);
    }

    /// Transmits what egress emitted, on the wire for its own length: the TM timed
    /// the frame by what it buffered (a bridged header too), the port sends less.
    fn send_as_emitted(&mut self, h: u32, port: u16, arrival: u64) {
        let bytes = u32::try_from(self.pool[h as usize].out.len()).unwrap_or(u32::MAX);
        let arrival = self
            .tm
            .retime_last(port, Some(bytes))
            .map_or(arrival, |(_, a)| a);
        self.transmit(h, port, arrival);
    }
}
