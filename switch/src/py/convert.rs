//! Python values to the engine's and back: match keys, key integers of any
//! width, meter rates and trace lines.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt};

use super::errors::{invalid, rt};
use crate::engine::Engine;
use crate::keys::Bytes;
use crate::program::MatchKind;
use crate::state::MeterRate;
use crate::tables::MatchValue;

/// One trace line for Python: (t_ns, level letter, packet id, copy, text).
pub(super) type TraceRow = (u64, char, u64, u32, String);

/// A match kind's name as Python spells it.
pub(super) fn kind_name(k: MatchKind) -> &'static str {
    match k {
        MatchKind::Exact => "exact",
        MatchKind::Lpm => "lpm",
        MatchKind::Ternary => "ternary",
        MatchKind::Range => "range",
        MatchKind::Optional => "optional",
    }
}

/// A key value from Python: (kind, a, b) with kind exact/lpm/ternary/range/optional.
pub(super) type PyKey<'py> = (String, Option<Bound<'py, PyAny>>, Option<Bound<'py, PyAny>>);

/// A key integer from Python (an int of any size, or big-endian bytes) as bytes.
pub(super) fn key_int(x: &Bound<'_, PyAny>) -> PyResult<Bytes> {
    if let Ok(b) = x.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(v) = x.extract::<u128>() {
        return Ok(v.to_be_bytes().to_vec());
    }
    // Wider than a u128 (fields over 128 bits): Python's own conversion, which
    // raises OverflowError on a negative value as the u128 one does.
    let bits: usize = x.call_method0("bit_length")?.extract()?;
    Ok(x.call_method1("to_bytes", (bits.div_ceil(8), "big"))?
        .cast::<PyBytes>()?
        .as_bytes()
        .to_vec())
}

/// One match field's value from a Python (kind, a, b) tuple.
pub(super) fn match_value(t: PyKey<'_>) -> PyResult<MatchValue<Bytes>> {
    let (kind, a, b) = t;
    let need = |x: &Option<Bound<'_, PyAny>>, what: &str| match x {
        Some(x) => key_int(x),
        None => Err(invalid(format!("{kind} key needs {what}"))),
    };
    Ok(match kind.as_str() {
        "exact" => MatchValue::Exact(need(&a, "a value")?),
        "lpm" => {
            let plen = b.ok_or_else(|| invalid("lpm key needs a prefix length"))?;
            MatchValue::Lpm(need(&a, "a value")?, plen.extract::<u32>()?)
        }
        "ternary" => MatchValue::Ternary(need(&a, "a value")?, need(&b, "a mask")?),
        "range" => MatchValue::Range(need(&a, "a low bound")?, need(&b, "a high bound")?),
        "optional" => MatchValue::Optional(a.as_ref().map(key_int).transpose()?),
        other => return Err(invalid(format!("unknown match kind '{other}'"))),
    })
}

/// A key integer as a Python int.
pub(super) fn py_int(py: Python<'_>, v: &[u8]) -> PyResult<Py<PyAny>> {
    if v.len() <= 16 {
        return Ok(crate::wide::be_int(v)
            .into_pyobject(py)?
            .into_any()
            .unbind());
    }
    let int = py.get_type::<PyInt>();
    Ok(int
        .call_method1("from_bytes", (PyBytes::new(py, v), "big"))?
        .unbind())
}

/// One match field's value as a Python (kind, a, b) tuple.
pub(super) fn match_tuple(py: Python<'_>, m: &MatchValue<Bytes>) -> PyResult<Py<PyAny>> {
    let int = |v: &[u8]| py_int(py, v);
    let t = match m {
        MatchValue::Exact(v) => ("exact", Some(int(v)?), None),
        MatchValue::Lpm(v, p) => ("lpm", Some(int(v)?), Some(int(&p.to_be_bytes())?)),
        MatchValue::Ternary(v, k) => ("ternary", Some(int(v)?), Some(int(k)?)),
        MatchValue::Range(lo, hi) => ("range", Some(int(lo)?), Some(int(hi)?)),
        MatchValue::Optional(v) => ("optional", v.as_deref().map(int).transpose()?, None),
    };
    Ok(t.into_pyobject(py)?.into_any().unbind())
}

/// The lookup components of `table`'s key from Python tuples, one per match field.
pub(super) fn keys(e: &Engine, table: &str, v: Vec<PyKey<'_>>) -> PyResult<Vec<MatchValue>> {
    let values = v.into_iter().map(match_value).collect::<PyResult<_>>()?;
    e.table_key_parts(table, values).map_err(rt)
}

/// The two rates of a meter cell from Python's (cir, cburst, pir, pburst).
pub(super) fn rates_pair(cir: u64, cburst: u64, pir: u64, pburst: u64) -> [MeterRate; 2] {
    [
        MeterRate {
            units_per_s: cir,
            burst: cburst,
        },
        MeterRate {
            units_per_s: pir,
            burst: pburst,
        },
    ]
}

/// A meter's two rates as Python's (CIR, CBS, PIR, PBS) tuple.
pub(super) fn rates_tuple(r: Option<[MeterRate; 2]>) -> Option<(u64, u64, u64, u64)> {
    r.map(|[c, p]| (c.units_per_s, c.burst, p.units_per_s, p.burst))
}
