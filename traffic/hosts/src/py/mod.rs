//! Python bindings (`bufferlab.traffic._hosts`): the host models the live agents in
//! `bufferlab.traffic.agents` run, the same code `bufferlab-sim` runs in virtual time.
//!
//! Times are ns, rates bit/s, sizes bytes, as in the Rust models. An argument out of
//! its type's range or refused by a model is a `ValueError` whose message names it.

use std::collections::BTreeMap;

use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyFrozenSet, PyTuple};
use pyo3::{PyTraverseError, PyVisit};

use crate::pause::{self, PauseEvent, PauseTimer, PfcTimers, PFC_CLASSES};
use crate::rlq::RateLimiterQueue;
use crate::wire;

mod bcn;

use bcn::{parse_bcn, PyBcnFeedback, PyRateChange, PyReactionPoint, PyRpConfig};

/// A Python int of any size, saturated to i128: PyO3's own conversion to a narrower
/// type raises OverflowError without the argument's name, so arguments arrive as this
/// and `IntArg::from_arg` range-checks them with a message that names them.
#[derive(Debug, Clone, Copy)]
struct AnyInt(i128);

impl<'a, 'py> FromPyObject<'a, 'py> for AnyInt {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        match obj.extract::<i128>() {
            Ok(value) => Ok(AnyInt(value)),
            Err(err) if err.is_instance_of::<PyOverflowError>(obj.py()) => {
                Ok(AnyInt(if obj.lt(0)? { i128::MIN } else { i128::MAX }))
            }
            Err(err) => Err(err),
        }
    }
}

/// Integer types an `AnyInt` argument is narrowed to.
trait IntArg: TryFrom<i128> {
    const LO: i128;
    const HI: i128;

    /// The argument `name` as this type, or a ValueError naming it and the range.
    fn from_arg(value: AnyInt, name: &str) -> PyResult<Self> {
        Self::try_from(value.0).map_err(|_| {
            let got = match value.0 {
                i128::MAX => "2^127 - 1 or more".to_string(),
                i128::MIN => "-2^127 or less".to_string(),
                v => v.to_string(),
            };
            PyValueError::new_err(format!(
                "{name} must be in {}..={}, got {got}",
                Self::LO,
                Self::HI
            ))
        })
    }
}

macro_rules! int_arg {
    ($($t:ty),*) => {
        $(impl IntArg for $t {
            const LO: i128 = <$t>::MIN as i128;
            const HI: i128 = <$t>::MAX as i128;
        })*
    };
}
int_arg!(u8, u16, u32, u64, usize, i16, i32);

/// A positive u64 argument (a rate), or a ValueError naming it.
fn positive(value: AnyInt, name: &str) -> PyResult<u64> {
    match u64::from_arg(value, name)? {
        0 => Err(PyValueError::new_err(format!(
            "{name} must be positive, got 0"
        ))),
        v => Ok(v),
    }
}

/// Eight pause times, one per PFC class, from a Python sequence.
fn pfc_quanta(values: Vec<AnyInt>) -> PyResult<[u16; PFC_CLASSES]> {
    if values.len() != PFC_CLASSES {
        return Err(PyValueError::new_err(format!(
            "quanta must hold {PFC_CLASSES} times (one per priority), got {}",
            values.len()
        )));
    }
    let mut out = [0u16; PFC_CLASSES];
    for (slot, value) in out.iter_mut().zip(values) {
        *slot = u16::from_arg(value, "quanta")?;
    }
    Ok(out)
}

fn model_error(message: String) -> PyErr {
    PyValueError::new_err(message)
}

/// Rate-limiter queue: a bounded FIFO of Python objects paced at an optional rate.
///
/// A frame that finds the queue idle may leave at once; each following one a wire
/// time (its bytes plus `overhead_bytes`) at the rate after the previous one.
#[pyclass(
    name = "RateLimiterQueue",
    module = "bufferlab.traffic._hosts",
    generic
)]
struct PyRateLimiterQueue {
    inner: RateLimiterQueue<Py<PyAny>>,
}

#[pymethods]
impl PyRateLimiterQueue {
    /// An empty queue of `capacity_bytes`; `rate_bps` None paces nothing.
    #[new]
    #[pyo3(
        signature = (capacity_bytes, rate_bps = None, overhead_bytes = AnyInt(0)),
        text_signature = "(capacity_bytes, rate_bps=None, overhead_bytes=0)"
    )]
    fn new(
        capacity_bytes: AnyInt,
        rate_bps: Option<AnyInt>,
        overhead_bytes: AnyInt,
    ) -> PyResult<Self> {
        let rate = rate_bps.map(|r| positive(r, "rate_bps")).transpose()?;
        let inner = RateLimiterQueue::new(
            u64::from_arg(capacity_bytes, "capacity_bytes")?,
            rate,
            u32::from_arg(overhead_bytes, "overhead_bytes")?,
        )
        .map_err(model_error)?;
        Ok(PyRateLimiterQueue { inner })
    }

    /// Enqueues `item` of `frame_bytes`; False (and counted) when it does not fit now.
    /// Pass `now_ns`, the arrival time, when taking items with `release`: a frame that
    /// finds the queue idle then starts a new paced run instead of leaving at a past time.
    #[pyo3(signature = (item, frame_bytes, now_ns = None))]
    fn offer(
        &mut self,
        item: Py<PyAny>,
        frame_bytes: AnyInt,
        now_ns: Option<AnyInt>,
    ) -> PyResult<bool> {
        let bytes = u32::from_arg(frame_bytes, "frame_bytes")?;
        if !self.inner.can_hold(bytes) {
            return Err(PyValueError::new_err(format!(
                "frame_bytes {bytes}: the frame never fits a {}-byte RLQ",
                self.inner.capacity_bytes()
            )));
        }
        let offered = match now_ns {
            Some(now) => self
                .inner
                .offer_at(u64::from_arg(now, "now_ns")?, item, bytes),
            None => self.inner.offer(item, bytes),
        };
        Ok(offered.is_ok())
    }

    /// The head `(item, frame_bytes)` if it may leave at `now_ns`, else None.
    fn pop(&mut self, now_ns: AnyInt) -> PyResult<Option<(Py<PyAny>, u32)>> {
        Ok(self.inner.pop(u64::from_arg(now_ns, "now_ns")?))
    }

    /// Every item that may leave by `now_ns`, in order (each at its paced time).
    fn release(&mut self, now_ns: AnyInt) -> PyResult<Vec<Py<PyAny>>> {
        Ok(self.inner.release(u64::from_arg(now_ns, "now_ns")?))
    }

    /// The head item if it may leave by `now_ns` (taken at its paced time), else None.
    fn release_one(&mut self, now_ns: AnyInt) -> PyResult<Option<Py<PyAny>>> {
        Ok(self.inner.release_one(u64::from_arg(now_ns, "now_ns")?))
    }

    /// When the head may leave, ns (None when empty).
    fn head_ready_ns(&self) -> Option<u64> {
        self.inner.head_ready_ns()
    }

    /// Same as `head_ready_ns` (the name the live agents' queue has always had).
    fn next_release_ns(&self) -> Option<u64> {
        self.inner.head_ready_ns()
    }

    /// Paces at `rate_bps` from `now_ns` (None: unpaced); the wait owed is rescaled.
    fn set_rate(&mut self, now_ns: AnyInt, rate_bps: Option<AnyInt>) -> PyResult<()> {
        let now = u64::from_arg(now_ns, "now_ns")?;
        let rate = rate_bps.map(|r| positive(r, "rate_bps")).transpose()?;
        self.inner.set_rate(now, rate).map_err(model_error)
    }

    /// Nothing leaves before `resume_ns` (PAUSE); a later call replaces it.
    fn hold_until(&mut self, resume_ns: AnyInt) -> PyResult<()> {
        self.inner
            .hold_until(u64::from_arg(resume_ns, "resume_ns")?);
        Ok(())
    }

    /// The time before which nothing leaves, ns.
    #[getter]
    fn held_until_ns(&self) -> u64 {
        self.inner.held_until_ns()
    }

    /// Bytes queued.
    #[getter]
    fn occupancy_bytes(&self) -> u64 {
        self.inner.occupancy_bytes()
    }

    /// Capacity, bytes.
    #[getter]
    fn capacity_bytes(&self) -> u64 {
        self.inner.capacity_bytes()
    }

    /// The pacing rate, bit/s (None: unpaced).
    #[getter]
    fn rate_bps(&self) -> Option<u64> {
        self.inner.rate_bps()
    }

    /// Frames refused because they did not fit.
    #[getter]
    fn refused_frames(&self) -> u64 {
        self.inner.refused_frames()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "RateLimiterQueue(frames={}, occupancy_bytes={}, capacity_bytes={}, rate_bps={})",
            self.inner.len(),
            self.inner.occupancy_bytes(),
            self.inner.capacity_bytes(),
            self.inner
                .rate_bps()
                .map_or("None".to_string(), |r| r.to_string())
        )
    }

    // Queued items may refer back to the queue; the collector must see them to free such cycles.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        for (item, _) in self.inner.iter() {
            visit.call(item)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.inner.drain_all().for_each(drop);
    }
}

/// A MAC control frame: 802.3x PAUSE (its time in `quanta[0]`) or 802.1Qbb PFC.
#[pyclass(name = "PauseEvent", module = "bufferlab.traffic._hosts", frozen, eq)]
#[derive(Debug, Clone, PartialEq)]
struct PyPauseEvent {
    inner: PauseEvent,
}

#[pymethods]
impl PyPauseEvent {
    /// An event as `parse_mac_control` would read it; `quanta` holds 8 times.
    #[new]
    fn new(opcode: AnyInt, class_enable: AnyInt, quanta: Vec<AnyInt>) -> PyResult<Self> {
        Ok(PyPauseEvent {
            inner: PauseEvent {
                opcode: u16::from_arg(opcode, "opcode")?,
                class_enable: u8::from_arg(class_enable, "class_enable")?,
                quanta: pfc_quanta(quanta)?,
            },
        })
    }

    /// The MAC control opcode: 1 (PAUSE) or 0x0101 (PFC).
    #[getter]
    fn opcode(&self) -> u16 {
        self.inner.opcode
    }

    /// PFC class-enable vector, bit i for priority i (0 for PAUSE).
    #[getter]
    fn class_enable(&self) -> u8 {
        self.inner.class_enable
    }

    /// The 8 pause times in quanta (PAUSE: the one time, then zeros).
    #[getter]
    fn quanta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.quanta)
    }

    /// True for a PFC frame, False for an 802.3x PAUSE.
    #[getter]
    fn is_pfc(&self) -> bool {
        self.inner.is_pfc()
    }

    fn __repr__(&self) -> String {
        format!(
            "PauseEvent(opcode={:#06x}, class_enable={:#04x}, quanta={:?})",
            self.inner.opcode, self.inner.class_enable, self.inner.quanta
        )
    }
}

/// Decodes an untagged PAUSE or PFC frame; None for anything else.
#[pyfunction]
fn parse_mac_control(frame: PyBackedBytes) -> Option<PyPauseEvent> {
    pause::parse_mac_control(&frame).map(|inner| PyPauseEvent { inner })
}

/// q·512/R in ns, rounded up (a pause never ends early).
#[pyfunction]
fn pause_duration_ns(quanta: AnyInt, link_rate_bps: AnyInt) -> PyResult<u64> {
    Ok(pause::pause_duration_ns(
        u16::from_arg(quanta, "quanta")?,
        positive(link_rate_bps, "link_rate_bps")?,
    ))
}

/// Time to put `frame_bytes` on a link of `rate_bps`, ns, rounded up.
#[pyfunction]
fn serialisation_ns(frame_bytes: AnyInt, rate_bps: AnyInt) -> PyResult<u64> {
    Ok(wire::serialisation_ns(
        u64::from_arg(frame_bytes, "frame_bytes")?,
        positive(rate_bps, "rate_bps")?,
    ))
}

/// One pause timer: paused while `now_ns < paused_until_ns`.
#[pyclass(name = "PauseTimer", module = "bufferlab.traffic._hosts")]
#[derive(Debug, Clone)]
struct PyPauseTimer {
    inner: PauseTimer,
}

#[pymethods]
impl PyPauseTimer {
    /// A running (not paused) timer for a link of `link_rate_bps`.
    #[new]
    fn new(link_rate_bps: AnyInt) -> PyResult<Self> {
        let rate = u64::from_arg(link_rate_bps, "link_rate_bps")?;
        let inner = PauseTimer::new(rate).map_err(model_error)?;
        Ok(PyPauseTimer { inner })
    }

    /// Applies a pause time received at `now_ns`; returns when sending may resume, ns.
    fn on_quanta(&mut self, now_ns: AnyInt, quanta: AnyInt) -> PyResult<u64> {
        let now = u64::from_arg(now_ns, "now_ns")?;
        Ok(self.inner.on_quanta(now, u16::from_arg(quanta, "quanta")?))
    }

    /// Whether sending is stopped at `now_ns`.
    fn is_paused(&self, now_ns: AnyInt) -> PyResult<bool> {
        Ok(self.inner.is_paused(u64::from_arg(now_ns, "now_ns")?))
    }

    /// The link rate, bit/s.
    #[getter]
    fn link_rate_bps(&self) -> u64 {
        self.inner.link_rate_bps()
    }

    /// The end of the current pause, ns (in the past when running).
    #[getter]
    fn paused_until_ns(&self) -> u64 {
        self.inner.paused_until_ns()
    }

    /// Non-zero pause times received.
    #[getter]
    fn pauses(&self) -> u64 {
        self.inner.pauses()
    }

    /// XONs received.
    #[getter]
    fn resumes(&self) -> u64 {
        self.inner.resumes()
    }

    fn __repr__(&self) -> String {
        format!(
            "PauseTimer(link_rate_bps={}, paused_until_ns={}, pauses={}, resumes={})",
            self.inner.link_rate_bps(),
            self.inner.paused_until_ns(),
            self.inner.pauses(),
            self.inner.resumes()
        )
    }
}

/// Eight independent pause timers, one per priority.
#[pyclass(name = "PfcTimers", module = "bufferlab.traffic._hosts")]
struct PyPfcTimers {
    inner: PfcTimers,
}

#[pymethods]
impl PyPfcTimers {
    /// All priorities running, on a link of `link_rate_bps`.
    #[new]
    fn new(link_rate_bps: AnyInt) -> PyResult<Self> {
        let rate = u64::from_arg(link_rate_bps, "link_rate_bps")?;
        let inner = PfcTimers::new(rate).map_err(model_error)?;
        Ok(PyPfcTimers { inner })
    }

    /// Applies the enabled classes' times (8 quanta); returns {priority: resume ns} for them.
    fn on_pfc(
        &mut self,
        now_ns: AnyInt,
        class_enable: AnyInt,
        quanta: Vec<AnyInt>,
    ) -> PyResult<BTreeMap<usize, u64>> {
        let now = u64::from_arg(now_ns, "now_ns")?;
        let enable = u8::from_arg(class_enable, "class_enable")?;
        let resumes = self.inner.on_pfc(now, enable, &pfc_quanta(quanta)?);
        Ok(resumes
            .iter()
            .enumerate()
            .filter_map(|(priority, resume)| resume.map(|ns| (priority, ns)))
            .collect())
    }

    /// The priorities stopped at `now_ns`.
    fn paused_classes<'py>(
        &self,
        py: Python<'py>,
        now_ns: AnyInt,
    ) -> PyResult<Bound<'py, PyFrozenSet>> {
        let now = u64::from_arg(now_ns, "now_ns")?;
        let paused = (0..PFC_CLASSES).filter(|&p| self.inner.is_paused(p, now));
        PyFrozenSet::new(py, paused)
    }

    /// Copies of the 8 timers, priority 0 first (changing a copy changes nothing here).
    #[getter]
    fn timers(&self) -> Vec<PyPauseTimer> {
        (0..PFC_CLASSES)
            .map(|p| PyPauseTimer {
                inner: *self.inner.timer(p),
            })
            .collect()
    }
}

/// The `bufferlab.traffic._hosts` Python module.
#[pymodule]
fn _hosts(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRateLimiterQueue>()?;
    m.add_class::<PyBcnFeedback>()?;
    m.add_class::<PyRpConfig>()?;
    m.add_class::<PyRateChange>()?;
    m.add_class::<PyReactionPoint>()?;
    m.add_class::<PyPauseEvent>()?;
    m.add_class::<PyPauseTimer>()?;
    m.add_class::<PyPfcTimers>()?;
    m.add_function(wrap_pyfunction!(parse_bcn, m)?)?;
    m.add_function(wrap_pyfunction!(parse_mac_control, m)?)?;
    m.add_function(wrap_pyfunction!(pause_duration_ns, m)?)?;
    m.add_function(wrap_pyfunction!(serialisation_ns, m)?)?;
    Ok(())
}
