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
use bufferlab_hosts::bcn::{parse_bcn, RateChange, ETHERTYPE_BCN};
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
use crate::host::{
    CapturedFrame, Host, Nic, Peer, QueuedFrame, SimSource, SourceCounters, WhenFull,
};
use crate::link::{Direction, LinkModel};
use crate::reaction::{Command, HookContext, HookError, Reaction};
use crate::record::{Probe, Recorder, Series};
use crate::switch_node::{SwitchNode, SWITCH_PORTS};

mod build;
mod hosts;
mod recording;
mod switching;
mod tcp;

pub use tcp::{TcpFlowConfig, TcpFlows, TcpProbe};

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
    /// TCP flows.
    pub tcp: TcpFlows,
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
            tcp: TcpFlows::default(),
            names: HashMap::new(),
            events_run: 0,
            switch_arrivals: 0,
        }
    }

    /// Virtual time, ns.
    pub fn now(&self) -> u64 {
        self.now
    }

    fn start(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        for i in 0..self.sources.len() {
            self.schedule_next_frame(i as u32);
        }
        self.start_tcp();
        for i in 0..self.switches.len() {
            let next = self.switches[i].lock().next_event_ns();
            self.switches[i].next_ns = next;
        }
        if self.recorder.interval_ns > 0 {
            self.build_series();
            self.events.push(0, Event::Record);
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
                let s = &mut self.sources[source as usize];
                s.counters.feedback_frames += 1;
                let change = match &mut s.reaction {
                    Reaction::Bcn(rp) => rp.on_bcn(t, &bcn),
                    _ => None,
                };
                if let Some(change) = change {
                    self.sources[source as usize].counters.feedback_applied += 1;
                    self.apply_rate_change(source, &change, t);
                }
                Ok(())
            }
            Event::RpTimer { source } => {
                let s = &mut self.sources[source as usize];
                // A timer the reaction point no longer wants (its limiter went) is stale.
                if s.rp_timer_ns != Some(t) {
                    return Ok(());
                }
                s.rp_timer_ns = None;
                let change = match &mut s.reaction {
                    Reaction::Bcn(rp) => rp.on_timer(t),
                    _ => None,
                };
                match change {
                    Some(change) => self.apply_rate_change(source, &change, t),
                    None => self.schedule_rp_timer(source),
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
            Event::TcpTimer { flow } => {
                self.tcp_timer(flow, t);
                Ok(())
            }
            Event::Record => {
                self.record(t);
                self.events
                    .push(t + self.recorder.interval_ns, Event::Record);
                Ok(())
            }
        }
    }

    /// Frames still in flight between nodes or in the store.
    pub fn frames_in_flight(&self) -> usize {
        self.frames.in_use()
    }
}
