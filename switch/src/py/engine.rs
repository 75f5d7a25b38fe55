//! Running the engine from Python: loading, sending frames, the clock, what
//! comes out (frames, packet-in, digests, log, trace) and the counters.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use bufferlab_tm::TmConfig;

use super::convert::TraceRow;
use super::errors::{invalid, rt, LoadError};
use super::PyEngine;
use crate::engine::Engine;
use crate::error::RuntimeError;
use crate::trace::TraceLevel;

#[pymethods]
impl PyEngine {
    /// Loads BMv2 JSON text; `pool_bytes` sizes the shared buffer, `seed` the random
    /// generator; `jit` compiles actions and controls to machine code (False: `--no-jit`).
    #[new]
    #[pyo3(signature = (json_text, seed = 0, pool_bytes = bufferlab_tm::DEFAULT_POOL_BYTES, jit = true))]
    fn new(json_text: &str, seed: u64, pool_bytes: u64, jit: bool) -> PyResult<Self> {
        let tm = TmConfig {
            pool_bytes,
            ..TmConfig::default()
        };
        Engine::with_jit(json_text, tm, seed, jit)
            .map(|engine| PyEngine {
                inner: Arc::new(Mutex::new(engine)),
            })
            .map_err(|e| LoadError::new_err(e.0))
    }

    /// What runs as machine code: a dict with `enabled` (False under `--no-jit`), the
    /// numbers of blocks (actions, controls, checksum conditions) `compiled` and `interpreted`, the
    /// `fallbacks` as (block, reason) pairs, `compile_us`, the time compiling took, and
    /// `tables_in_place`, the table applications compiled controls do without the
    /// interpreter, `parser_states`, the parse states the compiled parser runs, and
    /// `deparser_headers`, the headers the compiled deparser emits (0: interpreted).
    fn jit_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (enabled, r) = self.engine(py).jit_report();
        let d = PyDict::new(py);
        d.set_item("enabled", enabled)?;
        d.set_item("compiled", r.compiled)?;
        d.set_item("interpreted", r.interpreted)?;
        d.set_item("fallbacks", r.fallbacks)?;
        d.set_item("compile_us", r.compile_us)?;
        d.set_item("tables_in_place", r.tables_in_place)?;
        d.set_item("parser_states", r.parser_states)?;
        d.set_item("deparser_headers", r.deparser_headers)?;
        Ok(d)
    }

    /// Receives a frame on `port` at `t_ns` (runs everything due up to then first).
    fn send(&self, py: Python<'_>, port: u16, frame: &[u8], t_ns: u64) -> PyResult<()> {
        self.engine(py).send(port, frame, t_ns).map_err(rt)
    }

    /// Processes every event up to `t_ns`.
    fn advance(&self, py: Python<'_>, t_ns: u64) {
        self.engine(py).advance(t_ns)
    }

    /// Runs until nothing is queued or in flight; returns the time reached, ns.
    fn drain(&self, py: Python<'_>) -> u64 {
        self.engine(py).drain()
    }

    /// Replaces the program (JSON text); tables, stateful objects, multicast groups
    /// and clone sessions start empty, ports and buffer settings stay.
    fn set_program(&self, py: Python<'_>, json_text: &str) -> PyResult<()> {
        self.engine(py).set_program(json_text).map_err(|e| match e {
            RuntimeError::InvalidArgument(m) => LoadError::new_err(m),
            other => rt(other),
        })
    }

    /// Earliest time (ns) at which `advance` has work (a transmission or a delivery), or None.
    fn next_event_ns(&self, py: Python<'_>) -> Option<u64> {
        self.engine(py).next_event_ns()
    }

    /// Current virtual time, ns.
    fn now(&self, py: Python<'_>) -> u64 {
        self.engine(py).now()
    }

    /// Receives `count` copies of `frame` on `port` at `t0_ns`, `t0_ns + gap_ns`, ...
    fn send_repeated(
        &self,
        py: Python<'_>,
        port: u16,
        frame: &[u8],
        count: u64,
        t0_ns: u64,
        gap_ns: u64,
    ) -> PyResult<()> {
        self.engine(py)
            .send_repeated(port, frame, count, t0_ns, gap_ns)
            .map_err(rt)
    }

    /// Drops the frames delivered so far without returning them; returns their number.
    fn discard_received(&self, py: Python<'_>) -> usize {
        self.engine(py).discard_received()
    }

    /// Frames delivered since the last call: list of (port, frame, arrival ns).
    fn received<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let outs = self.engine(py).take_received();
        self.outputs(py, outs)
    }

    /// Frames sent to the CPU port since the last call: list of (port, frame, arrival ns).
    fn packet_in<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let outs = self.engine(py).take_packet_in();
        self.outputs(py, outs)
    }

    /// Digests since the last call: list of (learn list name, list id, values, t_ns).
    fn digests(&self, py: Python<'_>) -> Vec<(String, u32, Vec<u128>, u64)> {
        self.engine(py)
            .take_digests()
            .into_iter()
            .map(|d| (d.name, d.list_id, d.values, d.t_ns))
            .collect()
    }

    /// Log lines since the last call (`log_msg`, failed asserts, priority out of range).
    fn log(&self, py: Python<'_>) -> Vec<String> {
        self.engine(py).take_log()
    }

    /// Turns the per-packet trace on at BMv2's level `"debug"` or `"trace"`, or off
    /// (None, or any level above debug: `"info"`, `"warn"`, `"error"`, `"off"`).
    #[pyo3(signature = (level))]
    fn set_trace(&self, py: Python<'_>, level: Option<&str>) -> PyResult<()> {
        let level = match level {
            Some("trace") => Some(TraceLevel::Trace),
            Some("debug") => Some(TraceLevel::Debug),
            None | Some("info" | "warn" | "error" | "off") => None,
            Some(other) => {
                return Err(invalid(format!(
                    "trace level {other:?}: one of trace, debug, info, warn, error, off"
                )))
            }
        };
        self.engine(py).set_trace(level);
        Ok(())
    }

    /// Trace lines since the last call as (t_ns, level letter "T"/"D", packet id, copy,
    /// text), and how many were lost because they were not taken in time.
    fn take_trace(&self, py: Python<'_>) -> (Vec<TraceRow>, u64) {
        let (lines, lost) = self.engine(py).take_trace();
        let lines = lines
            .into_iter()
            .map(|l| (l.t_ns, l.level.letter(), l.packet, l.copy, l.text))
            .collect();
        (lines, lost)
    }

    /// The loaded program's architecture (`v1model`, `tna`, `t2na`) and target
    /// (`bmv2`, `tofino`, `tofino2`).
    fn arch(&self, py: Python<'_>) -> (String, String) {
        let e = self.engine(py);
        let (arch, target) = e.arch();
        (arch.to_string(), target.to_string())
    }

    /// Engine, pipeline and traffic-manager counters as a dict.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.engine(py).stats;
        let x = self.engine(py).exec_stats();
        let t = self.engine(py).tm_stats();
        let d = PyDict::new(py);
        d.set_item("received", s.received)?;
        d.set_item("transmitted", s.transmitted)?;
        d.set_item("dropped_by_program", s.dropped_by_program)?;
        d.set_item("dropped_by_tm", s.dropped_by_tm)?;
        d.set_item(
            "dropped_priority_out_of_range",
            s.dropped_priority_out_of_range,
        )?;
        d.set_item("dropped_by_assert", s.dropped_by_assert)?;
        d.set_item("dropped_pass_limit", s.dropped_pass_limit)?;
        d.set_item("replicated", s.replicated)?;
        d.set_item("generated", s.generated)?;
        d.set_item("cloned", s.cloned)?;
        d.set_item("resubmitted", s.resubmitted)?;
        d.set_item("recirculated", s.recirculated)?;
        d.set_item("pause_frames", s.pause_frames)?;
        d.set_item("pause_frames_ignored", s.pause_frames_ignored)?;
        d.set_item("digests_dropped", s.digests_dropped)?;
        d.set_item("parser_errors", x.parser_errors)?;
        d.set_item("checksum_errors", x.checksum_errors)?;
        d.set_item("assert_failures", x.assert_failures)?;
        d.set_item("pool_used_bytes", t.pool_used_bytes)?;
        d.set_item("max_pool_used_bytes", t.max_pool_used_bytes)?;
        d.set_item("pool_used_cells", t.pool_used_cells)?;
        d.set_item("xoff_sent", t.xoff_sent)?;
        d.set_item("xon_sent", t.xon_sent)?;
        d.set_item("max_pool_used_cells", t.max_pool_used_cells)?;
        Ok(d)
    }
}

impl PyEngine {
    /// Frames as a Python list of (port, frame, arrival ns); their buffers go back to the engine.
    fn outputs<'py>(
        &self,
        py: Python<'py>,
        outs: Vec<crate::engine::Output>,
    ) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for o in &outs {
            list.append((o.port, PyBytes::new(py, &o.frame), o.t_ns))?;
        }
        let mut engine = self.engine(py);
        for o in outs {
            engine.recycle(o.frame);
        }
        Ok(list)
    }
}
