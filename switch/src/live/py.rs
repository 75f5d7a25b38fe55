//! Python binding of the live switch (`bufferlab.switch._engine.LiveSwitch`): it shares
//! the engine of an `Engine` object, so the control plane keeps using that object while
//! the packet thread runs. Every call that may wait releases the GIL.

use std::path::PathBuf;
use std::time::Duration;

use pyo3::exceptions::{PyOSError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use super::LiveSwitch;
use crate::py::{rt, PyEngine};

/// The engine on live ports: one packet thread, wall-clock time.
#[pyclass(name = "LiveSwitch", module = "bufferlab.switch._engine", frozen)]
pub struct PyLiveSwitch {
    inner: LiveSwitch,
}

#[pymethods]
impl PyLiveSwitch {
    /// Opens the interfaces [(port, name)] (pcaps in `pcap_dir`) for `engine`; OSError names
    /// the interface that failed.
    #[new]
    #[pyo3(signature = (engine, interfaces, pcap_dir = None))]
    fn new(
        py: Python<'_>,
        engine: PyRef<'_, PyEngine>,
        interfaces: Vec<(u16, String)>,
        pcap_dir: Option<PathBuf>,
    ) -> PyResult<Self> {
        let shared = engine.shared();
        py.detach(|| LiveSwitch::open(shared, &interfaces, pcap_dir.as_deref()))
            .map(|inner| PyLiveSwitch { inner })
            .map_err(PyOSError::new_err)
    }

    /// Starts the packet thread.
    fn start(&self) -> PyResult<()> {
        self.inner.start().map_err(PyRuntimeError::new_err)
    }

    /// Stops the packet thread: due frames sent, pcaps flushed, ports closed.
    fn stop(&self, py: Python<'_>) {
        py.detach(|| self.inner.stop())
    }

    /// Whether the packet thread runs.
    fn running(&self) -> bool {
        self.inner.running()
    }

    /// Why the packet thread stopped on its own, or None.
    fn failure(&self) -> Option<String> {
        self.inner.failure()
    }

    /// The engine's time now, ns since the switch started.
    fn now_ns(&self) -> u64 {
        self.inner.now_ns()
    }

    /// Receives `frame` on `port` now (a PacketOut on the CPU port).
    fn inject(&self, py: Python<'_>, port: u16, frame: &[u8]) -> PyResult<()> {
        py.detach(|| self.inner.inject(port, frame)).map_err(rt)
    }

    /// Waits up to `timeout_s` for packet-ins and digests: (packet-ins as (port, frame,
    /// t_ns), digests as (name, list id, values, t_ns), stopped).
    #[allow(clippy::type_complexity)]
    fn wait_events<'py>(
        &self,
        py: Python<'py>,
        timeout_s: f64,
    ) -> PyResult<(Bound<'py, PyList>, Vec<(String, u32, Vec<u128>, u64)>, bool)> {
        let timeout = Duration::from_secs_f64(timeout_s.max(0.0));
        let (packet_in, digests, closed) = py.detach(|| self.inner.wait_events(timeout));
        let list = PyList::empty(py);
        for o in packet_in {
            list.append((o.port, PyBytes::new(py, &o.frame), o.t_ns))?;
        }
        let digests = digests
            .into_iter()
            .map(|d| (d.name, d.list_id, d.values, d.t_ns))
            .collect();
        Ok((list, digests, closed))
    }

    /// Counters of the live wrapper (frames received, injected, sent, dropped for a port
    /// without interface, waiting for a send buffer, stamped late).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.stats();
        let d = PyDict::new(py);
        d.set_item("rx_frames", s.rx_frames)?;
        d.set_item("rx_refused", s.rx_refused)?;
        d.set_item("rx_late", s.rx_late)?;
        d.set_item("injected", s.injected)?;
        d.set_item("tx_frames", s.tx_frames)?;
        d.set_item("tx_no_interface", s.tx_no_interface)?;
        d.set_item("tx_waiting", s.tx_waiting)?;
        Ok(d)
    }

    /// Per port: a dict of its number, interface and the ports crate's counters.
    fn port_counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for (port, iface, c) in self.inner.port_counters() {
            let d = PyDict::new(py);
            d.set_item("port", port)?;
            d.set_item("iface", iface)?;
            d.set_item("rx_frames", c.rx_frames)?;
            d.set_item("rx_bytes", c.rx_bytes)?;
            d.set_item("rx_oversize", c.rx_oversize)?;
            d.set_item("kernel_drops", c.kernel_drops)?;
            d.set_item("tx_frames", c.tx_frames)?;
            d.set_item("tx_bytes", c.tx_bytes)?;
            d.set_item("tx_dropped", c.tx_dropped)?;
            d.set_item("tx_oversize", c.tx_oversize)?;
            d.set_item("tx_runt", c.tx_runt)?;
            list.append(d)?;
        }
        Ok(list)
    }
}

/// Registers the class in the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLiveSwitch>()
}
