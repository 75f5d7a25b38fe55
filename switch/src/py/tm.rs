//! Ports and the traffic manager from Python: port settings, queue depth
//! and rate, the pool, their counters, PAUSE, and the drop and CPU ports.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use bufferlab_tm::{QueueLimit, Scheduling, Threshold, MAX_QUEUES};

use super::errors::{invalid, rt};
use super::PyEngine;

#[pymethods]
impl PyEngine {
    /// Changes a port's settings; arguments left as None keep their value.
    #[pyo3(signature = (port, rate_bps = None, wire_overhead_bytes = None, delay_ns = None, num_queues = None,
                        drr_quantum_bytes = None, strict_priority = None, queue_limit_pkts = None,
                        queue_limit_bytes = None, queue_limit_cells = None, queue_rate_pps = None,
                        threshold = None))]
    #[allow(clippy::too_many_arguments)]
    fn configure_port(
        &self,
        py: Python<'_>,
        port: u16,
        rate_bps: Option<u64>,
        wire_overhead_bytes: Option<u32>,
        delay_ns: Option<u64>,
        num_queues: Option<u8>,
        drr_quantum_bytes: Option<Vec<u32>>,
        strict_priority: Option<bool>,
        queue_limit_pkts: Option<Vec<Option<u32>>>,
        queue_limit_bytes: Option<Vec<Option<u64>>>,
        queue_limit_cells: Option<Vec<Option<u64>>>,
        queue_rate_pps: Option<Vec<u64>>,
        threshold: Option<(String, Option<u64>, Option<u64>)>,
    ) -> PyResult<()> {
        let mut c = self.engine(py).port_config(port).map_err(rt)?;
        let n = MAX_QUEUES as usize;
        let fixed = |len: usize, what: &str| -> PyResult<()> {
            if len > n {
                return Err(invalid(format!("{what}: at most {n} queues")));
            }
            Ok(())
        };
        if let Some(v) = rate_bps {
            c.rate_bps = v;
        }
        if let Some(v) = wire_overhead_bytes {
            c.wire_overhead_bytes = v;
        }
        if let Some(v) = delay_ns {
            c.delay_ns = v;
        }
        if let Some(v) = num_queues {
            c.num_queues = v;
        }
        if let Some(q) = drr_quantum_bytes {
            fixed(q.len(), "drr_quantum_bytes")?;
            let mut quantum_bytes = [1500u32; MAX_QUEUES as usize];
            quantum_bytes[..q.len()].copy_from_slice(&q);
            c.scheduling = Scheduling::Drr { quantum_bytes };
        }
        if strict_priority == Some(true) {
            c.scheduling = Scheduling::StrictPriority;
        }
        if let Some(l) = queue_limit_pkts {
            fixed(l.len(), "queue_limit_pkts")?;
            for (i, v) in l.iter().enumerate() {
                c.queue_limits[i] = v.map_or(QueueLimit::None, QueueLimit::Packets);
            }
        }
        if let Some(l) = queue_limit_bytes {
            fixed(l.len(), "queue_limit_bytes")?;
            for (i, v) in l.iter().enumerate() {
                c.queue_limits[i] = v.map_or(QueueLimit::None, QueueLimit::Bytes);
            }
        }
        if let Some(l) = queue_limit_cells {
            fixed(l.len(), "queue_limit_cells")?;
            for (i, v) in l.iter().enumerate() {
                c.queue_limits[i] = v.map_or(QueueLimit::None, QueueLimit::Cells);
            }
        }
        if let Some(r) = queue_rate_pps {
            fixed(r.len(), "queue_rate_pps")?;
            c.queue_rate_pps[..r.len()].copy_from_slice(&r);
        }
        if let Some((kind, a, b)) = threshold {
            c.threshold = match (kind.as_str(), a, b) {
                ("none", _, _) => Threshold::None,
                ("static_bytes", Some(x), _) => Threshold::StaticBytes(x),
                ("static_cells", Some(x), _) => Threshold::StaticCells(x),
                ("percent_of_pool", Some(x), _) => Threshold::PercentOfPool(u8::try_from(x).map_err(|_| invalid("percent_of_pool: 1..=100"))?),
                ("dynamic", Some(num), Some(den)) => Threshold::Dynamic {
                    alpha_num: u32::try_from(num).map_err(|_| invalid("alpha_num too large"))?,
                    alpha_den: u32::try_from(den).map_err(|_| invalid("alpha_den too large"))?,
                },
                _ => return Err(invalid(format!("threshold '{kind}': use ('none',), ('static_bytes', B), ('static_cells', C), ('percent_of_pool', P) or ('dynamic', num, den)"))),
            };
        }
        self.engine(py).configure_port(port, c).map_err(rt)
    }

    /// A port's settings as a dict.
    fn port_config<'py>(&self, py: Python<'py>, port: u16) -> PyResult<Bound<'py, PyDict>> {
        let c = self.engine(py).port_config(port).map_err(rt)?;
        let d = PyDict::new(py);
        d.set_item("rate_bps", c.rate_bps)?;
        d.set_item("wire_overhead_bytes", c.wire_overhead_bytes)?;
        d.set_item("delay_ns", c.delay_ns)?;
        d.set_item("num_queues", c.num_queues)?;
        match c.scheduling {
            Scheduling::StrictPriority => d.set_item("scheduling", "strict_priority")?,
            Scheduling::Drr { quantum_bytes } => {
                d.set_item("scheduling", "drr")?;
                d.set_item("drr_quantum_bytes", quantum_bytes.to_vec())?;
            }
        }
        let limits: Vec<(String, Option<u64>)> = c
            .queue_limits
            .iter()
            .map(|l| match l {
                QueueLimit::None => ("none".to_string(), None),
                QueueLimit::Packets(p) => ("packets".to_string(), Some(u64::from(*p))),
                QueueLimit::Bytes(b) => ("bytes".to_string(), Some(*b)),
                QueueLimit::Cells(c) => ("cells".to_string(), Some(*c)),
            })
            .collect();
        d.set_item("queue_limits", limits)?;
        d.set_item("queue_rate_pps", c.queue_rate_pps.to_vec())?;
        let th = match c.threshold {
            Threshold::None => ("none".to_string(), None, None),
            Threshold::StaticBytes(b) => ("static_bytes".to_string(), Some(b), None),
            Threshold::StaticCells(c) => ("static_cells".to_string(), Some(c), None),
            Threshold::PercentOfPool(p) => {
                ("percent_of_pool".to_string(), Some(u64::from(p)), None)
            }
            Threshold::Dynamic {
                alpha_num,
                alpha_den,
            } => (
                "dynamic".to_string(),
                Some(u64::from(alpha_num)),
                Some(u64::from(alpha_den)),
            ),
        };
        d.set_item("threshold", th)?;
        Ok(d)
    }

    /// BMv2 `set_queue_depth` (packets) for a queue, a port, or all.
    #[pyo3(signature = (pkts, port = None, queue = None))]
    fn set_queue_depth(
        &self,
        py: Python<'_>,
        pkts: u32,
        port: Option<u16>,
        queue: Option<u8>,
    ) -> PyResult<()> {
        self.engine(py)
            .set_queue_depth(pkts, port, queue)
            .map_err(rt)
    }

    /// BMv2 `set_queue_rate` (packets/s) for a queue, a port, or all.
    #[pyo3(signature = (pps, port = None, queue = None))]
    fn set_queue_rate(
        &self,
        py: Python<'_>,
        pps: u64,
        port: Option<u16>,
        queue: Option<u8>,
    ) -> PyResult<()> {
        self.engine(py).set_queue_rate(pps, port, queue).map_err(rt)
    }

    /// Resizes the shared buffer pool, bytes.
    fn set_pool_bytes(&self, py: Python<'_>, bytes: u64) -> PyResult<()> {
        self.engine(py).set_pool_bytes(bytes).map_err(rt)
    }

    /// Depth (packets, bytes) and counters of one queue, as a dict.
    fn queue_stats<'py>(
        &self,
        py: Python<'py>,
        port: u16,
        queue: u8,
    ) -> PyResult<Bound<'py, PyDict>> {
        let q = self.engine(py).queue_stats(port, queue).map_err(rt)?;
        let d = PyDict::new(py);
        d.set_item("depth_pkts", q.depth_pkts)?;
        d.set_item("depth_bytes", q.depth_bytes)?;
        d.set_item("max_depth_pkts", q.max_depth_pkts)?;
        d.set_item("max_depth_bytes", q.max_depth_bytes)?;
        d.set_item("depth_cells", q.depth_cells)?;
        d.set_item("max_depth_cells", q.max_depth_cells)?;
        d.set_item("enqueued_pkts", q.enqueued.pkts)?;
        d.set_item("enqueued_bytes", q.enqueued.bytes)?;
        d.set_item("dequeued_pkts", q.dequeued.pkts)?;
        d.set_item("dequeued_bytes", q.dequeued.bytes)?;
        d.set_item("dropped_queue_full_pkts", q.dropped_queue_full.pkts)?;
        d.set_item("dropped_port_threshold_pkts", q.dropped_port_threshold.pkts)?;
        d.set_item("dropped_pool_full_pkts", q.dropped_pool_full.pkts)?;
        d.set_item("dropped_app_pool_pkts", q.dropped_app_pool.pkts)?;
        d.set_item("dropped_ingress_pkts", q.dropped_ingress.pkts)?;
        d.set_item("dropped_pkts", q.dropped().pkts)?;
        d.set_item("dropped_bytes", q.dropped().bytes)?;
        Ok(d)
    }

    /// Counters of one port as a dict: occupancy (bytes), transmitted and
    /// priority-out-of-range drops (packets, bytes).
    fn port_stats<'py>(&self, py: Python<'py>, port: u16) -> PyResult<Bound<'py, PyDict>> {
        let s = self.engine(py).port_stats(port).map_err(rt)?;
        let d = PyDict::new(py);
        d.set_item("occupancy_bytes", s.occupancy_bytes)?;
        d.set_item("max_occupancy_bytes", s.max_occupancy_bytes)?;
        d.set_item("occupancy_cells", s.occupancy_cells)?;
        d.set_item("max_occupancy_cells", s.max_occupancy_cells)?;
        d.set_item("transmitted_pkts", s.transmitted.pkts)?;
        d.set_item("transmitted_bytes", s.transmitted.bytes)?;
        d.set_item(
            "dropped_priority_out_of_range_pkts",
            s.dropped_queue_out_of_range.pkts,
        )?;
        d.set_item(
            "dropped_priority_out_of_range_bytes",
            s.dropped_queue_out_of_range.bytes,
        )?;
        Ok(d)
    }

    /// Frame bytes queued on a port.
    fn port_occupancy_bytes(&self, py: Python<'_>, port: u16) -> u64 {
        self.engine(py).port_occupancy_bytes(port)
    }

    /// Frame bytes held in the shared pool.
    fn pool_used_bytes(&self, py: Python<'_>) -> u64 {
        self.engine(py).pool_used_bytes()
    }

    /// Honours a PAUSE/PFC from the peer of `port`: queues in `queue_mask` hold for `pause_ns`.
    fn pause(&self, py: Python<'_>, port: u16, queue_mask: u8, pause_ns: u64) -> PyResult<()> {
        self.engine(py)
            .pause(port, queue_mask, pause_ns)
            .map_err(rt)
    }

    /// Makes a port's MAC consume received 802.3x PAUSE / PFC frames and hold its egress queues.
    #[pyo3(signature = (port, on = true))]
    fn set_honour_pause(&self, py: Python<'_>, port: u16, on: bool) -> PyResult<()> {
        self.engine(py).set_honour_pause(port, on).map_err(rt)
    }

    /// Sets the drop port (default 511).
    fn set_drop_port(&self, py: Python<'_>, port: u16) {
        self.engine(py).set_drop_port(port)
    }

    /// Sets the CPU port (frames to it are returned by `packet_in`), or None.
    #[pyo3(signature = (port = None))]
    fn set_cpu_port(&self, py: Python<'_>, port: Option<u16>) {
        self.engine(py).cpu_port = port;
    }
}
