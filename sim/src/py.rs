//! Python bindings (`bufferlab.sim._sim`): the simulator, the reaction context a
//! Python reaction model receives, and the engine's class (so that a simulated
//! switch is an `Engine` P4Runtime can program).

use std::net::Ipv4Addr;
use std::sync::Mutex;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use bufferlab_engine::py::PyEngine;
use bufferlab_hosts::bcn::{FeatureOptions, RpConfig, ETHERTYPE_BCN};
use bufferlab_hosts::source::{OnOff, Pattern, SizeMix, SourceSpec};

use crate::host::{CapturedFrame, WhenFull};
use crate::link::{LinkModel, FRAME_KINDS};
use crate::network::{End, ReactionSpec, SimError, Simulator, SourceConfig};
use crate::reaction::{Command, HookContext, HookError, ReactionHook};

mod tcp;

fn to_py(err: SimError) -> PyErr {
    match err {
        SimError::Config(m) => PyValueError::new_err(m),
        SimError::Hook { source, error } => match error.downcast::<PyErr>() {
            Ok(py_err) => *py_err,
            Err(other) => {
                PyRuntimeError::new_err(format!("reaction hook of source {source}: {other}"))
            }
        },
        SimError::Stopped(error) => match error.downcast::<PyErr>() {
            Ok(py_err) => *py_err,
            Err(other) => PyRuntimeError::new_err(other.to_string()),
        },
    }
}

fn parse_mac(text: &str) -> PyResult<[u8; 6]> {
    let parts: Vec<&str> = text.split(':').collect();
    let mut mac = [0u8; 6];
    if parts.len() != 6 {
        return Err(PyValueError::new_err(format!(
            "{text:?} is not a MAC address"
        )));
    }
    for (byte, part) in mac.iter_mut().zip(parts) {
        *byte = u8::from_str_radix(part, 16)
            .map_err(|_| PyValueError::new_err(format!("{text:?} is not a MAC address")))?;
    }
    Ok(mac)
}

fn parse_ip(text: &str) -> PyResult<[u8; 4]> {
    let bare = text.split('/').next().unwrap_or(text);
    bare.parse::<Ipv4Addr>()
        .map(|ip| ip.octets())
        .map_err(|_| PyValueError::new_err(format!("{text:?} is not an IPv4 address")))
}

fn end(spec: (String, Option<u16>)) -> End {
    End {
        node: spec.0,
        port: spec.1,
    }
}

/// What a Python reaction model sees of its source and the commands it gives.
/// Valid only during the call it was passed to.
#[pyclass(name = "ReactionContext", module = "bufferlab.sim._sim")]
pub struct PyReactionContext {
    inner: Mutex<Option<HookContext>>,
}

impl PyReactionContext {
    fn with<T>(&self, f: impl FnOnce(&mut HookContext) -> T) -> PyResult<T> {
        let mut guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        match guard.as_mut() {
            Some(ctx) => Ok(f(ctx)),
            None => Err(PyRuntimeError::new_err(
                "a ReactionContext is valid only during the call it was passed to",
            )),
        }
    }
}

#[pymethods]
impl PyReactionContext {
    /// Now, ns.
    #[getter]
    fn now_ns(&self) -> PyResult<u64> {
        self.with(|c| c.now_ns)
    }

    /// The source's pacing rate, bit/s (None: unlimited).
    #[getter]
    fn rate_bps(&self) -> PyResult<Option<u64>> {
        self.with(|c| c.rate_bps)
    }

    /// The host link's rate, bit/s.
    #[getter]
    fn line_rate_bps(&self) -> PyResult<u64> {
        self.with(|c| c.line_rate_bps)
    }

    /// Bytes in the source's rate-limiter queue.
    #[getter]
    fn queue_bytes(&self) -> PyResult<u64> {
        self.with(|c| c.queue_bytes)
    }

    /// The RLT cpid the source's frames carry (None: untagged).
    #[getter]
    fn tag(&self) -> PyResult<Option<u64>> {
        self.with(|c| c.tag)
    }

    /// The source's name.
    #[getter]
    fn source(&self) -> PyResult<String> {
        self.with(|c| c.source.clone())
    }

    /// Paces the source at `rate_bps` (None removes the limiter).
    fn set_rate_bps(&self, rate_bps: Option<f64>) -> PyResult<()> {
        let rate = match rate_bps {
            None => None,
            Some(r) if r >= 1.0 && r.is_finite() => Some(r.round() as u64),
            Some(r) => {
                return Err(PyValueError::new_err(format!(
                    "rate_bps {r} must be at least 1 bit/s"
                )))
            }
        };
        self.with(|c| {
            c.rate_bps = rate;
            c.commands.push(Command::SetRate(rate));
        })
    }

    /// Tags the source's frames with RLT(cpid) from now on (None stops tagging).
    fn set_tag(&self, cpid: Option<u64>) -> PyResult<()> {
        self.with(|c| {
            c.tag = cpid;
            c.commands.push(Command::SetTag(cpid));
        })
    }

    /// The source sends nothing before `until_ns`.
    fn hold_until(&self, until_ns: u64) -> PyResult<()> {
        self.with(|c| c.commands.push(Command::HoldUntil(until_ns)))
    }

    /// Calls the model's `on_timer(ctx, token)` at `at_ns` (now at the earliest).
    #[pyo3(signature = (at_ns, token = 0))]
    fn set_timer(&self, at_ns: u64, token: u64) -> PyResult<()> {
        self.with(|c| c.commands.push(Command::Timer { at_ns, token }))
    }
}

/// A reaction model written in Python.
struct PyHook {
    model: Py<PyAny>,
    ethertypes: Vec<u16>,
}

impl PyHook {
    fn call(
        &self,
        ctx: &mut HookContext,
        method: &str,
        arg: impl FnOnce(Python<'_>) -> Py<PyAny>,
    ) -> Result<(), HookError> {
        Python::attach(|py| {
            let shared = Py::new(
                py,
                PyReactionContext {
                    inner: Mutex::new(Some(ctx.clone())),
                },
            )?;
            let result = self
                .model
                .call_method1(py, method, (shared.clone_ref(py), arg(py)));
            let done = shared
                .borrow(py)
                .inner
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take();
            if let Some(done) = done {
                *ctx = done;
            }
            result.map(|_| ())
        })
        .map_err(|e: PyErr| Box::new(e) as HookError)
    }
}

impl ReactionHook for PyHook {
    fn ethertypes(&self) -> &[u16] {
        &self.ethertypes
    }

    fn on_feedback(&mut self, ctx: &mut HookContext, frame: &[u8]) -> Result<(), HookError> {
        self.call(ctx, "on_feedback", |py| {
            PyBytes::new(py, frame).into_any().unbind()
        })
    }

    fn on_timer(&mut self, ctx: &mut HookContext, token: u64) -> Result<(), HookError> {
        self.call(ctx, "on_timer", |py| {
            token
                .into_pyobject(py)
                .map(|t| t.into_any().unbind())
                .unwrap_or_else(|_| py.None())
        })
    }
}

/// The network simulator (see `bufferlab.sim`).
#[pyclass(name = "Simulator", module = "bufferlab.sim._sim")]
pub struct PySimulator {
    sim: Simulator,
}

#[pymethods]
impl PySimulator {
    /// An empty network; `seed` seeds every source's random stream.
    #[new]
    #[pyo3(signature = (seed = 0))]
    fn new(seed: u64) -> Self {
        PySimulator {
            sim: Simulator::new(seed),
        }
    }

    /// Adds a switch running `engine` (a `bufferlab.sim` switch engine); frames enter its
    /// pipeline `latency_ns` after their last bit arrived.
    #[pyo3(signature = (name, engine, latency_ns = 0))]
    fn add_switch(
        &mut self,
        name: &str,
        engine: PyRef<'_, PyEngine>,
        latency_ns: u64,
    ) -> PyResult<u32> {
        self.sim
            .add_switch(name, engine.shared(), latency_ns)
            .map_err(to_py)
    }

    /// Adds a host with a MAC (`08:00:00:00:01:01`) and an IPv4 address (`10.0.1.1`, `/24` allowed).
    fn add_host(&mut self, name: &str, mac: &str, ip: &str) -> PyResult<u32> {
        self.sim
            .add_host(name, parse_mac(mac)?, parse_ip(ip)?)
            .map_err(to_py)
    }

    /// Links two ends, `(node, port)` for a switch and `(node, None)` for a host.
    #[pyo3(signature = (a, b, rate_bps, delay_ns = 0, wire_overhead_bytes = crate::link::ETHERNET_WIRE_OVERHEAD_BYTES, honour_pause = true))]
    fn connect(
        &mut self,
        a: (String, Option<u16>),
        b: (String, Option<u16>),
        rate_bps: u64,
        delay_ns: u64,
        wire_overhead_bytes: u32,
        honour_pause: bool,
    ) -> PyResult<()> {
        let model = LinkModel {
            rate_bps,
            delay_ns,
            wire_overhead_bytes,
            honour_pause,
        };
        self.sim.connect(&end(a), &end(b), model).map_err(to_py)
    }

    /// Adds a source; returns its index (its frames' flow id). See `bufferlab.sim.Source`.
    #[pyo3(signature = (name, host, destination, *, pattern, sizes, rate_bps = None, load = None,
                        line_rate_bps = None, on_ns = None, off_ns = None, exponential = false,
                        start_ns = 0, stop_ns = None, dscp = 0, priority = 0, udp_ports = (5000, 5000),
                        rlq_bytes = 150_000, when_full = "drop", reaction = None, gi = 0.53,
                        gd_per_page = 2.6e-4, ru_bps = 1e6, fb_max_pages = 1875, min_rate_bps = 1e6,
                        max_decrease = None, max_increase = None, drift_interval_ns = None,
                        drift_step_bps = None, severe = None, backoff_max_ns = None,
                        restart_rate_bps = None, fb_bits = None, fb_range_pages = None,
                        positive_from = None, initial_rate = None, rate_window_ns = None,
                        response_ns = 0, hook = None))]
    #[allow(clippy::too_many_arguments)]
    fn add_source(
        &mut self,
        py: Python<'_>,
        name: String,
        host: String,
        destination: String,
        pattern: &str,
        sizes: Vec<(u32, u32)>,
        rate_bps: Option<u64>,
        load: Option<f64>,
        line_rate_bps: Option<u64>,
        on_ns: Option<u64>,
        off_ns: Option<u64>,
        exponential: bool,
        start_ns: u64,
        stop_ns: Option<u64>,
        dscp: u8,
        priority: u8,
        udp_ports: (u16, u16),
        rlq_bytes: u64,
        when_full: &str,
        reaction: Option<&str>,
        gi: f64,
        gd_per_page: f64,
        ru_bps: f64,
        fb_max_pages: i32,
        min_rate_bps: f64,
        max_decrease: Option<f64>,
        max_increase: Option<f64>,
        drift_interval_ns: Option<u64>,
        drift_step_bps: Option<f64>,
        severe: Option<String>,
        backoff_max_ns: Option<u64>,
        restart_rate_bps: Option<f64>,
        fb_bits: Option<u8>,
        fb_range_pages: Option<i32>,
        positive_from: Option<String>,
        initial_rate: Option<String>,
        rate_window_ns: Option<u64>,
        response_ns: u64,
        hook: Option<Py<PyAny>>,
    ) -> PyResult<u32> {
        let what = format!("source {name}");
        let bad = |m: String| PyValueError::new_err(format!("{what}: {m}"));
        // Everything is checked before the source exists, so a refused one leaves nothing.
        if !self.sim.hosts.iter().any(|h| h.name == host) {
            return Err(PyValueError::new_err(format!(
                "{host}: no such host or switch"
            )));
        }
        let py_hook: Option<Box<dyn ReactionHook>> = match &hook {
            None => None,
            Some(model) => {
                let ethertypes = match model.getattr(py, "ethertypes") {
                    Ok(value) => value
                        .extract::<Vec<u16>>(py)
                        .map_err(|_| bad("hook.ethertypes must be a sequence of ints".into()))?,
                    Err(_) => vec![ETHERTYPE_BCN],
                };
                for method in ["on_feedback", "on_timer"] {
                    if model.getattr(py, method).is_err() {
                        return Err(bad(format!("hook has no {method}(ctx, ...) method")));
                    }
                }
                Some(Box::new(PyHook {
                    model: model.clone_ref(py),
                    ethertypes,
                }))
            }
        };
        let host_rate = self
            .sim
            .hosts
            .iter()
            .find(|h| h.name == host)
            .and_then(|h| h.nic.as_ref())
            .map(|n| n.model.rate_bps);
        let pattern = match pattern {
            "constant" => Pattern::Constant {
                rate_bps: rate_bps.ok_or_else(|| bad("a constant source needs rate_bps".into()))?,
            },
            "bernoulli" => Pattern::Bernoulli {
                load: load.ok_or_else(|| bad("a bernoulli source needs load".into()))?,
                line_rate_bps: line_rate_bps
                    .or(host_rate)
                    .ok_or_else(|| bad("line_rate_bps unknown: link the host first".into()))?,
            },
            other => {
                return Err(bad(format!(
                    "pattern {other:?}: use 'constant' or 'bernoulli'"
                )))
            }
        };
        let on_off = match (on_ns, off_ns) {
            (None, None) => None,
            (Some(on_ns), Some(off_ns)) => Some(OnOff {
                on_ns,
                off_ns,
                exponential,
            }),
            _ => return Err(bad("on_ns and off_ns go together".into())),
        };
        let when_full = match when_full {
            "drop" => WhenFull::Drop,
            "backpressure" => WhenFull::BackPressure,
            other => {
                return Err(bad(format!(
                    "when_full {other:?}: use 'drop' or 'backpressure'"
                )))
            }
        };
        let reaction = match (reaction, &hook) {
            (None, _) | (Some("none"), _) => ReactionSpec::None,
            (Some("bcn"), None) => {
                let options = FeatureOptions {
                    max_decrease,
                    max_increase,
                    drift_interval_ns,
                    drift_step_bps,
                    severe,
                    backoff_max_ns,
                    restart_rate_bps,
                    fb_bits,
                    fb_range_pages,
                    positive_from,
                    initial_rate,
                    rate_window_ns,
                };
                ReactionSpec::Bcn(RpConfig {
                    line_rate_bps: 0.0,
                    min_rate_bps,
                    gd_per_page,
                    gi,
                    ru_bps,
                    fb_max_pages,
                    features: options.features(fb_max_pages).map_err(bad)?,
                })
            }
            (Some("bcn"), Some(_)) => {
                return Err(bad("reaction 'bcn' and a hook exclude each other".into()))
            }
            (Some(other), _) => {
                return Err(bad(format!(
                    "reaction {other:?}: use None or 'bcn' (or pass a hook)"
                )))
            }
        };
        let spec = SourceSpec {
            pattern,
            on_off,
            sizes: SizeMix::new(&sizes).map_err(bad)?,
            wire_overhead_bytes: 0,
            start_ns,
            stop_ns,
        };
        let index = self
            .sim
            .add_source(SourceConfig {
                name,
                host,
                destination,
                spec,
                dscp,
                priority,
                udp_ports,
                rlq_bytes,
                when_full,
                reaction,
                response_ns,
            })
            .map_err(to_py)?;
        if let Some(hook) = py_hook {
            self.sim.set_hook(index, hook).map_err(to_py)?;
        }
        Ok(index)
    }

    /// Samples every time series each `interval_ns` of virtual time.
    fn record_every(&mut self, interval_ns: u64) -> PyResult<()> {
        self.sim.record_every(interval_ns).map_err(to_py)
    }

    /// Runs up to `until_ns`; `progress(now_ns)` is called every 65,536 events.
    #[pyo3(signature = (until_ns, progress = None))]
    fn run(&mut self, py: Python<'_>, until_ns: u64, progress: Option<Py<PyAny>>) -> PyResult<()> {
        let mut tick = |now: u64| -> Result<(), HookError> {
            py.check_signals().map_err(|e| Box::new(e) as HookError)?;
            if let Some(p) = &progress {
                p.call1(py, (now,)).map_err(|e| Box::new(e) as HookError)?;
            }
            Ok(())
        };
        self.sim.run_until(until_ns, &mut tick).map_err(to_py)
    }

    /// Virtual time, ns.
    #[getter]
    fn now_ns(&self) -> u64 {
        self.sim.now()
    }

    /// `(times_ns, {name: values})` of the recorded series.
    fn series<'py>(&self, py: Python<'py>) -> PyResult<(Vec<u64>, Bound<'py, PyDict>)> {
        let d = PyDict::new(py);
        for s in &self.sim.recorder.series {
            d.set_item(&s.name, PyList::new(py, &s.values)?)?;
        }
        Ok((self.sim.recorder.times_ns.clone(), d))
    }

    /// Counters of every source, by name.
    fn source_counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for s in &self.sim.sources {
            let c = s.counters;
            let d = PyDict::new(py);
            d.set_item("host", &self.sim.hosts[s.host as usize].name)?;
            d.set_item("flow", s.flow)?;
            for (k, v) in [
                ("offered_frames", c.offered_frames),
                ("offered_bytes", c.offered_bytes),
                ("accepted_frames", c.accepted_frames),
                ("accepted_bytes", c.accepted_bytes),
                ("dropped_frames", c.dropped_frames),
                ("dropped_bytes", c.dropped_bytes),
                ("held", c.held),
                ("sent_frames", c.sent_frames),
                ("sent_bytes", c.sent_bytes),
                ("feedback_frames", c.feedback_frames),
                ("feedback_applied", c.feedback_applied),
                ("rlq_frames", s.rlq.len() as u64),
                ("rlq_bytes", s.rlq.occupancy_bytes()),
            ] {
                d.set_item(k, v)?;
            }
            let line = self.sim.hosts[s.host as usize]
                .nic
                .as_ref()
                .map_or(0, |n| n.model.rate_bps);
            d.set_item("rate_bps", s.regulated_rate_bps(line))?;
            d.set_item("tag", s.tag)?;
            out.set_item(&s.name, d)?;
        }
        Ok(out)
    }

    /// What each flow's destination received, by source name.
    fn flow_counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for s in &self.sim.sources {
            let d = PyDict::new(py);
            let mut total = bufferlab_hosts::sink::FlowAccount::default();
            let mut first = true;
            for h in &self.sim.hosts {
                if let Some(a) = h.flows.get(usize::from(s.flow)).filter(|a| a.frames > 0) {
                    if first {
                        total = *a;
                        first = false;
                    } else {
                        total.frames += a.frames;
                        total.bytes += a.bytes;
                    }
                }
            }
            for (k, v) in [
                ("frames", total.frames),
                ("bytes", total.bytes),
                ("gaps", total.gaps),
                ("reordered", total.reordered),
                ("first_rx_ns", total.first_rx_ns),
                ("last_rx_ns", total.last_rx_ns),
                ("latency_min_ns", total.latency_min_ns),
                ("latency_max_ns", total.latency_max_ns),
            ] {
                d.set_item(k, v)?;
            }
            d.set_item("latency_mean_ns", total.latency_mean_ns())?;
            out.set_item(&s.name, d)?;
        }
        Ok(out)
    }

    /// Frames each host received, by kind, by host name.
    fn host_counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for h in &self.sim.hosts {
            let c = h.counters;
            let d = PyDict::new(py);
            for (k, v) in [
                ("data_frames", c.data_frames),
                ("bcn_frames", c.bcn_frames),
                ("pause_frames", c.pause_frames),
                ("xon_frames", c.xon_frames),
                ("other_frames", c.other_frames),
            ] {
                d.set_item(k, v)?;
            }
            if let Some(nic) = &h.nic {
                d.set_item("pauses_honoured", nic.pause.pauses())?;
            }
            out.set_item(&h.name, d)?;
        }
        Ok(out)
    }

    /// What arrived over each link direction: `[{from, to, frames: {kind: n}, bytes: {kind: n}}]`.
    fn link_counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        const KINDS: [&str; FRAME_KINDS] = ["ipv4", "bcn", "mac_control", "other"];
        let out = PyList::empty(py);
        for l in &self.sim.links {
            let d = PyDict::new(py);
            d.set_item("from", &l.from)?;
            d.set_item("to", &l.to)?;
            d.set_item("rate_bps", l.model.rate_bps)?;
            let frames = PyDict::new(py);
            let bytes = PyDict::new(py);
            for (k, name) in KINDS.iter().enumerate() {
                frames.set_item(name, l.frames[k])?;
                bytes.set_item(name, l.bytes[k])?;
            }
            d.set_item("frames", frames)?;
            d.set_item("bytes", bytes)?;
            out.append(d)?;
        }
        Ok(out)
    }

    /// Frames each switch sent out of ports with no link, by switch name.
    fn unconnected_frames(&self) -> Vec<(String, u64)> {
        self.sim
            .switches
            .iter()
            .map(|s| (s.name.clone(), s.unconnected_frames))
            .collect()
    }

    /// Makes host `host` record every data frame it receives from now on.
    fn capture(&mut self, host: &str) -> PyResult<()> {
        self.sim.capture(host).map_err(to_py)
    }

    /// `host`'s captured frames as packed little-endian records of 24 bytes (flow u32,
    /// seq u32, tx_ns u64, rx_ns u64), in arrival order.
    fn captured<'py>(&self, py: Python<'py>, host: &str) -> PyResult<Bound<'py, PyBytes>> {
        let frames = self.sim.captured(host).map_err(to_py)?;
        // Written in place: a capture can hold millions of frames.
        PyBytes::new_with(py, frames.len() * CapturedFrame::RECORD_BYTES, |out| {
            let (records, _) = out.as_chunks_mut::<{ CapturedFrame::RECORD_BYTES }>();
            for (f, record) in frames.iter().zip(records) {
                f.write_le(record);
            }
            Ok(())
        })
    }

    /// Events run, frames handed to switches (frame-hops), frames in flight.
    fn run_stats(&self) -> (u64, u64, usize) {
        (
            self.sim.events_run,
            self.sim.switch_arrivals,
            self.sim.frames_in_flight(),
        )
    }
}

/// The `bufferlab.sim._sim` Python module.
#[pymodule]
fn _sim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    bufferlab_engine::py::register(m)?;
    m.add_class::<PySimulator>()?;
    m.add_class::<PyReactionContext>()?;
    tcp::register(m)?;
    Ok(())
}
