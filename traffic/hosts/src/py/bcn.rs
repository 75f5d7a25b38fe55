//! The BCN frame and reaction point bindings: `BcnFeedback`, `parse_bcn`, `RpConfig`
//! (gains and the 2006 features), `RateChange`, `ReactionPoint`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict};

use super::{model_error, AnyInt, IntArg};
use crate::bcn::{
    self, BcnFeedback, FeatureOptions, InitialRate, PositiveFrom, RateChange, ReactionPoint,
    RpConfig, Severe,
};

/// The fields of a BCN frame the reaction point acts on (pages of 64 bytes).
#[pyclass(name = "BcnFeedback", module = "bufferlab.traffic._hosts", frozen, eq)]
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PyBcnFeedback {
    inner: BcnFeedback,
}

#[pymethods]
impl PyBcnFeedback {
    /// Feedback as `parse_bcn` would read it (the sample fields locate the sampled frame).
    #[new]
    #[pyo3(
        signature = (cpid, qoff_pages, qdelta_pages, fb_pages, severe = false,
                     timestamp_us = AnyInt(0), sample_offset = AnyInt(0), sample_len = AnyInt(0)),
        text_signature = "(cpid, qoff_pages, qdelta_pages, fb_pages, severe=False, \
                          timestamp_us=0, sample_offset=0, sample_len=0)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        cpid: AnyInt,
        qoff_pages: AnyInt,
        qdelta_pages: AnyInt,
        fb_pages: AnyInt,
        severe: bool,
        timestamp_us: AnyInt,
        sample_offset: AnyInt,
        sample_len: AnyInt,
    ) -> PyResult<Self> {
        Ok(PyBcnFeedback {
            inner: BcnFeedback {
                cpid: u64::from_arg(cpid, "cpid")?,
                qoff_pages: i16::from_arg(qoff_pages, "qoff_pages")?,
                qdelta_pages: i16::from_arg(qdelta_pages, "qdelta_pages")?,
                fb_pages: i32::from_arg(fb_pages, "fb_pages")?,
                severe,
                timestamp_us: u32::from_arg(timestamp_us, "timestamp_us")?,
                sample_offset: usize::from_arg(sample_offset, "sample_offset")?,
                sample_len: usize::from_arg(sample_len, "sample_len")?,
            },
        })
    }

    /// Congestion point id: switch id u32 ‖ port u16 ‖ queue u16.
    #[getter]
    fn cpid(&self) -> u64 {
        self.inner.cpid
    }

    /// Q − Qeq, pages.
    #[getter]
    fn qoff_pages(&self) -> i16 {
        self.inner.qoff_pages
    }

    /// Q − Qold, pages.
    #[getter]
    fn qdelta_pages(&self) -> i16 {
        self.inner.qdelta_pages
    }

    /// −(Qoff + W·Qdelta), pages.
    #[getter]
    fn fb_pages(&self) -> i32 {
        self.inner.fb_pages
    }

    /// Q ≥ Qsc at the congestion point.
    #[getter]
    fn severe(&self) -> bool {
        self.inner.severe
    }

    /// Low 32 bits of the sampled frame's ingress time at the CP, µs.
    #[getter]
    fn timestamp_us(&self) -> u32 {
        self.inner.timestamp_us
    }

    /// Where the sampled frame starts in the BCN frame, bytes.
    #[getter]
    fn sample_offset(&self) -> usize {
        self.inner.sample_offset
    }

    /// Bytes of the sampled frame carried.
    #[getter]
    fn sample_len(&self) -> usize {
        self.inner.sample_len
    }

    /// The sampled frame's bytes carried in `frame`, the BCN frame this was parsed from.
    fn sample<'py>(&self, py: Python<'py>, frame: PyBackedBytes) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.inner.sample(&frame))
    }

    fn __repr__(&self) -> String {
        let b = &self.inner;
        format!(
            "BcnFeedback(cpid={:#x}, qoff_pages={}, qdelta_pages={}, fb_pages={}, severe={}, \
             timestamp_us={}, sample_offset={}, sample_len={})",
            b.cpid,
            b.qoff_pages,
            b.qdelta_pages,
            b.fb_pages,
            if b.severe { "True" } else { "False" },
            b.timestamp_us,
            b.sample_offset,
            b.sample_len
        )
    }
}

/// Decodes a BCN frame (untagged or with one 802.1Q tag); None for anything else.
#[pyfunction]
pub(super) fn parse_bcn(frame: PyBackedBytes) -> Option<PyBcnFeedback> {
    bcn::parse_bcn(&frame).map(|inner| PyBcnFeedback { inner })
}

/// The feature options (`FeatureOptions`, the names experiments/bcn/README.md's table
/// uses) from keyword arguments; an int out of range is a ValueError naming it.
#[allow(clippy::too_many_arguments)]
fn feature_options(
    max_decrease: Option<f64>,
    max_increase: Option<f64>,
    drift_interval_ns: Option<AnyInt>,
    drift_step_bps: Option<f64>,
    severe: Option<String>,
    backoff_max_ns: Option<AnyInt>,
    restart_rate_bps: Option<f64>,
    fb_bits: Option<AnyInt>,
    fb_range_pages: Option<AnyInt>,
    positive_from: Option<String>,
    initial_rate: Option<String>,
    rate_window_ns: Option<AnyInt>,
) -> PyResult<FeatureOptions> {
    let int = |v: Option<AnyInt>, name: &str| v.map(|v| u64::from_arg(v, name)).transpose();
    Ok(FeatureOptions {
        max_decrease,
        max_increase,
        drift_interval_ns: int(drift_interval_ns, "drift_interval_ns")?,
        drift_step_bps,
        severe,
        backoff_max_ns: int(backoff_max_ns, "backoff_max_ns")?,
        restart_rate_bps,
        fb_bits: fb_bits.map(|v| u8::from_arg(v, "fb_bits")).transpose()?,
        fb_range_pages: fb_range_pages
            .map(|v| i32::from_arg(v, "fb_range_pages"))
            .transpose()?,
        positive_from,
        initial_rate,
        rate_window_ns: int(rate_window_ns, "rate_window_ns")?,
    })
}

/// Reaction-point parameters: rates bit/s, Gd per 64-byte page, Gi dimensionless, and
/// the 2006 features (each off unless given; see experiments/bcn/README.md).
#[pyclass(name = "RpConfig", module = "bufferlab.traffic._hosts", frozen, eq)]
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PyRpConfig {
    inner: RpConfig,
}

#[pymethods]
impl PyRpConfig {
    /// Checked parameters; a gain left None takes seed 003's value
    /// (Gd 2.6e-4 per page, Gi 0.53, Ru 1 Mbit/s, Fbmax 1,875 pages).
    #[new]
    #[pyo3(signature = (line_rate_bps, min_rate_bps, gd_per_page = None, gi = None,
                        ru_bps = None, fb_max_pages = None, *, max_decrease = None,
                        max_increase = None, drift_interval_ns = None, drift_step_bps = None,
                        severe = None, backoff_max_ns = None, restart_rate_bps = None,
                        fb_bits = None, fb_range_pages = None, positive_from = None,
                        initial_rate = None, rate_window_ns = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        line_rate_bps: f64,
        min_rate_bps: f64,
        gd_per_page: Option<f64>,
        gi: Option<f64>,
        ru_bps: Option<f64>,
        fb_max_pages: Option<AnyInt>,
        max_decrease: Option<f64>,
        max_increase: Option<f64>,
        drift_interval_ns: Option<AnyInt>,
        drift_step_bps: Option<f64>,
        severe: Option<String>,
        backoff_max_ns: Option<AnyInt>,
        restart_rate_bps: Option<f64>,
        fb_bits: Option<AnyInt>,
        fb_range_pages: Option<AnyInt>,
        positive_from: Option<String>,
        initial_rate: Option<String>,
        rate_window_ns: Option<AnyInt>,
    ) -> PyResult<Self> {
        if !line_rate_bps.is_finite() {
            return Err(PyValueError::new_err(format!(
                "line_rate_bps must be finite, got {line_rate_bps}"
            )));
        }
        let seed = RpConfig::seed_003(line_rate_bps, min_rate_bps);
        let fb_max_pages = match fb_max_pages {
            Some(v) => i32::from_arg(v, "fb_max_pages")?,
            None => seed.fb_max_pages,
        };
        let options = feature_options(
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
        )?;
        let inner = RpConfig {
            gd_per_page: gd_per_page.unwrap_or(seed.gd_per_page),
            gi: gi.unwrap_or(seed.gi),
            ru_bps: ru_bps.unwrap_or(seed.ru_bps),
            fb_max_pages,
            features: options.features(fb_max_pages).map_err(model_error)?,
            ..seed
        };
        inner.validate().map_err(model_error)?;
        Ok(PyRpConfig { inner })
    }

    /// The host link's rate, bit/s.
    #[getter]
    fn line_rate_bps(&self) -> f64 {
        self.inner.line_rate_bps
    }

    /// The floor of the regulated rate, bit/s.
    #[getter]
    fn min_rate_bps(&self) -> f64 {
        self.inner.min_rate_bps
    }

    /// Decrease gain per page of |Fb|.
    #[getter]
    fn gd_per_page(&self) -> f64 {
        self.inner.gd_per_page
    }

    /// Increase gain.
    #[getter]
    fn gi(&self) -> f64 {
        self.inner.gi
    }

    /// Rate unit of the increase, bit/s.
    #[getter]
    fn ru_bps(&self) -> f64 {
        self.inner.ru_bps
    }

    /// |Fb| saturates here, pages.
    #[getter]
    fn fb_max_pages(&self) -> i32 {
        self.inner.fb_max_pages
    }

    /// The features that are on, as the keyword arguments that set them.
    #[getter]
    fn features<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let f = &self.inner.features;
        let out = PyDict::new(py);
        if let Some(v) = f.max_decrease {
            out.set_item("max_decrease", v)?;
        }
        if let Some(v) = f.max_increase {
            out.set_item("max_increase", v)?;
        }
        if let Some(d) = f.drift {
            out.set_item("drift_interval_ns", d.interval_ns)?;
            out.set_item("drift_step_bps", d.step_bps)?;
        }
        if let Severe::Stop {
            backoff_max_ns,
            restart_rate_bps,
        } = f.severe
        {
            out.set_item("severe", "stop")?;
            out.set_item("backoff_max_ns", backoff_max_ns)?;
            out.set_item("restart_rate_bps", restart_rate_bps)?;
        }
        if let Some(q) = f.quantisation {
            out.set_item("fb_bits", q.bits)?;
            out.set_item("fb_range_pages", q.range_pages)?;
        }
        if f.positive == PositiveFrom::AnyCp {
            out.set_item("positive_from", "any")?;
        }
        if let InitialRate::CurrentRate { window_ns } = f.initial_rate {
            out.set_item("initial_rate", "current")?;
            out.set_item("rate_window_ns", window_ns)?;
        }
        Ok(out)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let c = &self.inner;
        let mut text = format!(
            "RpConfig(line_rate_bps={:?}, min_rate_bps={:?}, gd_per_page={:?}, gi={:?}, \
             ru_bps={:?}, fb_max_pages={}",
            c.line_rate_bps, c.min_rate_bps, c.gd_per_page, c.gi, c.ru_bps, c.fb_max_pages
        );
        for (key, value) in self.features(py)?.iter() {
            text += &format!(", {}={}", key, value.repr()?);
        }
        Ok(text + ")")
    }
}

/// The reaction point's state after acting on a BCN or its timer.
#[pyclass(name = "RateChange", module = "bufferlab.traffic._hosts", frozen, eq)]
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PyRateChange {
    inner: RateChange,
}

#[pymethods]
impl PyRateChange {
    /// When the reaction point acted, ns.
    #[getter]
    fn now_ns(&self) -> u64 {
        self.inner.now_ns
    }

    /// The regulated rate, bit/s.
    #[getter]
    fn rate_bps(&self) -> f64 {
        self.inner.rate_bps
    }

    /// Whether a limiter is installed.
    #[getter]
    fn limited(&self) -> bool {
        self.inner.limited
    }

    /// The CPID frames are tagged with (None: untagged).
    #[getter]
    fn rlt_cpid(&self) -> Option<u64> {
        self.inner.rlt_cpid
    }

    /// BCN(0,0): send nothing before this time, ns (None otherwise).
    #[getter]
    fn hold_until_ns(&self) -> Option<u64> {
        self.inner.hold_until_ns
    }

    fn __repr__(&self) -> String {
        let c = &self.inner;
        format!(
            "RateChange(now_ns={}, rate_bps={:?}, limited={}, rlt_cpid={}, hold_until_ns={})",
            c.now_ns,
            c.rate_bps,
            if c.limited { "True" } else { "False" },
            c.rlt_cpid.map_or("None".into(), |id| format!("{id:#x}")),
            c.hold_until_ns.map_or("None".into(), |t| t.to_string())
        )
    }
}

/// The BCN reaction point: feed BCNs with their arrival time (and, for its drift, call
/// `on_timer` at `next_timer_ns`), read the regulated rate.
#[pyclass(name = "ReactionPoint", module = "bufferlab.traffic._hosts")]
pub(super) struct PyReactionPoint {
    inner: ReactionPoint,
}

#[pymethods]
impl PyReactionPoint {
    /// Starts unlimited, at line rate; the arguments are `RpConfig`'s gains (every
    /// feature off: use `from_config` for features).
    #[new]
    #[pyo3(signature = (line_rate_bps, min_rate_bps, gd_per_page = None, gi = None,
                        ru_bps = None, fb_max_pages = None))]
    fn new(
        line_rate_bps: f64,
        min_rate_bps: f64,
        gd_per_page: Option<f64>,
        gi: Option<f64>,
        ru_bps: Option<f64>,
        fb_max_pages: Option<AnyInt>,
    ) -> PyResult<Self> {
        let config = PyRpConfig::new(
            line_rate_bps,
            min_rate_bps,
            gd_per_page,
            gi,
            ru_bps,
            fb_max_pages,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
        )?;
        Self::from_config(&config, AnyInt(0))
    }

    /// Starts unlimited, at `config`'s line rate; BCN(0,0) back-offs drawn from `seed`.
    #[staticmethod]
    #[pyo3(signature = (config, seed = AnyInt(0)))]
    fn from_config(config: &PyRpConfig, seed: AnyInt) -> PyResult<Self> {
        let seed = u64::from_arg(seed, "seed")?;
        let inner = ReactionPoint::seeded(config.inner, seed).map_err(model_error)?;
        Ok(PyReactionPoint { inner })
    }

    /// Acts on one BCN received at `now_ns`; None when it does not apply.
    fn on_bcn(
        &mut self,
        now_ns: AnyInt,
        feedback: &PyBcnFeedback,
    ) -> PyResult<Option<PyRateChange>> {
        let now = u64::from_arg(now_ns, "now_ns")?;
        Ok(self
            .inner
            .on_bcn(now, &feedback.inner)
            .map(|inner| PyRateChange { inner }))
    }

    /// Takes the drift steps due by `now_ns`; None when none was.
    fn on_timer(&mut self, now_ns: AnyInt) -> PyResult<Option<PyRateChange>> {
        let now = u64::from_arg(now_ns, "now_ns")?;
        Ok(self.inner.on_timer(now).map(|inner| PyRateChange { inner }))
    }

    /// The source sent `wire_bytes` at `now_ns` (for a limiter that starts from the
    /// current rate).
    fn note_sent(&mut self, now_ns: AnyInt, wire_bytes: AnyInt) -> PyResult<()> {
        let now = u64::from_arg(now_ns, "now_ns")?;
        let bytes = u64::from_arg(wire_bytes, "wire_bytes")?;
        self.inner.note_sent(now, bytes);
        Ok(())
    }

    /// When the reaction point next wants `on_timer`, ns (None: no timer).
    #[getter]
    fn next_timer_ns(&self) -> Option<u64> {
        self.inner.next_timer_ns()
    }

    /// The parameters.
    #[getter]
    fn config(&self) -> PyRpConfig {
        PyRpConfig {
            inner: *self.inner.config(),
        }
    }

    /// The regulated rate, bit/s (line rate when unlimited).
    #[getter]
    fn rate_bps(&self) -> f64 {
        self.inner.rate_bps()
    }

    /// The CPID frames are tagged with (None: no limiter).
    #[getter]
    fn rlt_cpid(&self) -> Option<u64> {
        self.inner.rlt_cpid()
    }

    /// Whether a limiter is installed.
    #[getter]
    fn limited(&self) -> bool {
        self.inner.limited()
    }

    /// BCNs that did not apply (positive from a congestion point that may not raise the
    /// rate, or Fb = 0 after quantisation).
    #[getter]
    fn ignored(&self) -> u64 {
        self.inner.ignored()
    }
}
