//! Switches: an engine running BMv2 JSON, and which link each port is on.

use std::sync::{Arc, Mutex, MutexGuard};

use bufferlab_engine::engine::Engine;

use crate::host::Peer;

/// Ports a switch has (the traffic manager's).
pub const SWITCH_PORTS: usize = bufferlab_tm::NUM_PORTS as usize;

/// A switch in the network.
pub struct SwitchNode {
    /// Name.
    pub name: String,
    /// The engine, shared with the Python object P4Runtime programs.
    pub engine: Arc<Mutex<Engine>>,
    /// Time from a frame's last bit in to its entering the pipeline, ns.
    pub latency_ns: u64,
    /// Peer of each port, by port number.
    pub ports: Vec<Option<Peer>>,
    /// The engine's next event, ns, as of the last call into it.
    pub next_ns: Option<u64>,
    /// Frames it sent out of ports with no link.
    pub unconnected_frames: u64,
}

impl SwitchNode {
    /// A switch with no links yet.
    pub fn new(name: String, engine: Arc<Mutex<Engine>>, latency_ns: u64) -> SwitchNode {
        SwitchNode {
            name,
            engine,
            latency_ns,
            ports: vec![None; SWITCH_PORTS],
            next_ns: None,
            unconnected_frames: 0,
        }
    }

    /// The engine, locked (a poisoned lock still holds a usable engine).
    pub fn lock(&self) -> MutexGuard<'_, Engine> {
        self.engine
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
