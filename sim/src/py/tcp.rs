//! Python bindings of TCP flows: adding one to a simulator and reading every flow's
//! counters.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use bufferlab_hosts::tcp::cc::{Algorithm, CubicParams};
use bufferlab_hosts::tcp::pacing::Pacing;
use bufferlab_hosts::tcp::TcpConfig;

use super::{to_py, PySimulator};
use crate::network::TcpFlowConfig;

/// Adds a TCP flow to `sim`: `profile`'s settings, each override that is not None
/// applied on top; returns the flow's index. Errors name the setting and the reason.
#[pyfunction]
#[pyo3(signature = (sim, name, sender, receiver, profile = "linux-today", *, bytes = None,
    start_ns = 0, dscp = 0, algorithm = None, mss_bytes = None, initial_window_segments = None,
    sack = None, rack_tlp = None, ecn = None, pacing_bps = None, receive_window_bytes = None,
    delayed_ack = None, rto_min_ns = None, hystart = None, prr = None, gso = None))]
#[allow(clippy::too_many_arguments)]
fn add_tcp_flow(
    sim: &Bound<'_, PySimulator>,
    name: String,
    sender: String,
    receiver: String,
    profile: &str,
    bytes: Option<u64>,
    start_ns: u64,
    dscp: u8,
    algorithm: Option<&str>,
    mss_bytes: Option<u32>,
    initial_window_segments: Option<u32>,
    sack: Option<bool>,
    rack_tlp: Option<bool>,
    ecn: Option<bool>,
    pacing_bps: Option<u64>,
    receive_window_bytes: Option<u64>,
    delayed_ack: Option<bool>,
    rto_min_ns: Option<u64>,
    hystart: Option<bool>,
    prr: Option<bool>,
    gso: Option<bool>,
) -> PyResult<u32> {
    let mut tcp = TcpConfig::profile(profile).map_err(PyValueError::new_err)?;
    if let Some(a) = algorithm {
        tcp.algorithm = match a {
            "newreno" => Algorithm::NewReno,
            "cubic" => Algorithm::Cubic(CubicParams::default()),
            "dctcp" => Algorithm::Dctcp {
                g: 1.0 / 16.0,
                initial_alpha: 1.0,
            },
            other => {
                return Err(PyValueError::new_err(format!(
                    "algorithm: {other:?} is not newreno, cubic or dctcp"
                )))
            }
        };
    }
    if let Some(v) = mss_bytes {
        tcp.mss_bytes = v;
    }
    if let Some(v) = initial_window_segments {
        tcp.initial_window_segments = v;
    }
    if let Some(v) = sack {
        tcp.sack = v;
    }
    if let Some(v) = rack_tlp {
        tcp.rack_tlp = v;
    }
    if let Some(v) = ecn {
        tcp.ecn = v;
    }
    if let Some(v) = pacing_bps {
        tcp.pacing = Pacing::Rate(v);
    }
    if let Some(v) = receive_window_bytes {
        tcp.receive_window_bytes = v;
    }
    if let Some(v) = delayed_ack {
        tcp.delayed_ack = v;
    }
    if let Some(v) = rto_min_ns {
        tcp.rto_min_ns = v;
    }
    if let Some(v) = prr {
        tcp.prr = v;
    }
    if let Some(v) = gso {
        tcp.gso = v;
    }
    if let Some(v) = hystart {
        match &mut tcp.algorithm {
            Algorithm::Cubic(p) => p.hystart = v,
            other if v => {
                return Err(PyValueError::new_err(format!(
                    "hystart: CUBIC's slow-start exit; this flow runs {}",
                    other.name()
                )))
            }
            _ => {}
        }
    }
    let cfg = TcpFlowConfig {
        name,
        sender,
        receiver,
        tcp,
        profile: profile.to_string(),
        start_ns,
        bytes,
        dscp,
    };
    sim.borrow_mut().sim.add_tcp_flow(cfg).map_err(to_py)
}

/// One dict per TCP flow, in the order they were added: what it is and what it counted
/// (bytes, segments, ns; None where a time has not come).
#[pyfunction]
fn tcp_counters<'py>(sim: &Bound<'py, PySimulator>) -> PyResult<Bound<'py, PyList>> {
    let py = sim.py();
    let this = sim.borrow();
    let out = PyList::empty(py);
    for f in &this.sim.tcp.flows {
        let c = &f.config;
        let d = PyDict::new(py);
        let tx = f.tx.stats();
        let rx = f.rx.stats();
        let fct = f.rx.completed_ns().map(|t| t.saturating_sub(c.start_ns));
        d.set_item("flow", &c.name)?;
        d.set_item("sender", &c.sender)?;
        d.set_item("receiver", &c.receiver)?;
        d.set_item("profile", &c.profile)?;
        d.set_item("algorithm", c.tcp.algorithm.name())?;
        d.set_item("flow_bytes", c.bytes)?;
        d.set_item("start_ns", c.start_ns)?;
        d.set_item("last_byte_received_ns", f.rx.completed_ns())?;
        d.set_item("all_acked_ns", f.tx.completed_ns())?;
        d.set_item("fct_ns", fct)?;
        d.set_item("delivered_bytes", f.rx.delivered_bytes())?;
        d.set_item("segments_sent", tx.segments_sent)?;
        d.set_item("payload_bytes_sent", tx.bytes_sent)?;
        d.set_item("retransmitted_segments", tx.retransmitted_segments)?;
        d.set_item("timeouts", tx.timeouts)?;
        d.set_item("fast_recoveries", tx.fast_recoveries)?;
        d.set_item("tlp_probes", tx.tlp_probes)?;
        d.set_item("ecn_reductions", tx.ecn_reductions)?;
        d.set_item("ece_acks", tx.ece_acks)?;
        d.set_item("acks_received", tx.acks_received)?;
        d.set_item("cwnd_bytes", f.tx.cwnd_bytes())?;
        d.set_item("max_cwnd_bytes", tx.max_cwnd_bytes)?;
        d.set_item("srtt_ns", f.tx.rtt().srtt_ns())?;
        d.set_item("min_rtt_ns", f.tx.rtt().min_rtt_ns())?;
        d.set_item("ecn_negotiated", f.tx.ecn_negotiated())?;
        d.set_item("dctcp_alpha", f.tx.alpha())?;
        d.set_item("received_segments", rx.segments)?;
        d.set_item("ce_segments", rx.ce_segments)?;
        d.set_item("out_of_order_segments", rx.out_of_order_segments)?;
        d.set_item("duplicate_segments", rx.duplicate_segments)?;
        d.set_item("acks_sent", rx.acks_sent)?;
        out.append(d)?;
    }
    Ok(out)
}

/// Registers the TCP functions in the `_sim` module.
pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(add_tcp_flow, m)?)?;
    m.add_function(wrap_pyfunction!(tcp_counters, m)?)?;
    Ok(())
}
