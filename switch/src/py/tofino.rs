//! Tofino's side from Python: the TM's pools, queues, PPGs and flow
//! control (`tf1.tm.*`), port metadata and parser choice, and the packet
//! generator.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use bufferlab_tm::FlowControlMode;

use super::errors::{invalid, rt};
use super::PyEngine;
use crate::externs::pktgen::{AppConfig, Trigger};
use crate::runtime::tofino_tm::{baf, eg_app_pool, ig_app_pool};

#[pymethods]
impl PyEngine {
    /// Sets a port's port metadata (TNA: what `port_metadata_unpack` reads), big-endian.
    fn set_port_metadata(&self, py: Python<'_>, port: u16, value: Vec<u8>) -> PyResult<()> {
        self.engine(py).set_port_metadata(port, value).map_err(rt)
    }

    /// Assigns ingress parser `parser` (0 the first, 1 `parser_1`, ...) of a
    /// MultiParserSwitch program to `port`.
    fn set_port_parser(&self, py: Python<'_>, port: u16, parser: u8) -> PyResult<()> {
        self.engine(py).set_port_parser(port, parser).map_err(rt)
    }

    /// A port's port metadata as set (empty when never set).
    fn port_metadata<'py>(&self, py: Python<'py>, port: u16) -> Bound<'py, PyBytes> {
        let v = self.engine(py).port_metadata(port);
        PyBytes::new(py, &v)
    }

    /// Configures application `app` of a pipe's packet generator (TNA; disabled until
    /// enabled): `trigger` is "one_shot", "periodic" or "port_down" (with `ports`).
    #[pyo3(signature = (app, trigger, timer_ns = 0, batches = 1, packets = 1, ibg_ns = 0,
                        ipg_ns = 0, payload = Vec::new(), ports = Vec::new(), pipe = 0))]
    #[allow(clippy::too_many_arguments)]
    fn pktgen_configure(
        &self,
        py: Python<'_>,
        app: u8,
        trigger: &str,
        timer_ns: u64,
        batches: u16,
        packets: u16,
        ibg_ns: u64,
        ipg_ns: u64,
        payload: Vec<u8>,
        ports: Vec<u16>,
        pipe: u8,
    ) -> PyResult<()> {
        let trigger = match trigger {
            "one_shot" => Trigger::OneShot,
            "periodic" => Trigger::Periodic,
            "port_down" => Trigger::PortDown(ports.into_iter().collect()),
            other => {
                return Err(invalid(format!(
                    "trigger '{other}': one_shot, periodic or port_down"
                )))
            }
        };
        let config = AppConfig {
            trigger,
            timer_ns,
            batches,
            packets,
            ibg_ns,
            ipg_ns,
            payload,
        };
        self.engine(py)
            .pktgen_configure(pipe, app, config)
            .map_err(rt)
    }

    /// Enables or disables a packet-generator application; its timer starts now.
    #[pyo3(signature = (app, on = true, pipe = 0))]
    fn pktgen_enable(&self, py: Python<'_>, app: u8, on: bool, pipe: u8) -> PyResult<()> {
        self.engine(py).pktgen_enable(pipe, app, on).map_err(rt)
    }

    /// Packets a packet-generator application has made.
    #[pyo3(signature = (app, pipe = 0))]
    fn pktgen_generated(&self, py: Python<'_>, app: u8, pipe: u8) -> PyResult<u64> {
        self.engine(py).pktgen_generated(pipe, app).map_err(rt)
    }

    /// The port a pipe's generated packets enter ingress on.
    #[pyo3(signature = (pipe = 0))]
    fn pktgen_port(&self, py: Python<'_>, pipe: u8) -> PyResult<u16> {
        self.engine(py).pktgen_port(pipe).map_err(rt)
    }

    /// A port's link went down or came up (port-down generator applications watch it).
    fn port_status(&self, py: Python<'_>, port: u16, up: bool) {
        self.engine(py).port_status(port, up);
    }

    /// Tofino's `tf1.tm.pool.cfg`: sizes `pool` ("EG_APP_POOL_0".."EG_APP_POOL_3" or
    /// "IG_APP_POOL_0".."IG_APP_POOL_3") in cells.
    fn tm_pool_cfg(&self, py: Python<'_>, pool: &str, size_cells: u64) -> PyResult<()> {
        if pool.starts_with("IG_") {
            let pool = ig_app_pool(pool).map_err(rt)?;
            return self.engine(py).tm_ig_pool_cfg(pool, size_cells).map_err(rt);
        }
        let pool = eg_app_pool(pool).map_err(rt)?;
        self.engine(py).tm_pool_cfg(pool, size_cells).map_err(rt)
    }

    /// Tofino's `tf1.tm.queue.buffer` for queue `queue` of `dev_port`; settings not
    /// given stay. `pool_id` "EG_APP_POOL_n", or "NONE" for the port threshold as v1model.
    #[pyo3(signature = (dev_port, queue, guaranteed_cells = None, hysteresis_cells = None,
                        pool_id = None, pool_max_cells = None, dynamic_baf = None))]
    #[allow(clippy::too_many_arguments)]
    fn tm_queue_buffer(
        &self,
        py: Python<'_>,
        dev_port: u16,
        queue: u8,
        guaranteed_cells: Option<u32>,
        hysteresis_cells: Option<u32>,
        pool_id: Option<&str>,
        pool_max_cells: Option<u32>,
        dynamic_baf: Option<&str>,
    ) -> PyResult<()> {
        let mut e = self.engine(py);
        let cfg = e.port_config(dev_port).map_err(rt)?;
        let mut b = *cfg
            .queue_buffer
            .get(usize::from(queue))
            .ok_or_else(|| invalid(format!("queue {queue}: out of range")))?;
        if let Some(v) = guaranteed_cells {
            b.guaranteed_cells = v;
        }
        if let Some(v) = hysteresis_cells {
            b.hysteresis_cells = v;
        }
        if let Some(p) = pool_id {
            b.pool = match p {
                "NONE" => None,
                name => Some(eg_app_pool(name).map_err(rt)?),
            };
        }
        if let Some(v) = pool_max_cells {
            b.pool_max_cells = v;
        }
        if let Some(v) = dynamic_baf {
            b.dynamic_baf = baf(v).map_err(rt)?;
        }
        e.tm_queue_buffer(dev_port, queue, b).map_err(rt)
    }

    /// Tofino's `tf1.tm.queue.cfg` `pfc_cos`: the PFC class queue `queue` of `dev_port` honours.
    fn tm_queue_cfg(&self, py: Python<'_>, dev_port: u16, queue: u8, pfc_cos: u8) -> PyResult<()> {
        self.engine(py)
            .tm_queue_pfc_cos(dev_port, queue, pfc_cos)
            .map_err(rt)
    }

    /// Tofino's `tf1.tm.port.flowcontrol` for `dev_port`: `mode_tx` "NONE", "PAUSE" or
    /// "PFC" (what the TM asks the MAC to send), `cos_to_icos` (8 entries: the iCoS each
    /// PFC class stands for), and the XOFF's `pause_quanta` and source MAC `src_mac`.
    #[pyo3(signature = (dev_port, mode_tx = None, cos_to_icos = None, pause_quanta = None,
                        src_mac = None))]
    fn tm_port_flowcontrol(
        &self,
        py: Python<'_>,
        dev_port: u16,
        mode_tx: Option<&str>,
        cos_to_icos: Option<Vec<u8>>,
        pause_quanta: Option<u16>,
        src_mac: Option<Vec<u8>>,
    ) -> PyResult<()> {
        let mut e = self.engine(py);
        let mut fc = e.tm_port_flow_control_get(dev_port).map_err(rt)?;
        if let Some(m) = mode_tx {
            fc.mode_tx = match m {
                "NONE" => FlowControlMode::None,
                "PAUSE" => FlowControlMode::Pause,
                "PFC" => FlowControlMode::Pfc,
                _ => return Err(invalid(format!("mode_tx '{m}': NONE, PAUSE or PFC"))),
            };
        }
        if let Some(v) = cos_to_icos {
            fc.cos_to_icos = v
                .try_into()
                .map_err(|_| invalid("cos_to_icos: 8 entries, one iCoS per PFC class"))?;
        }
        if let Some(q) = pause_quanta {
            fc.pause_quanta = q;
        }
        if let Some(m) = src_mac {
            fc.src_mac = m.try_into().map_err(|_| invalid("src_mac: 6 bytes"))?;
        }
        e.tm_port_flow_control(dev_port, fc).map_err(rt)
    }

    /// Tofino's `tf1.tm.port.buffer` for `dev_port`: the cells its arrivals may hold
    /// (`ig_limit_cells`, 0 = none) before PAUSE or drops, the hysteresis before XON,
    /// and the skid it may still take after XOFF.
    #[pyo3(signature = (dev_port, ig_limit_cells = None, ig_hysteresis_cells = None,
                        skid_limit_cells = None))]
    fn tm_port_buffer(
        &self,
        py: Python<'_>,
        dev_port: u16,
        ig_limit_cells: Option<u32>,
        ig_hysteresis_cells: Option<u32>,
        skid_limit_cells: Option<u32>,
    ) -> PyResult<()> {
        let mut e = self.engine(py);
        let mut fc = e.tm_port_flow_control_get(dev_port).map_err(rt)?;
        fc.ig_limit_cells = ig_limit_cells.unwrap_or(fc.ig_limit_cells);
        fc.ig_hysteresis_cells = ig_hysteresis_cells.unwrap_or(fc.ig_hysteresis_cells);
        fc.skid_limit_cells = skid_limit_cells.unwrap_or(fc.skid_limit_cells);
        e.tm_port_flow_control(dev_port, fc).map_err(rt)
    }

    /// Tofino's `tf1.tm.ppg.cfg`: the priority group of `dev_port`'s iCoS `icos`
    /// (one PPG per iCoS here); settings not given stay. `pool_id` "IG_APP_POOL_n" or "NONE".
    #[pyo3(signature = (dev_port, icos, guaranteed_cells = None, hysteresis_cells = None,
                        pool_id = None, pool_max_cells = None, dynamic_baf = None,
                        pfc_enable = None, pfc_skid_max_cells = None))]
    #[allow(clippy::too_many_arguments)]
    fn tm_ppg_cfg(
        &self,
        py: Python<'_>,
        dev_port: u16,
        icos: u8,
        guaranteed_cells: Option<u32>,
        hysteresis_cells: Option<u32>,
        pool_id: Option<&str>,
        pool_max_cells: Option<u32>,
        dynamic_baf: Option<&str>,
        pfc_enable: Option<bool>,
        pfc_skid_max_cells: Option<u32>,
    ) -> PyResult<()> {
        let mut e = self.engine(py);
        let mut ppg = e.tm_ppg_get(dev_port, icos).map_err(rt)?;
        let b = &mut ppg.buffer;
        b.guaranteed_cells = guaranteed_cells.unwrap_or(b.guaranteed_cells);
        b.hysteresis_cells = hysteresis_cells.unwrap_or(b.hysteresis_cells);
        if let Some(p) = pool_id {
            b.pool = match p {
                "NONE" => None,
                name => Some(ig_app_pool(name).map_err(rt)?),
            };
        }
        b.pool_max_cells = pool_max_cells.unwrap_or(b.pool_max_cells);
        if let Some(v) = dynamic_baf {
            b.dynamic_baf = baf(v).map_err(rt)?;
        }
        ppg.pfc_enable = pfc_enable.unwrap_or(ppg.pfc_enable);
        ppg.pfc_skid_max_cells = pfc_skid_max_cells.unwrap_or(ppg.pfc_skid_max_cells);
        e.tm_ppg_cfg(dev_port, icos, ppg).map_err(rt)
    }

    /// Tofino's `tf1.tm.pipe.cfg` `mirror_drop_*`: with `mirror_drop_enable`, frames of
    /// pipe `pipe` dropped by the TM with `deflect_on_drop` go to (`mirror_drop_dev_port`,
    /// `mirror_drop_queue_nr`); without it they are dropped.
    #[pyo3(signature = (pipe, mirror_drop_enable, mirror_drop_dev_port = 0, mirror_drop_queue_nr = 0))]
    fn tm_pipe_cfg(
        &self,
        py: Python<'_>,
        pipe: u8,
        mirror_drop_enable: bool,
        mirror_drop_dev_port: u16,
        mirror_drop_queue_nr: u8,
    ) -> PyResult<()> {
        let dest = mirror_drop_enable.then_some((mirror_drop_dev_port, mirror_drop_queue_nr));
        self.engine(py).tm_mirror_on_drop(pipe, dest).map_err(rt)
    }

    /// The TM's units and application pools: `cell_bytes` (None: bytes),
    /// `queues_per_port`, and per egress (`app_pool_*`) and ingress (`ig_app_pool_*`)
    /// pool its size, use and peak use in cells.
    fn tm_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let e = self.engine(py);
        let ((cell_bytes, queues), pools) = (e.tm_units(), e.tm_app_pools());
        let ig = e.tm_ig_app_pools();
        let d = PyDict::new(py);
        d.set_item("cell_bytes", cell_bytes)?;
        d.set_item("queues_per_port", queues)?;
        d.set_item("app_pool_size_cells", pools.size_cells.to_vec())?;
        d.set_item("app_pool_used_cells", pools.used_cells.to_vec())?;
        d.set_item("app_pool_max_used_cells", pools.max_used_cells.to_vec())?;
        d.set_item("ig_app_pool_size_cells", ig.size_cells.to_vec())?;
        d.set_item("ig_app_pool_used_cells", ig.used_cells.to_vec())?;
        d.set_item("ig_app_pool_max_used_cells", ig.max_used_cells.to_vec())?;
        Ok(d)
    }
}
