//! Paced traffic generator core, exposed to Python as `bufferlab.traffic._generator`.
//!
//! Conventions (shared with the Python side): frame sizes are Ethernet frames including
//! the 4-byte FCS (RFC 2544), rates are line bit/s counting 20 more bytes per frame
//! (preamble/SFD + inter-frame gap), times are CLOCK_REALTIME ns unless named `mono`.

pub mod clock;
pub use bufferlab_hosts::header;
pub mod netns;
pub mod realtime;
pub mod receiver;
pub mod schedule;
pub mod sender;
pub mod sockopt;

#[cfg(test)]
mod loopback_tests;

use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use receiver::{Receiver, RxLimits, RxReport, StopSignal};
use schedule::{Arrivals, Schedule, Sizes};
use sender::{SendConfig, SendReport};

/// Bytes per packed receive record handed to Python (see `rx_records_bytes`).
pub const RX_RECORD_LEN: usize = 32;
/// Bytes per packed TX timestamp handed to Python (see `tx_stamps_bytes`).
pub const TX_STAMP_LEN: usize = 16;

/// Generator version, so Python can check it loaded the module it was built with.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

fn os_error(err: std::io::Error) -> PyErr {
    PyOSError::new_err(err.to_string())
}

fn parse_ipv4(text: &str, what: &str) -> PyResult<Ipv4Addr> {
    text.parse()
        .map_err(|_| PyValueError::new_err(format!("{what} {text:?} is not an IPv4 address")))
}

/// Records little-endian: tx_ns u64 | rx_ns u64 | seq u32 | flow u16 | size u16 | tos u8 |
/// rx_kernel u8 | 6 pad.
pub fn rx_records_bytes(report: &RxReport) -> Vec<u8> {
    let mut out = Vec::with_capacity(report.records.len() * RX_RECORD_LEN);
    for r in &report.records {
        out.extend_from_slice(&r.tx_ns.to_le_bytes());
        out.extend_from_slice(&r.rx_ns.to_le_bytes());
        out.extend_from_slice(&r.seq.to_le_bytes());
        out.extend_from_slice(&r.flow.to_le_bytes());
        out.extend_from_slice(&r.size.to_le_bytes());
        out.push(r.tos);
        out.push(u8::from(r.rx_kernel));
        out.extend_from_slice(&[0u8; 6]);
    }
    out
}

/// TX stamps little-endian: kernel_ns u64 | seq u32 | 4 pad.
pub fn tx_stamps_bytes(report: &SendReport) -> Vec<u8> {
    let mut out = Vec::with_capacity(report.tx_stamps.len() * TX_STAMP_LEN);
    for s in &report.tx_stamps {
        out.extend_from_slice(&s.kernel_ns.to_le_bytes());
        out.extend_from_slice(&s.seq.to_le_bytes());
        out.extend_from_slice(&[0u8; 4]);
    }
    out
}

/// Send paced UDP frames with bufferlab data headers; returns a dict of figures.
///
/// `frame_sizes` is a list of (bytes incl. FCS, weight); `rate_bps` line bit/s or None for
/// back-to-back; `arrivals` "constant" or "bernoulli" (slots of `link_bps`).
#[pyfunction]
#[pyo3(signature = (
    dst_ip, dst_port, frame_sizes, rate_bps=None, arrivals="constant", link_bps=None,
    burst_frames=1, count=None, duration_s=None, start_realtime_ns=None, tos=0, flow=0,
    first_seq=0, src_ip=None, src_port=0, netns=None, tx_timestamps=false, seed=1, batch=32,
    spin_ns=50_000, realtime_priority=None
))]
#[allow(clippy::too_many_arguments)]
fn send<'py>(
    py: Python<'py>,
    dst_ip: &str,
    dst_port: u16,
    frame_sizes: Vec<(usize, f64)>,
    rate_bps: Option<f64>,
    arrivals: &str,
    link_bps: Option<f64>,
    burst_frames: u64,
    count: Option<u64>,
    duration_s: Option<f64>,
    start_realtime_ns: Option<u64>,
    tos: u8,
    flow: u16,
    first_seq: u32,
    src_ip: Option<&str>,
    src_port: u16,
    netns: Option<String>,
    tx_timestamps: bool,
    seed: u64,
    batch: usize,
    spin_ns: u64,
    realtime_priority: Option<i32>,
) -> PyResult<Bound<'py, PyDict>> {
    let arrivals = match (arrivals, link_bps) {
        ("constant", _) => Arrivals::Constant,
        ("bernoulli", Some(link_bps)) => Arrivals::Bernoulli { link_bps },
        ("bernoulli", None) => {
            return Err(PyValueError::new_err(
                "Bernoulli arrivals need link_bps (the slotted link's line rate, bit/s)",
            ))
        }
        (other, _) => {
            return Err(PyValueError::new_err(format!(
                "arrivals {other:?} is not 'constant' or 'bernoulli'"
            )))
        }
    };
    let sizes = match frame_sizes.as_slice() {
        [] => return Err(PyValueError::new_err("frame_sizes is empty")),
        [(size, _)] => Sizes::Fixed(*size),
        _ => Sizes::Mixed(frame_sizes),
    };
    let schedule = Schedule::new(rate_bps, arrivals, sizes, burst_frames, seed)
        .map_err(PyValueError::new_err)?;
    let duration_ns = match duration_s {
        Some(d) if !(d.is_finite() && d > 0.0) => {
            return Err(PyValueError::new_err(format!(
                "duration {d} s must be a positive number"
            )))
        }
        Some(d) => Some((d * 1e9) as u64),
        None => None,
    };
    let src = match src_ip {
        Some(ip) => Some(SocketAddrV4::new(
            parse_ipv4(ip, "source address")?,
            src_port,
        )),
        None if src_port != 0 => Some(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, src_port)),
        None => None,
    };
    let cfg = SendConfig {
        dst: SocketAddrV4::new(parse_ipv4(dst_ip, "destination address")?, dst_port),
        src,
        tos,
        flow,
        first_seq,
        netns,
        count,
        duration_ns,
        start_realtime_ns,
        tx_timestamps,
        batch,
        spin_ns,
        realtime_priority,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let worker = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || sender::run(&cfg, schedule, &stop))
    };
    if let Err(interrupted) = wait_for(py, &worker) {
        stop.store(true, Ordering::Relaxed);
        // The run stops within one departure; its partial figures go with the interrupt.
        let _ = py.detach(|| worker.join());
        return Err(interrupted);
    }
    let report = py
        .detach(|| worker.join())
        .map_err(|_| PyRuntimeError::new_err("sender thread panicked"))?
        .map_err(os_error)?;
    let out = PyDict::new(py);
    out.set_item("sent_frames", report.sent)?;
    out.set_item("wire_bits", report.wire_bits)?;
    out.set_item("start_realtime_ns", report.start_realtime_ns)?;
    out.set_item("span_ns", report.span_ns)?;
    out.set_item("rate_bps", report.rate_bps)?;
    out.set_item("retries", report.retries)?;
    out.set_item("max_late_ns", report.max_late_ns)?;
    out.set_item("tx_stamps", PyBytes::new(py, &tx_stamps_bytes(&report)))?;
    out.set_item(
        "tx_stamp_ids",
        match report.stamp_ids {
            Some(sender::StampIds::Explicit) => Some("explicit"),
            Some(sender::StampIds::Counter) => Some("counter"),
            None => None,
        },
    )?;
    Ok(out)
}

/// How often a waiting Python caller looks for signals (Ctrl-C) while Rust works.
const SIGNAL_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// Wait for `worker` to finish, releasing the GIL, but return early with Python's error if
/// a signal handler raises (so Ctrl-C works during a long run).
fn wait_for<T>(py: Python<'_>, worker: &JoinHandle<T>) -> PyResult<()> {
    while !worker.is_finished() {
        py.detach(|| std::thread::sleep(SIGNAL_POLL));
        py.check_signals()?;
    }
    Ok(())
}

type RxWorker = JoinHandle<std::io::Result<RxReport>>;

/// A UDP receiver bound at construction and run on a background thread.
#[pyclass(name = "Receiver")]
struct PyReceiver {
    core: Mutex<Option<Arc<Receiver>>>,
    stop: Arc<StopSignal>,
    worker: Mutex<Option<RxWorker>>,
}

impl PyReceiver {
    fn core(&self) -> PyResult<Arc<Receiver>> {
        self.core
            .lock()
            .map_err(|_| PyRuntimeError::new_err("receiver state poisoned"))?
            .clone()
            .ok_or_else(|| PyRuntimeError::new_err("receiver is closed"))
    }

    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        // Poll rather than join at once, so Ctrl-C interrupts a wait; the run keeps going
        // and a later stop() still returns its frames.
        loop {
            let guard = self
                .worker
                .lock()
                .map_err(|_| PyRuntimeError::new_err("receiver state poisoned"))?;
            match guard.as_ref() {
                None => return Err(PyRuntimeError::new_err("receiver is not running")),
                Some(worker) if worker.is_finished() => break,
                Some(_) => {}
            }
            drop(guard);
            py.detach(|| std::thread::sleep(SIGNAL_POLL));
            py.check_signals()?;
        }
        let worker = self
            .worker
            .lock()
            .map_err(|_| PyRuntimeError::new_err("receiver state poisoned"))?
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("receiver is not running"))?;
        let report = py
            .detach(|| worker.join())
            .map_err(|_| PyRuntimeError::new_err("receiver thread panicked"))?
            .map_err(os_error)?;
        let out = PyDict::new(py);
        out.set_item("records", PyBytes::new(py, &rx_records_bytes(&report)))?;
        out.set_item("foreign_frames", report.foreign)?;
        out.set_item("truncated_frames", report.truncated)?;
        out.set_item("no_kernel_timestamp", report.no_kernel_timestamp)?;
        Ok(out)
    }
}

#[pymethods]
impl PyReceiver {
    /// Bind UDP `port` (0 = any) on `bind_ip` inside `netns` (name or /proc/<pid>/ns/net).
    #[new]
    #[pyo3(signature = (port, netns=None, bind_ip="0.0.0.0", rcvbuf_bytes=64 << 20, batch=64))]
    fn new(
        port: u16,
        netns: Option<&str>,
        bind_ip: &str,
        rcvbuf_bytes: usize,
        batch: usize,
    ) -> PyResult<Self> {
        let addr = SocketAddrV4::new(parse_ipv4(bind_ip, "bind address")?, port);
        let core = Receiver::open(netns, addr, rcvbuf_bytes, batch).map_err(os_error)?;
        Ok(PyReceiver {
            core: Mutex::new(Some(Arc::new(core))),
            stop: Arc::new(StopSignal::new()),
            worker: Mutex::new(None),
        })
    }

    /// The bound UDP port.
    #[getter]
    fn port(&self) -> PyResult<u16> {
        self.core()?.local_port().map_err(os_error)
    }

    /// Start receiving on a background thread until stop(), or a limit if given.
    #[pyo3(signature = (max_frames=None, idle_timeout_s=None, duration_s=None))]
    fn start(
        &self,
        max_frames: Option<u64>,
        idle_timeout_s: Option<f64>,
        duration_s: Option<f64>,
    ) -> PyResult<()> {
        let mut worker = self
            .worker
            .lock()
            .map_err(|_| PyRuntimeError::new_err("receiver state poisoned"))?;
        if worker.is_some() {
            return Err(PyRuntimeError::new_err("receiver is already running"));
        }
        let limits = RxLimits {
            max_frames,
            idle_timeout_ns: idle_timeout_s.map(|s| (s * 1e9) as u64),
            deadline_mono_ns: duration_s.map(|s| clock::monotonic_ns() + (s * 1e9) as u64),
        };
        self.stop.clear();
        let core = self.core()?;
        let stop = Arc::clone(&self.stop);
        *worker = Some(std::thread::spawn(move || core.run(&stop, limits)));
        Ok(())
    }

    /// Stop receiving now and return {records (packed bytes), foreign/truncated counts}.
    fn stop<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.stop.request();
        self.finish(py)
    }

    /// Wait until a limit given to start() ends the run; same result as stop().
    fn join<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.finish(py)
    }

    /// Stop a run in progress (its frames are discarded) and close the socket now.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.stop.request();
        let worker = self
            .worker
            .lock()
            .map_err(|_| PyRuntimeError::new_err("receiver state poisoned"))?
            .take();
        if let Some(worker) = worker {
            // The run's outcome no longer matters: the caller is discarding it.
            let _ = py.detach(|| worker.join());
        }
        self.core
            .lock()
            .map_err(|_| PyRuntimeError::new_err("receiver state poisoned"))?
            .take();
        Ok(())
    }
}

/// The `bufferlab.traffic._generator` Python module.
#[pymodule]
fn _generator(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(send, m)?)?;
    m.add_class::<PyReceiver>()?;
    m.add("RX_RECORD_LEN", RX_RECORD_LEN)?;
    m.add("TX_STAMP_LEN", TX_STAMP_LEN)?;
    m.add("MAGIC", header::MAGIC)?;
    Ok(())
}
