//! The simulator: switches, hosts and links in virtual time, one thread, seeded.
//!
//! Events run in time order (ties in the order they were scheduled). A switch's
//! engine keeps its own queue of traffic-manager events; the loop asks each engine
//! for its next one and runs whichever comes first, a switch before a scheduled
//! event at the same ns. A frame a switch sends reaches the peer when the engine
//! says its last bit arrived (the engine's port model is the link: rate, wire
//! overhead, propagation delay); a host's NIC does the same for frames it sends.
//! Switches are store-and-forward: a frame enters the pipeline `latency_ns` after
//! its last bit arrived.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use bufferlab_engine::engine::{Engine, Output};
use bufferlab_hosts::bcn::{parse_bcn, ETHERTYPE_BCN};
use bufferlab_hosts::frame::{
    parse_data_frame, write_data_frame, FlowAddress, ETHERTYPE_RLT, RLT_BYTES,
};
use bufferlab_hosts::header::DataHeader;
use bufferlab_hosts::pause::{parse_mac_control, PauseTimer, PfcTimers, PFC_CLASSES};
use bufferlab_hosts::rlq::RateLimiterQueue;
use bufferlab_hosts::rng::Rng;
use bufferlab_hosts::source::{Source, SourceSpec};
use bufferlab_hosts::wire::Serialiser;

use crate::event::{Event, EventQueue, NodeRef};
use crate::frames::{FrameId, FrameStore};
use crate::host::{Host, Nic, Peer, QueuedFrame, SimSource, SourceCounters, WhenFull};
use crate::link::{Direction, LinkModel};
use crate::reaction::{Command, HookContext, HookError, Reaction};
use crate::record::{Probe, Recorder, Series};
use crate::switch_node::{SwitchNode, SWITCH_PORTS};

/// Why a simulation cannot be built or run.
#[derive(Debug)]
pub enum SimError {
    /// The network description is wrong: what and why.
    Config(String),
    /// A reaction hook failed (the error it raised).
    Hook {
        /// The source whose hook failed.
        source: String,
        /// The error.
        error: HookError,
    },
    /// The progress callback asked to stop (e.g. an interrupt).
    Stopped(HookError),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Config(m) => write!(f, "{m}"),
            SimError::Hook { source, error } => {
                write!(f, "reaction hook of source {source}: {error}")
            }
            SimError::Stopped(e) => write!(f, "stopped: {e}"),
        }
    }
}

impl std::error::Error for SimError {}

fn config<T>(message: impl Into<String>) -> Result<T, SimError> {
    Err(SimError::Config(message.into()))
}

/// One end of a link, by node name (and port, for a switch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct End {
    /// Node name.
    pub node: String,
    /// Switch port; None for a host.
    pub port: Option<u16>,
}

/// The reaction a source is built with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ReactionSpec {
    /// Ignores feedback.
    None,
    /// The BCN reaction point with these parameters (line rate taken from the host's link).
    Bcn(bufferlab_hosts::bcn::RpConfig),
}

/// Everything that describes one source.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceConfig {
    /// Name, for results.
    pub name: String,
    /// The host it runs on.
    pub host: String,
    /// The host its frames go to.
    pub destination: String,
    /// Offered traffic.
    pub spec: SourceSpec,
    /// DSCP of its frames.
    pub dscp: u8,
    /// PFC priority that pauses it.
    pub priority: u8,
    /// UDP source and destination port.
    pub udp_ports: (u16, u16),
    /// Rate-limiter queue (host buffer) size, bytes.
    pub rlq_bytes: u64,
    /// Full queue: drop or hold the source.
    pub when_full: WhenFull,
    /// Reaction model.
    pub reaction: ReactionSpec,
    /// Host response time to feedback, ns.
    pub response_ns: u64,
}

/// Events run between two calls of the progress callback.
const EVENTS_PER_TICK: u64 = 1 << 16;

/// The network and its clock.
pub struct Simulator {
    seed: u64,
    now: u64,
    started: bool,
    events: EventQueue,
    frames: FrameStore,
    outputs: Vec<Output>,
    delivered: Vec<(u16, FrameId, u64)>,
    /// Switches.
    pub switches: Vec<SwitchNode>,
    /// Hosts.
    pub hosts: Vec<Host>,
    /// Sources.
    pub sources: Vec<SimSource>,
    /// Link directions.
    pub links: Vec<Direction>,
    /// Time series.
    pub recorder: Recorder,
    names: HashMap<String, NodeRef>,
    /// Events run so far.
    pub events_run: u64,
    /// Frames handed to switches so far (one per frame and switch crossed).
    pub switch_arrivals: u64,
}

impl Simulator {
    /// An empty network; `seed` seeds every source's random stream.
    pub fn new(seed: u64) -> Simulator {
        Simulator {
            seed,
            now: 0,
            started: false,
            events: EventQueue::default(),
            frames: FrameStore::default(),
            outputs: Vec::new(),
            delivered: Vec::new(),
            switches: Vec::new(),
            hosts: Vec::new(),
            sources: Vec::new(),
            links: Vec::new(),
            recorder: Recorder::default(),
            names: HashMap::new(),
            events_run: 0,
            switch_arrivals: 0,
        }
    }

    /// Virtual time, ns.
    pub fn now(&self) -> u64 {
        self.now
    }

    fn check_building(&self, what: &str) -> Result<(), SimError> {
        if self.started {
            return config(format!("{what}: the network cannot change once it has run"));
        }
        Ok(())
    }

    fn new_name(&self, name: &str) -> Result<(), SimError> {
        if name.is_empty() {
            return config("a node needs a name");
        }
        if self.names.contains_key(name) {
            return config(format!("{name}: a node of that name exists"));
        }
        Ok(())
    }

    /// Adds a switch running `engine`; frames enter its pipeline `latency_ns` after arriving.
    pub fn add_switch(
        &mut self,
        name: &str,
        engine: Arc<Mutex<Engine>>,
        latency_ns: u64,
    ) -> Result<u32, SimError> {
        self.check_building("add_switch")?;
        self.new_name(name)?;
        if self
            .switches
            .iter()
            .any(|s| Arc::ptr_eq(&s.engine, &engine))
        {
            return config(format!(
                "{name}: that engine is already switch of this network"
            ));
        }
        let index = self.switches.len() as u32;
        self.switches
            .push(SwitchNode::new(name.into(), engine, latency_ns));
        self.names.insert(name.into(), NodeRef::Switch(index));
        Ok(index)
    }

    /// Adds a host.
    pub fn add_host(&mut self, name: &str, mac: [u8; 6], ip: [u8; 4]) -> Result<u32, SimError> {
        self.check_building("add_host")?;
        self.new_name(name)?;
        let index = self.hosts.len() as u32;
        self.hosts.push(Host::new(name.into(), mac, ip));
        self.names.insert(name.into(), NodeRef::Host(index));
        Ok(index)
    }

    fn node(&self, name: &str) -> Result<NodeRef, SimError> {
        match self.names.get(name) {
            Some(node) => Ok(*node),
            None => config(format!("{name}: no such host or switch")),
        }
    }

    fn end_name(end: &End) -> String {
        match end.port {
            Some(p) => format!("{}-p{p}", end.node),
            None => end.node.clone(),
        }
    }

    fn check_end(&self, end: &End) -> Result<(NodeRef, u16), SimError> {
        let node = self.node(&end.node)?;
        match (node, end.port) {
            (NodeRef::Switch(s), Some(port)) => {
                if usize::from(port) >= SWITCH_PORTS {
                    return config(format!(
                        "{}: ports are 0..{SWITCH_PORTS}",
                        Self::end_name(end)
                    ));
                }
                if self.switches[s as usize].ports[usize::from(port)].is_some() {
                    return config(format!("{}: port already linked", Self::end_name(end)));
                }
                Ok((node, port))
            }
            (NodeRef::Switch(_), None) => {
                config(format!("{}: a switch end needs a port", end.node))
            }
            (NodeRef::Host(h), None) => {
                if self.hosts[h as usize].nic.is_some() {
                    return config(format!(
                        "{}: a host has one link, this one is linked already",
                        end.node
                    ));
                }
                Ok((node, 0))
            }
            (NodeRef::Host(_), Some(_)) => config(format!("{}: a host end has no port", end.node)),
        }
    }

    /// Links `a` and `b` with `model` both ways.
    pub fn connect(&mut self, a: &End, b: &End, model: LinkModel) -> Result<(), SimError> {
        self.check_building("connect")?;
        if model.rate_bps == 0 {
            return config(format!(
                "link {} - {}: rate_bps must be positive",
                Self::end_name(a),
                Self::end_name(b)
            ));
        }
        let (na, pa) = self.check_end(a)?;
        let (nb, pb) = self.check_end(b)?;
        if na == nb {
            return config(format!(
                "link {} - {}: both ends on one node",
                Self::end_name(a),
                Self::end_name(b)
            ));
        }
        let ab = self.links.len() as u32;
        self.links
            .push(Direction::new(Self::end_name(a), Self::end_name(b), model));
        self.links
            .push(Direction::new(Self::end_name(b), Self::end_name(a), model));
        self.attach(
            na,
            pa,
            Peer {
                node: nb,
                port: pb,
                link: ab,
            },
            model,
        )?;
        self.attach(
            nb,
            pb,
            Peer {
                node: na,
                port: pa,
                link: ab + 1,
            },
            model,
        )?;
        Ok(())
    }

    fn attach(
        &mut self,
        node: NodeRef,
        port: u16,
        peer: Peer,
        model: LinkModel,
    ) -> Result<(), SimError> {
        match node {
            NodeRef::Switch(s) => {
                let sw = &mut self.switches[s as usize];
                let mut engine = sw.lock();
                let mut cfg = engine
                    .port_config(port)
                    .map_err(|e| SimError::Config(format!("{}-p{port}: {e:?}", sw.name)))?;
                cfg.rate_bps = model.rate_bps;
                cfg.delay_ns = model.delay_ns;
                cfg.wire_overhead_bytes = model.wire_overhead_bytes;
                engine
                    .configure_port(port, cfg)
                    .and_then(|()| engine.set_honour_pause(port, model.honour_pause))
                    .map_err(|e| SimError::Config(format!("{}-p{port}: {e:?}", sw.name)))?;
                drop(engine);
                sw.ports[usize::from(port)] = Some(peer);
            }
            NodeRef::Host(h) => {
                let pause = PauseTimer::new(model.rate_bps).map_err(SimError::Config)?;
                let pfc = PfcTimers::new(model.rate_bps).map_err(SimError::Config)?;
                self.hosts[h as usize].nic = Some(Nic {
                    peer,
                    model,
                    serialiser: Serialiser::new(model.rate_bps),
                    busy_until_ns: 0,
                    pause,
                    pfc,
                });
            }
        }
        Ok(())
    }

    /// Adds a source; returns its index (also its flow id).
    pub fn add_source(&mut self, cfg: SourceConfig) -> Result<u32, SimError> {
        self.check_building("add_source")?;
        let what = format!("source {}", cfg.name);
        if self.sources.iter().any(|s| s.name == cfg.name) {
            return config(format!("{what}: a source of that name exists"));
        }
        if self.sources.len() > usize::from(u16::MAX) {
            return config(format!(
                "{what}: at most 65,536 sources (flow ids are 16 bits)"
            ));
        }
        let NodeRef::Host(h) = self.node(&cfg.host)? else {
            return config(format!("{what}: {} is not a host", cfg.host));
        };
        let NodeRef::Host(d) = self.node(&cfg.destination)? else {
            return config(format!(
                "{what}: destination {} is not a host",
                cfg.destination
            ));
        };
        let Some(nic) = &self.hosts[h as usize].nic else {
            return config(format!("{what}: host {} has no link", cfg.host));
        };
        let line_rate = nic.model.rate_bps;
        if cfg.dscp > 63 {
            return config(format!("{what}: dscp {} is not 0..=63", cfg.dscp));
        }
        if usize::from(cfg.priority) >= PFC_CLASSES {
            return config(format!("{what}: priority {} is not 0..=7", cfg.priority));
        }
        let mut spec = cfg.spec.clone();
        spec.wire_overhead_bytes = nic.model.wire_overhead_bytes;
        let generator = Source::new(spec, Rng::stream(self.seed, self.sources.len() as u64))
            .map_err(|e| SimError::Config(format!("{what}: {e}")))?;
        let rlq = RateLimiterQueue::new(cfg.rlq_bytes, None, nic.model.wire_overhead_bytes)
            .map_err(|e| SimError::Config(format!("{what}: {e}")))?;
        if !rlq.can_hold(generator.spec().sizes.max_bytes()) {
            return config(format!(
                "{what}: rlq_bytes {} cannot hold a {}-byte frame",
                cfg.rlq_bytes,
                generator.spec().sizes.max_bytes()
            ));
        }
        let reaction = match cfg.reaction {
            ReactionSpec::None => Reaction::None,
            ReactionSpec::Bcn(mut rp) => {
                rp.line_rate_bps = line_rate as f64;
                Reaction::Bcn(
                    bufferlab_hosts::bcn::ReactionPoint::new(rp)
                        .map_err(|e| SimError::Config(format!("{what}: {e}")))?,
                )
            }
        };
        let (src_host, dst_host) = (&self.hosts[h as usize], &self.hosts[d as usize]);
        let address = FlowAddress {
            src_mac: src_host.mac,
            dst_mac: dst_host.mac,
            src_ip: src_host.ip,
            dst_ip: dst_host.ip,
            dscp: cfg.dscp,
            udp_src: cfg.udp_ports.0,
            udp_dst: cfg.udp_ports.1,
        };
        let index = self.sources.len() as u32;
        self.sources.push(SimSource {
            name: cfg.name,
            host: h,
            flow: index as u16,
            address,
            priority: cfg.priority,
            generator,
            next: None,
            rlq,
            when_full: cfg.when_full,
            blocked: None,
            reaction,
            response_ns: cfg.response_ns,
            tag: None,
            seq: 0,
            counters: SourceCounters::default(),
        });
        self.hosts[h as usize].sources.push(index);
        Ok(index)
    }

    /// Replaces a source's reaction model with a hook.
    pub fn set_hook(
        &mut self,
        source: u32,
        hook: Box<dyn crate::reaction::ReactionHook>,
    ) -> Result<(), SimError> {
        self.check_building("set_hook")?;
        match self.sources.get_mut(source as usize) {
            Some(s) => {
                s.reaction = Reaction::Hook(hook);
                Ok(())
            }
            None => config(format!("source index {source}: no such source")),
        }
    }

    /// Samples every series each `interval_ns` of virtual time (from 0).
    pub fn record_every(&mut self, interval_ns: u64) -> Result<(), SimError> {
        self.check_building("record_every")?;
        if interval_ns == 0 {
            return config("record interval_ns must be positive");
        }
        self.recorder.interval_ns = interval_ns;
        Ok(())
    }

    fn build_series(&mut self) {
        let mut series = Vec::new();
        let mut add = |name: String, probe: Probe| {
            series.push(Series {
                name,
                probe,
                values: Vec::new(),
            })
        };
        for (i, s) in self.sources.iter().enumerate() {
            let i = i as u32;
            let n = &s.name;
            add(format!("source/{n}/offered_bytes"), Probe::SourceOffered(i));
            add(
                format!("source/{n}/offered_frames"),
                Probe::SourceOfferedFrames(i),
            );
            add(
                format!("source/{n}/accepted_bytes"),
                Probe::SourceAccepted(i),
            );
            add(format!("source/{n}/sent_bytes"), Probe::SourceSent(i));
            add(
                format!("source/{n}/dropped_frames"),
                Probe::SourceDropped(i),
            );
            add(format!("source/{n}/rate_bps"), Probe::SourceRate(i));
            add(format!("source/{n}/rlq_bytes"), Probe::SourceQueue(i));
            add(format!("flow/{n}/received_bytes"), Probe::FlowReceived(i));
            add(
                format!("flow/{n}/received_frames"),
                Probe::FlowReceivedFrames(i),
            );
        }
        for (i, sw) in self.switches.iter().enumerate() {
            for (port, peer) in sw.ports.iter().enumerate() {
                if peer.is_some() {
                    add(
                        format!("switch/{}/port/{port}/queue_bytes", sw.name),
                        Probe::PortQueue(i as u32, port as u16),
                    );
                }
            }
            add(
                format!("switch/{}/pool_bytes", sw.name),
                Probe::SwitchPool(i as u32),
            );
        }
        for (i, l) in self.links.iter().enumerate() {
            add(
                format!("link/{}>{}/bytes", l.from, l.to),
                Probe::LinkBytes(i as u32),
            );
        }
        self.recorder.series = series;
    }

    fn start(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        for i in 0..self.sources.len() {
            self.schedule_next_frame(i as u32);
        }
        for i in 0..self.switches.len() {
            let next = self.switches[i].lock().next_event_ns();
            self.switches[i].next_ns = next;
        }
        if self.recorder.interval_ns > 0 {
            self.build_series();
            self.events.push(0, Event::Record);
        }
    }

    fn schedule_next_frame(&mut self, source: u32) {
        let s = &mut self.sources[source as usize];
        s.next = s.generator.next_frame();
        if let Some((t, _)) = s.next {
            self.events.push(t, Event::Generate { source });
        }
    }

    fn next_switch(&self) -> Option<(u64, usize)> {
        let mut best: Option<(u64, usize)> = None;
        for (i, s) in self.switches.iter().enumerate() {
            if let Some(t) = s.next_ns {
                if best.is_none_or(|(b, _)| t < b) {
                    best = Some((t, i));
                }
            }
        }
        best
    }

    /// Runs every event up to and including `until_ns`; `tick` is called every so many
    /// events with the time reached and may stop the run with an error.
    pub fn run_until(
        &mut self,
        until_ns: u64,
        tick: &mut dyn FnMut(u64) -> Result<(), HookError>,
    ) -> Result<(), SimError> {
        self.start();
        loop {
            let next_event = self.events.peek_ns();
            let next_switch = self.next_switch();
            let t = match (next_event, next_switch) {
                (None, None) => break,
                (Some(e), None) => e,
                (None, Some((s, _))) => s,
                (Some(e), Some((s, _))) => e.min(s),
            };
            if t > until_ns {
                break;
            }
            self.now = t;
            match next_switch {
                Some((s, i)) if s == t => self.step_switch(i, t)?,
                _ => {
                    if let Some((_, event)) = self.events.pop() {
                        self.handle(event)?;
                    }
                }
            }
            self.events_run += 1;
            if self.events_run.is_multiple_of(EVENTS_PER_TICK) {
                tick(self.now).map_err(SimError::Stopped)?;
            }
        }
        self.now = self.now.max(until_ns);
        Ok(())
    }

    fn engine_error(&self, switch: usize, e: impl fmt::Debug) -> SimError {
        SimError::Config(format!("switch {}: {e:?}", self.switches[switch].name))
    }

    /// Runs a switch's engine up to `t` and delivers what it sent.
    fn step_switch(&mut self, i: usize, t: u64) -> Result<(), SimError> {
        let next = {
            let mut engine = self.switches[i].lock();
            engine.advance(t);
            engine.drain_received_into(&mut self.outputs);
            engine.next_event_ns()
        };
        self.switches[i].next_ns = next;
        self.deliver_outputs(i)
    }

    /// Moves the engine's outputs into the frame store (handing it back buffers to
    /// reuse) and sends each to the peer of its port.
    fn deliver_outputs(&mut self, i: usize) -> Result<(), SimError> {
        if self.outputs.is_empty() {
            return Ok(());
        }
        {
            let mut engine = self.switches[i].lock();
            for out in self.outputs.drain(..) {
                let (id, spare) = self.frames.put_swapped(out.frame);
                engine.recycle(spare);
                self.delivered.push((out.port, id, out.t_ns));
            }
        }
        let mut delivered = std::mem::take(&mut self.delivered);
        for &(port, id, t) in &delivered {
            match self.switches[i].ports[usize::from(port)] {
                None => {
                    self.switches[i].unconnected_frames += 1;
                    self.frames.release(id);
                }
                Some(peer) => match peer.node {
                    NodeRef::Host(h) => {
                        self.links[peer.link as usize].count(self.frames.get(id));
                        self.host_receive(h, id, t)?;
                    }
                    NodeRef::Switch(_) => self.schedule_arrival(peer, t, id),
                },
            }
        }
        delivered.clear();
        self.delivered = delivered;
        Ok(())
    }

    fn handle(&mut self, event: Event) -> Result<(), SimError> {
        let t = self.now;
        match event {
            Event::Generate { source } => self.generate(source, t),
            Event::NicWake { host } => {
                if self.hosts[host as usize].wake_ns == Some(t) {
                    self.hosts[host as usize].wake_ns = None;
                }
                self.nic_try_send(host, t);
                Ok(())
            }
            Event::Arrive {
                node,
                port,
                link,
                frame,
            } => {
                self.links[link as usize].count(self.frames.get(frame));
                match node {
                    NodeRef::Switch(s) => self.switch_receive(s as usize, port, frame, t),
                    NodeRef::Host(h) => self.host_receive(h, frame, t),
                }
            }
            Event::Feedback { source, bcn } => {
                let host = self.sources[source as usize].host;
                let s = &mut self.sources[source as usize];
                s.counters.feedback_frames += 1;
                if let Reaction::Bcn(rp) = &mut s.reaction {
                    if let Some(change) = rp.on_bcn(t, &bcn) {
                        s.counters.feedback_applied += 1;
                        let rate = change
                            .limited
                            .then(|| change.rate_bps.round().max(1.0) as u64);
                        // A positive rate cannot fail to apply.
                        let _ = s.rlq.set_rate(t, rate);
                        s.tag = change.rlt_cpid;
                        self.nic_try_send(host, t);
                    }
                }
                Ok(())
            }
            Event::HookFeedback { source, frame } => {
                let result = self.run_hook(
                    source,
                    t,
                    |hook, ctx, bytes| hook.on_feedback(ctx, bytes),
                    Some(frame),
                );
                self.frames.release(frame);
                result
            }
            Event::HookTimer { source, token } => {
                self.run_hook(source, t, |hook, ctx, _| hook.on_timer(ctx, token), None)
            }
            Event::Record => {
                self.record(t);
                self.events
                    .push(t + self.recorder.interval_ns, Event::Record);
                Ok(())
            }
        }
    }

    fn switch_receive(
        &mut self,
        i: usize,
        port: u16,
        frame: FrameId,
        t: u64,
    ) -> Result<(), SimError> {
        self.switch_arrivals += 1;
        let (sent, next) = {
            let mut engine = self.switches[i].lock();
            let sent = engine.send(port, self.frames.get(frame), t);
            engine.drain_received_into(&mut self.outputs);
            (sent, engine.next_event_ns())
        };
        self.switches[i].next_ns = next;
        self.frames.release(frame);
        sent.map_err(|e| self.engine_error(i, e))?;
        self.deliver_outputs(i)
    }

    fn generate(&mut self, source: u32, t: u64) -> Result<(), SimError> {
        let s = &mut self.sources[source as usize];
        let Some((_, size)) = s.next.take() else {
            return Ok(());
        };
        s.counters.offered_frames += 1;
        s.counters.offered_bytes += u64::from(size);
        let item = QueuedFrame {
            seq: s.seq,
            offered_ns: t,
            size,
        };
        s.seq = s.seq.wrapping_add(1);
        match s.rlq.offer(item, size) {
            Ok(()) => {
                s.counters.accepted_frames += 1;
                s.counters.accepted_bytes += u64::from(size);
            }
            Err(item) => match s.when_full {
                WhenFull::Drop => {
                    s.counters.dropped_frames += 1;
                    s.counters.dropped_bytes += u64::from(size);
                }
                WhenFull::BackPressure => {
                    s.counters.held += 1;
                    s.blocked = Some(item);
                    return Ok(());
                }
            },
        }
        let host = s.host;
        self.schedule_next_frame(source);
        self.nic_try_send(host, t);
        Ok(())
    }

    /// Schedules `frame`'s arrival at `peer`, whose last bit gets there at `t`: a switch
    /// takes it into its pipeline `latency_ns` later.
    fn schedule_arrival(&mut self, peer: Peer, t: u64, frame: FrameId) {
        let at = match peer.node {
            NodeRef::Switch(s) => t + self.switches[s as usize].latency_ns,
            NodeRef::Host(_) => t,
        };
        let (node, port, link) = (peer.node, peer.port, peer.link);
        self.events.push(
            at,
            Event::Arrive {
                node,
                port,
                link,
                frame,
            },
        );
    }

    fn schedule_wake(&mut self, host: u32, at: u64) {
        let h = &mut self.hosts[host as usize];
        if h.wake_ns.is_none_or(|w| at < w) {
            h.wake_ns = Some(at);
            self.events.push(at, Event::NicWake { host });
        }
    }

    /// Puts the next eligible frame of a host on its link if the link is free.
    fn nic_try_send(&mut self, host: u32, t: u64) {
        let h = &self.hosts[host as usize];
        let Some(nic) = &h.nic else { return };
        if nic.busy_until_ns > t {
            let at = nic.busy_until_ns;
            return self.schedule_wake(host, at);
        }
        if nic.pause.is_paused(t) {
            let at = nic.pause.paused_until_ns();
            return self.schedule_wake(host, at);
        }
        // Round robin over the host's sources, from where it stopped last time.
        let n = h.sources.len();
        let mut chosen = None;
        let mut earliest: Option<u64> = None;
        for k in 0..n {
            let index = h.sources[(h.next_source + k) % n];
            let s = &self.sources[index as usize];
            let Some(ready) = s.rlq.head_ready_ns() else {
                continue;
            };
            let ready = if nic.pfc.is_paused(usize::from(s.priority), t) {
                ready.max(nic.pfc.timer(usize::from(s.priority)).paused_until_ns())
            } else {
                ready
            };
            if ready <= t {
                chosen = Some(((h.next_source + k) % n, index));
                break;
            }
            earliest = Some(earliest.map_or(ready, |e| e.min(ready)));
        }
        let Some((slot, index)) = chosen else {
            if let Some(at) = earliest {
                self.schedule_wake(host, at);
            }
            return;
        };
        self.hosts[host as usize].next_source = (slot + 1) % n;
        let s = &mut self.sources[index as usize];
        let Some((item, size)) = s.rlq.pop(t) else {
            return;
        };
        s.counters.sent_frames += 1;
        s.counters.sent_bytes += u64::from(size);
        let id = self.frames.take();
        let header = DataHeader {
            flow: s.flow,
            seq: item.seq,
            tx_ns: t,
        };
        write_data_frame(
            self.frames.get_mut(id),
            &s.address,
            size as usize,
            s.tag,
            &header,
        );
        let bytes = self.frames.get(id).len() as u64;
        // A source held by its full queue goes on now that a frame left.
        if let Some(blocked) = s.blocked.take() {
            match s.rlq.offer(blocked, blocked.size) {
                Ok(()) => {
                    s.counters.accepted_frames += 1;
                    s.counters.accepted_bytes += u64::from(blocked.size);
                    s.generator.resume_at(t);
                    self.schedule_next_frame(index);
                }
                Err(blocked) => self.sources[index as usize].blocked = Some(blocked),
            }
        }
        let nic = self.hosts[host as usize]
            .nic
            .as_mut()
            .expect("checked above");
        let continuous = nic.busy_until_ns == t;
        if !continuous {
            nic.serialiser.restart();
        }
        let duration = nic
            .serialiser
            .next_ns(bytes + u64::from(nic.model.wire_overhead_bytes));
        nic.busy_until_ns = t + duration;
        let arrival = t + duration + nic.model.delay_ns;
        let peer = nic.peer;
        let busy_until = nic.busy_until_ns;
        self.schedule_arrival(peer, arrival, id);
        self.schedule_wake(host, busy_until);
    }

    fn host_receive(&mut self, host: u32, frame: FrameId, t: u64) -> Result<(), SimError> {
        let bytes = self.frames.get(frame);
        if let Some(data) = parse_data_frame(bytes) {
            let h = &mut self.hosts[host as usize];
            h.counters.data_frames += 1;
            let flow = usize::from(data.header.flow);
            if h.flows.len() <= flow {
                h.flows.resize(flow + 1, Default::default());
            }
            h.flows[flow].record(t, bytes.len(), &data.header);
            self.frames.release(frame);
            return Ok(());
        }
        let honour = self.hosts[host as usize]
            .nic
            .as_ref()
            .is_some_and(|n| n.model.honour_pause);
        if let Some(pause) = parse_mac_control(bytes) {
            let h = &mut self.hosts[host as usize];
            let nonzero = if pause.is_pfc() {
                pause.quanta.iter().any(|&q| q > 0)
            } else {
                pause.quanta[0] > 0
            };
            if nonzero {
                h.counters.pause_frames += 1;
            } else {
                h.counters.xon_frames += 1;
            }
            if honour {
                if let Some(nic) = h.nic.as_mut() {
                    if pause.is_pfc() {
                        nic.pfc.on_pfc(t, pause.class_enable, &pause.quanta);
                    } else {
                        nic.pause.on_quanta(t, pause.quanta[0]);
                    }
                }
                self.frames.release(frame);
                self.nic_try_send(host, t);
                return Ok(());
            }
            self.frames.release(frame);
            return Ok(());
        }
        let ethertype = ethertype_of(bytes);
        if ethertype == Some(ETHERTYPE_BCN) {
            self.hosts[host as usize].counters.bcn_frames += 1;
        } else {
            self.hosts[host as usize].counters.other_frames += 1;
        }
        if let Some(ethertype) = ethertype {
            self.feedback(host, frame, ethertype, t);
        }
        self.frames.release(frame);
        Ok(())
    }

    /// Hands a feedback frame to the reaction models of the host's sources that take it:
    /// the source whose frame the BCN sampled, or every such source when the sample names none.
    fn feedback(&mut self, host: u32, frame: FrameId, ethertype: u16, t: u64) {
        let bytes = self.frames.get(frame);
        let bcn = (ethertype == ETHERTYPE_BCN)
            .then(|| parse_bcn(bytes))
            .flatten();
        let sampled = bcn
            .and_then(|b| parse_data_frame(b.sample(bytes)))
            .map(|d| u32::from(d.header.flow))
            .filter(|&f| self.sources.get(f as usize).is_some_and(|s| s.host == host));
        let targets = self.hosts[host as usize].sources.len();
        for k in 0..targets {
            let index = self.hosts[host as usize].sources[k];
            if sampled.is_some_and(|f| f != index) {
                continue;
            }
            let s = &self.sources[index as usize];
            if !s.reaction.wants(ethertype) {
                continue;
            }
            let at = t + s.response_ns;
            match (&s.reaction, bcn) {
                (Reaction::Bcn(_), Some(bcn)) => {
                    self.events.push(at, Event::Feedback { source: index, bcn })
                }
                (Reaction::Hook(_), _) => {
                    let copy = self.frames.take();
                    let (src, dst) = (frame, copy);
                    let data = self.frames.get(src).to_vec();
                    self.frames.get_mut(dst).extend_from_slice(&data);
                    self.events.push(
                        at,
                        Event::HookFeedback {
                            source: index,
                            frame: copy,
                        },
                    );
                }
                _ => {}
            }
        }
    }

    fn run_hook(
        &mut self,
        source: u32,
        t: u64,
        call: impl FnOnce(
            &mut dyn crate::reaction::ReactionHook,
            &mut HookContext,
            &[u8],
        ) -> Result<(), HookError>,
        frame: Option<FrameId>,
    ) -> Result<(), SimError> {
        let s = &mut self.sources[source as usize];
        let host = s.host;
        let line_rate = self.hosts[host as usize]
            .nic
            .as_ref()
            .map_or(0, |n| n.model.rate_bps);
        let mut ctx = HookContext {
            now_ns: t,
            rate_bps: s.rlq.rate_bps(),
            line_rate_bps: line_rate,
            queue_bytes: s.rlq.occupancy_bytes(),
            tag: s.tag,
            source: s.name.clone(),
            commands: Vec::new(),
        };
        let Reaction::Hook(hook) = &mut s.reaction else {
            return Ok(());
        };
        if frame.is_some() {
            s.counters.feedback_frames += 1;
        }
        let bytes = frame.map_or(&[][..], |f| self.frames.get(f));
        call(hook.as_mut(), &mut ctx, bytes).map_err(|error| SimError::Hook {
            source: s.name.clone(),
            error,
        })?;
        if !ctx.commands.is_empty() && frame.is_some() {
            s.counters.feedback_applied += 1;
        }
        for command in ctx.commands {
            match command {
                Command::SetRate(rate) => s.rlq.set_rate(t, rate).map_err(|e| SimError::Hook {
                    source: s.name.clone(),
                    error: e.into(),
                })?,
                Command::SetTag(tag) => s.tag = tag,
                Command::HoldUntil(until) => s.rlq.hold_until(until),
                Command::Timer { at_ns, token } => self
                    .events
                    .push(at_ns.max(t), Event::HookTimer { source, token }),
            }
        }
        self.nic_try_send(host, t);
        Ok(())
    }

    fn record(&mut self, t: u64) {
        // Bring every engine to now so its queues show this instant.
        for i in 0..self.switches.len() {
            if self.switches[i].next_ns.is_some_and(|n| n <= t) {
                // Recording must not fail the run; an engine error shows on the next step.
                let _ = self.step_switch(i, t);
            }
        }
        self.recorder.times_ns.push(t);
        let mut series = std::mem::take(&mut self.recorder.series);
        for s in &mut series {
            let value = self.probe(s.probe);
            s.values.push(value);
        }
        self.recorder.series = series;
    }

    fn probe(&self, probe: Probe) -> f64 {
        let src = |i: u32| &self.sources[i as usize];
        let flow = |i: u32| {
            let s = src(i);
            self.hosts
                .iter()
                .filter_map(|h| h.flows.get(usize::from(s.flow)))
                .fold((0u64, 0u64), |(b, f), a| (b + a.bytes, f + a.frames))
        };
        match probe {
            Probe::SourceOffered(i) => src(i).counters.offered_bytes as f64,
            Probe::SourceOfferedFrames(i) => src(i).counters.offered_frames as f64,
            Probe::SourceAccepted(i) => src(i).counters.accepted_bytes as f64,
            Probe::SourceSent(i) => src(i).counters.sent_bytes as f64,
            Probe::SourceDropped(i) => src(i).counters.dropped_frames as f64,
            Probe::SourceRate(i) => {
                let s = src(i);
                let line = self.hosts[s.host as usize]
                    .nic
                    .as_ref()
                    .map_or(0, |n| n.model.rate_bps);
                s.regulated_rate_bps(line)
            }
            Probe::SourceQueue(i) => src(i).rlq.occupancy_bytes() as f64,
            Probe::FlowReceived(i) => flow(i).0 as f64,
            Probe::FlowReceivedFrames(i) => flow(i).1 as f64,
            Probe::PortQueue(s, port) => {
                self.switches[s as usize].lock().port_occupancy_bytes(port) as f64
            }
            Probe::SwitchPool(s) => self.switches[s as usize].lock().pool_used_bytes() as f64,
            Probe::LinkBytes(l) => self.links[l as usize].total_bytes() as f64,
        }
    }

    /// Frames still in flight between nodes or in the store.
    pub fn frames_in_flight(&self) -> usize {
        self.frames.in_use()
    }
}

fn ethertype_of(frame: &[u8]) -> Option<u16> {
    let be16 = |at: usize| {
        frame
            .get(at..at + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
    };
    match be16(12)? {
        ETHERTYPE_RLT => be16(12 + RLT_BYTES),
        e => Some(e),
    }
}
