//! Python bindings (`bufferlab.switch._engine`): a thin layer converting
//! Python values to the engine's run-time API; Python's `Engine` wraps it.

use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

use pyo3::import_exception;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyInt, PyList};

use bufferlab_tm::{FlowControlMode, QueueLimit, Scheduling, Threshold, TmConfig, MAX_QUEUES};

use crate::arch::pktgen::{AppConfig, Trigger};
use crate::engine::{CloneSession, Engine};
use crate::error::RuntimeError;
use crate::externs::{LpfMode, LpfSpec, WredSpec};
use crate::keys::Bytes;
use crate::program::MatchKind;
use crate::runtime::tofino_tm::{baf, eg_app_pool, ig_app_pool};
use crate::runtime::Object;
use crate::state::{CounterCell, MeterRate};
use crate::tables::{EntryAction, MatchValue};
use crate::trace::TraceLevel;

// The exception classes live in Python (`bufferlab.switch.errors`) so that every native
// module that carries the engine's class raises the same ones.
import_exception!(bufferlab.switch.errors, EngineError);
import_exception!(bufferlab.switch.errors, LoadError);
import_exception!(bufferlab.switch.errors, NotFoundError);
import_exception!(bufferlab.switch.errors, AlreadyExistsError);
import_exception!(bufferlab.switch.errors, InvalidArgumentError);
import_exception!(bufferlab.switch.errors, OutOfRangeError);
import_exception!(bufferlab.switch.errors, ResourceExhaustedError);
import_exception!(bufferlab.switch.errors, PermissionDeniedError);
import_exception!(bufferlab.switch.errors, FailedPreconditionError);

/// The engine's error as the matching Python exception.
pub(crate) fn rt(e: RuntimeError) -> PyErr {
    let m = e.message().to_string();
    match e {
        RuntimeError::NotFound(_) => NotFoundError::new_err(m),
        RuntimeError::AlreadyExists(_) => AlreadyExistsError::new_err(m),
        RuntimeError::InvalidArgument(_) => InvalidArgumentError::new_err(m),
        RuntimeError::OutOfRange(_) => OutOfRangeError::new_err(m),
        RuntimeError::ResourceExhausted(_) => ResourceExhaustedError::new_err(m),
        RuntimeError::PermissionDenied(_) => PermissionDeniedError::new_err(m),
        RuntimeError::FailedPrecondition(_) => FailedPreconditionError::new_err(m),
    }
}

/// One trace line for Python: (t_ns, level letter, packet id, copy, text).
type TraceRow = (u64, char, u64, u32, String);

fn invalid(m: impl Into<String>) -> PyErr {
    InvalidArgumentError::new_err(m.into())
}

fn kind_name(k: MatchKind) -> &'static str {
    match k {
        MatchKind::Exact => "exact",
        MatchKind::Lpm => "lpm",
        MatchKind::Ternary => "ternary",
        MatchKind::Range => "range",
        MatchKind::Optional => "optional",
    }
}

/// A key value from Python: (kind, a, b) with kind exact/lpm/ternary/range/optional.
type PyKey<'py> = (String, Option<Bound<'py, PyAny>>, Option<Bound<'py, PyAny>>);

/// A key integer from Python (an int of any size, or big-endian bytes) as bytes.
fn key_int(x: &Bound<'_, PyAny>) -> PyResult<Bytes> {
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
fn match_value(t: PyKey<'_>) -> PyResult<MatchValue<Bytes>> {
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
fn py_int(py: Python<'_>, v: &[u8]) -> PyResult<Py<PyAny>> {
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
fn match_tuple(py: Python<'_>, m: &MatchValue<Bytes>) -> PyResult<Py<PyAny>> {
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
fn keys(e: &Engine, table: &str, v: Vec<PyKey<'_>>) -> PyResult<Vec<MatchValue>> {
    let values = v.into_iter().map(match_value).collect::<PyResult<_>>()?;
    e.table_key_parts(table, values).map_err(rt)
}

fn rates_tuple(r: Option<[MeterRate; 2]>) -> Option<(u64, u64, u64, u64)> {
    r.map(|[c, p]| (c.units_per_s, c.burst, p.units_per_s, p.burst))
}

/// The engine in deterministic mode (virtual time, seeded randomness). The engine itself
/// is shared (`Arc<Mutex>`) so a `LiveSwitch` can run it while this object controls it.
/// The engine as a Python class. The simulator's native module registers it too, so a
/// simulated switch is an `Engine` that P4Runtime and the runtime CLI drive as any other.
#[pyclass(name = "Engine", module = "bufferlab.switch._engine", subclass)]
pub struct PyEngine {
    inner: Arc<Mutex<Engine>>,
}

/// A value moved out of `Python::detach` back to the thread that called it.
struct SameThread<T>(T);

// SAFETY: `Python::detach` runs its closure on the calling thread, so the lock guard inside
// is created and later dropped on that one thread; it never reaches another thread.
unsafe impl<T> Send for SameThread<T> {}

impl PyEngine {
    /// The engine, locked. When the packet thread holds it, the GIL is released while
    /// waiting, so other Python threads keep running.
    fn engine(&self, py: Python<'_>) -> MutexGuard<'_, Engine> {
        match self.inner.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => {
                let inner = &self.inner;
                py.detach(move || SameThread(crate::live::lock(inner))).0
            }
        }
    }

    /// The shared engine, for a `LiveSwitch` or a simulated network.
    pub fn shared(&self) -> Arc<Mutex<Engine>> {
        Arc::clone(&self.inner)
    }
}

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
    /// numbers of blocks (actions and controls) `compiled` and `interpreted`, the
    /// `fallbacks` as (block, reason) pairs, and `compile_us`, the time compiling took.
    fn jit_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (enabled, r) = self.engine(py).jit_report();
        let d = PyDict::new(py);
        d.set_item("enabled", enabled)?;
        d.set_item("compiled", r.compiled)?;
        d.set_item("interpreted", r.interpreted)?;
        d.set_item("fallbacks", r.fallbacks)?;
        d.set_item("compile_us", r.compile_us)?;
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

    /// Table keys as (name, match kind, width in bits).
    fn table_keys(
        &self,
        py: Python<'_>,
        table: &str,
    ) -> PyResult<Vec<(String, &'static str, u32)>> {
        Ok(self
            .engine(py)
            .table_def(table)
            .map_err(rt)?
            .fields
            .iter()
            .map(|k| (k.name.clone(), kind_name(k.kind), k.width))
            .collect())
    }

    /// Names of the actions.
    fn action_names(&self, py: Python<'_>) -> Vec<String> {
        self.engine(py).object_names(Object::Action)
    }

    /// Names of the counter arrays (direct ones included).
    fn counter_names(&self, py: Python<'_>) -> Vec<String> {
        self.engine(py).object_names(Object::Counter)
    }

    /// Names of the register arrays.
    fn register_names(&self, py: Python<'_>) -> Vec<String> {
        self.engine(py).object_names(Object::Register)
    }

    /// Names of the meter arrays.
    fn meter_names(&self, py: Python<'_>) -> Vec<String> {
        self.engine(py).object_names(Object::Meter)
    }

    /// Names of a table's actions.
    fn table_actions(&self, py: Python<'_>, table: &str) -> PyResult<Vec<String>> {
        self.engine(py).table_action_names(table).map_err(rt)
    }

    /// Names of the tables.
    fn tables(&self, py: Python<'_>) -> Vec<String> {
        self.engine(py).object_names(Object::Table)
    }

    /// Action parameters as (name, width in bits).
    fn action_params(&self, py: Python<'_>, action: &str) -> PyResult<Vec<(String, u32)>> {
        self.engine(py).action_params(action).map_err(rt)
    }

    /// Width in bits of a field (`header.field` or alias).
    fn field_width(&self, py: Python<'_>, name: &str) -> PyResult<u32> {
        self.engine(py).field_width(name).map_err(rt)
    }

    /// Adds an entry; keys are (kind, a, b) tuples in key order; returns the handle.
    #[pyo3(signature = (table, keys, action, data, priority = 0))]
    fn table_add(
        &self,
        py: Python<'_>,
        table: &str,
        keys: Vec<PyKey<'_>>,
        action: &str,
        data: Vec<u128>,
        priority: i32,
    ) -> PyResult<u32> {
        let mut e = self.engine(py);
        let keys = self::keys(&e, table, keys)?;
        e.table_add(table, keys, action, data, priority).map_err(rt)
    }

    /// Adds an entry of an indirect table pointing at a member (`group=False`) or group.
    #[pyo3(signature = (table, keys, target, group = false, priority = 0))]
    fn table_add_indirect(
        &self,
        py: Python<'_>,
        table: &str,
        keys: Vec<PyKey<'_>>,
        target: u32,
        group: bool,
        priority: i32,
    ) -> PyResult<u32> {
        let t = if group {
            EntryAction::Group(target)
        } else {
            EntryAction::Member(target)
        };
        let mut e = self.engine(py);
        let keys = self::keys(&e, table, keys)?;
        e.table_add_indirect(table, keys, t, priority).map_err(rt)
    }

    /// Handle of the entry with this key.
    #[pyo3(signature = (table, keys, priority = 0))]
    fn table_find(
        &self,
        py: Python<'_>,
        table: &str,
        keys: Vec<PyKey<'_>>,
        priority: i32,
    ) -> PyResult<u32> {
        let e = self.engine(py);
        e.table_find(table, self::keys(&e, table, keys)?, priority)
            .map_err(rt)
    }

    /// Changes an entry's action.
    fn table_modify(
        &self,
        py: Python<'_>,
        table: &str,
        handle: u32,
        action: &str,
        data: Vec<u128>,
    ) -> PyResult<()> {
        self.engine(py)
            .table_modify(table, handle, action, data)
            .map_err(rt)
    }

    /// Points an indirect entry at another member (`group=False`) or group.
    #[pyo3(signature = (table, handle, target, group = false))]
    fn table_modify_indirect(
        &self,
        py: Python<'_>,
        table: &str,
        handle: u32,
        target: u32,
        group: bool,
    ) -> PyResult<()> {
        let t = if group {
            EntryAction::Group(target)
        } else {
            EntryAction::Member(target)
        };
        self.engine(py)
            .table_modify_indirect(table, handle, t)
            .map_err(rt)
    }

    /// Deletes an entry.
    fn table_delete(&self, py: Python<'_>, table: &str, handle: u32) -> PyResult<()> {
        self.engine(py).table_delete(table, handle).map_err(rt)
    }

    /// Deletes every non-const entry.
    fn table_clear(&self, py: Python<'_>, table: &str) -> PyResult<()> {
        self.engine(py).table_clear(table).map_err(rt)
    }

    /// Entries as dicts (handle, keys, priority, action, data, member/group, packets, bytes, const).
    fn table_entries<'py>(&self, py: Python<'py>, table: &str) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        let engine = self.engine(py);
        for e in engine.table_entries(table).map_err(rt)? {
            let d = PyDict::new(py);
            d.set_item("handle", e.handle)?;
            let ks = engine
                .table_key_values(table, &e.keys)
                .map_err(rt)?
                .iter()
                .map(|k| match_tuple(py, k))
                .collect::<PyResult<Vec<_>>>()?;
            d.set_item("keys", ks)?;
            d.set_item("priority", e.priority)?;
            d.set_item("action", e.action)?;
            d.set_item("data", e.data)?;
            match e.indirect {
                Some(EntryAction::Member(m)) => d.set_item("member", m)?,
                Some(EntryAction::Group(g)) => d.set_item("group", g)?,
                _ => {}
            }
            d.set_item("packets", e.counter.packets)?;
            d.set_item("bytes", e.counter.bytes)?;
            d.set_item("const", e.is_const)?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// Sets the default action.
    fn table_set_default(
        &self,
        py: Python<'_>,
        table: &str,
        action: &str,
        data: Vec<u128>,
    ) -> PyResult<()> {
        self.engine(py)
            .table_set_default(table, action, data)
            .map_err(rt)
    }

    /// Restores the program's default action.
    fn table_reset_default(&self, py: Python<'_>, table: &str) -> PyResult<()> {
        self.engine(py).table_reset_default(table).map_err(rt)
    }

    /// Default action (name, data) or None.
    fn table_default(&self, py: Python<'_>, table: &str) -> PyResult<Option<(String, Vec<u128>)>> {
        self.engine(py).table_default(table).map_err(rt)
    }

    /// Direct counter of an entry: (packets, bytes).
    fn table_counter(&self, py: Python<'_>, table: &str, handle: u32) -> PyResult<(u64, u64)> {
        self.engine(py)
            .table_counter(table, handle)
            .map(|c| (c.packets, c.bytes))
            .map_err(rt)
    }

    /// Configures an entry's direct meter: committed/peak rates (units/s) and bursts (units).
    #[allow(clippy::too_many_arguments)]
    fn table_meter_set(
        &self,
        py: Python<'_>,
        table: &str,
        handle: u32,
        cir: u64,
        cburst: u64,
        pir: u64,
        pburst: u64,
    ) -> PyResult<()> {
        let r = [
            MeterRate {
                units_per_s: cir,
                burst: cburst,
            },
            MeterRate {
                units_per_s: pir,
                burst: pburst,
            },
        ];
        self.engine(py)
            .table_meter_set(table, handle, r)
            .map_err(rt)
    }

    /// Overwrites an entry's direct counter.
    fn table_counter_write(
        &self,
        py: Python<'_>,
        table: &str,
        handle: u32,
        packets: u64,
        bytes: u64,
    ) -> PyResult<()> {
        self.engine(py)
            .table_counter_write(table, handle, CounterCell { packets, bytes })
            .map_err(rt)
    }

    /// An entry's direct meter as (cir, cburst, pir, pburst), or None if unconfigured.
    fn table_meter_get(
        &self,
        py: Python<'_>,
        table: &str,
        handle: u32,
    ) -> PyResult<Option<(u64, u64, u64, u64)>> {
        self.engine(py)
            .table_meter_get(table, handle)
            .map(rates_tuple)
            .map_err(rt)
    }

    /// Action profile members as (member id, action, data).
    fn profile_members(
        &self,
        py: Python<'_>,
        profile: &str,
    ) -> PyResult<Vec<(u32, String, Vec<u128>)>> {
        self.engine(py).profile_members(profile).map_err(rt)
    }

    /// Selector groups as (group id, member ids).
    fn profile_groups(&self, py: Python<'_>, profile: &str) -> PyResult<Vec<(u32, Vec<u32>)>> {
        self.engine(py).profile_groups(profile).map_err(rt)
    }

    /// Names of the action profiles and selectors.
    fn profile_names(&self, py: Python<'_>) -> Vec<String> {
        self.engine(py).object_names(Object::Profile)
    }

    /// Multicast group ids.
    fn mc_groups(&self, py: Python<'_>) -> Vec<u16> {
        self.engine(py).mc_groups()
    }

    /// Clone session ids.
    fn clone_sessions(&self, py: Python<'_>) -> Vec<u32> {
        self.engine(py).clone_sessions()
    }

    /// Adds (or with `modify` replaces) an action profile member.
    #[pyo3(signature = (profile, member, action, data, modify = false))]
    fn profile_member_set(
        &self,
        py: Python<'_>,
        profile: &str,
        member: u32,
        action: &str,
        data: Vec<u128>,
        modify: bool,
    ) -> PyResult<()> {
        self.engine(py)
            .profile_member_set(profile, member, action, data, modify)
            .map_err(rt)
    }

    /// Deletes an action profile member.
    fn profile_member_delete(&self, py: Python<'_>, profile: &str, member: u32) -> PyResult<()> {
        self.engine(py)
            .profile_member_delete(profile, member)
            .map_err(rt)
    }

    /// Creates (or with `modify` replaces) a selector group.
    #[pyo3(signature = (profile, group, members, modify = false))]
    fn profile_group_set(
        &self,
        py: Python<'_>,
        profile: &str,
        group: u32,
        members: Vec<u32>,
        modify: bool,
    ) -> PyResult<()> {
        self.engine(py)
            .profile_group_set(profile, group, members, modify)
            .map_err(rt)
    }

    /// Deletes a selector group.
    fn profile_group_delete(&self, py: Python<'_>, profile: &str, group: u32) -> PyResult<()> {
        self.engine(py)
            .profile_group_delete(profile, group)
            .map_err(rt)
    }

    /// Reads a counter cell: (packets, bytes).
    fn counter_read(&self, py: Python<'_>, name: &str, index: u64) -> PyResult<(u64, u64)> {
        self.engine(py)
            .counter_read(name, index)
            .map(|c| (c.packets, c.bytes))
            .map_err(rt)
    }

    /// Writes a counter cell.
    fn counter_write(
        &self,
        py: Python<'_>,
        name: &str,
        index: u64,
        packets: u64,
        bytes: u64,
    ) -> PyResult<()> {
        self.engine(py)
            .counter_write(name, index, CounterCell { packets, bytes })
            .map_err(rt)
    }

    /// Zeroes a counter array.
    fn counter_reset(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        self.engine(py).counter_reset(name).map_err(rt)
    }

    /// Configures a meter cell: committed/peak rates (units/s) and bursts (units).
    #[allow(clippy::too_many_arguments)]
    fn meter_set(
        &self,
        py: Python<'_>,
        name: &str,
        index: u64,
        cir: u64,
        cburst: u64,
        pir: u64,
        pburst: u64,
    ) -> PyResult<()> {
        let r = [
            MeterRate {
                units_per_s: cir,
                burst: cburst,
            },
            MeterRate {
                units_per_s: pir,
                burst: pburst,
            },
        ];
        self.engine(py).meter_set(name, index, Some(r)).map_err(rt)
    }

    /// A meter cell as (cir, cburst, pir, pburst), or None if unconfigured.
    fn meter_get(
        &self,
        py: Python<'_>,
        name: &str,
        index: u64,
    ) -> PyResult<Option<(u64, u64, u64, u64)>> {
        self.engine(py)
            .meter_get(name, index)
            .map(rates_tuple)
            .map_err(rt)
    }

    /// Clears a meter cell's configuration (green for every packet).
    fn meter_clear(&self, py: Python<'_>, name: &str, index: u64) -> PyResult<()> {
        self.engine(py).meter_set(name, index, None).map_err(rt)
    }

    /// Reads a register cell.
    fn register_read(&self, py: Python<'_>, name: &str, index: u64) -> PyResult<u128> {
        self.engine(py).register_read(name, index).map_err(rt)
    }

    /// Writes a register cell.
    fn register_write(&self, py: Python<'_>, name: &str, index: u64, value: u128) -> PyResult<()> {
        self.engine(py)
            .register_write(name, index, value)
            .map_err(rt)
    }

    /// Zeroes a register array.
    fn register_reset(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        self.engine(py).register_reset(name).map_err(rt)
    }

    /// Adds a value (and optional mask) to a parser value set.
    #[pyo3(signature = (name, value, mask = None))]
    fn value_set_add(
        &self,
        py: Python<'_>,
        name: &str,
        value: u128,
        mask: Option<u128>,
    ) -> PyResult<()> {
        self.engine(py).value_set_add(name, value, mask).map_err(rt)
    }

    /// Removes one value (and the mask it was added with) from a parser value set.
    #[pyo3(signature = (name, value, mask = None))]
    fn value_set_remove(
        &self,
        py: Python<'_>,
        name: &str,
        value: u128,
        mask: Option<u128>,
    ) -> PyResult<()> {
        self.engine(py)
            .value_set_remove(name, value, mask)
            .map_err(rt)
    }

    /// A parser value set's values as (value, mask), in the order they were added.
    fn value_set_values(&self, py: Python<'_>, name: &str) -> PyResult<Vec<(u128, u128)>> {
        self.engine(py).value_set_values(name).map_err(rt)
    }

    /// Empties a parser value set.
    fn value_set_clear(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        self.engine(py).value_set_clear(name).map_err(rt)
    }

    /// Creates or replaces a multicast group; replicas are (egress port, replication id).
    fn mc_group_set(&self, py: Python<'_>, group: u16, replicas: Vec<(u16, u16)>) -> PyResult<()> {
        self.engine(py).mc_group_set(group, replicas).map_err(rt)
    }

    /// The loaded program's architecture (`v1model`, `tna`, `t2na`) and target
    /// (`bmv2`, `tofino`, `tofino2`).
    fn arch(&self, py: Python<'_>) -> (String, String) {
        let e = self.engine(py);
        let (arch, target) = e.arch();
        (arch.to_string(), target.to_string())
    }

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

    /// Configures cell `index` of a TNA Lpf (a DirectLpf's entry handle): `mode` "sample"
    /// or "rate", the rise and fall time constants in ns, the output's right shift.
    #[pyo3(signature = (name, index, mode = "sample", gain_ns = 0.0, decay_ns = 0.0, scale_down = 0))]
    #[allow(clippy::too_many_arguments)]
    fn lpf_set(
        &self,
        py: Python<'_>,
        name: &str,
        index: u64,
        mode: &str,
        gain_ns: f64,
        decay_ns: f64,
        scale_down: u32,
    ) -> PyResult<()> {
        let mode = match mode {
            "sample" => LpfMode::Sample,
            "rate" => LpfMode::Rate,
            other => return Err(invalid(format!("Lpf mode '{other}': sample or rate"))),
        };
        let spec = LpfSpec {
            mode,
            gain_ns,
            decay_ns,
            scale_down,
        };
        self.engine(py).lpf_set(name, index, spec).map_err(rt)
    }

    /// A TNA Lpf cell's output before scaling (0.0 before its first sample).
    fn lpf_output(&self, py: Python<'_>, name: &str, index: u64) -> PyResult<f64> {
        Ok(self.engine(py).lpf_get(name, index).map_err(rt)?.y)
    }

    /// Configures cell `index` of a TNA Wred (a DirectWred's entry handle): averaging
    /// time constant in ns, the thresholds of the average, the drop probability at the top.
    #[pyo3(signature = (name, index, time_constant_ns, min_thresh, max_thresh, max_probability))]
    #[allow(clippy::too_many_arguments)]
    fn wred_set(
        &self,
        py: Python<'_>,
        name: &str,
        index: u64,
        time_constant_ns: f64,
        min_thresh: u64,
        max_thresh: u64,
        max_probability: f64,
    ) -> PyResult<()> {
        let spec = WredSpec {
            time_constant_ns,
            min_thresh,
            max_thresh,
            max_probability,
        };
        self.engine(py).wred_set(name, index, spec).map_err(rt)
    }

    /// A TNA Wred cell's average so far.
    fn wred_average(&self, py: Python<'_>, name: &str, index: u64) -> PyResult<f64> {
        Ok(self.engine(py).wred_get(name, index).map_err(rt)?.average())
    }

    /// The cell of a TNA DirectRegister that entry `handle` of its table holds.
    fn direct_register_read(&self, py: Python<'_>, name: &str, handle: u32) -> PyResult<u128> {
        self.engine(py)
            .direct_register_read(name, handle)
            .map_err(rt)
    }

    /// Writes the cell of a TNA DirectRegister that entry `handle` holds.
    fn direct_register_write(
        &self,
        py: Python<'_>,
        name: &str,
        handle: u32,
        value: u128,
    ) -> PyResult<()> {
        self.engine(py)
            .direct_register_write(name, handle, value)
            .map_err(rt)
    }

    /// Deletes a multicast group.
    fn mc_group_delete(&self, py: Python<'_>, group: u16) -> PyResult<()> {
        self.engine(py).mc_group_delete(group).map_err(rt)
    }

    /// A multicast group's replicas as (egress port, replication id).
    fn mc_group_get(&self, py: Python<'_>, group: u16) -> PyResult<Vec<(u16, u16)>> {
        self.engine(py).mc_group_get(group).map_err(rt)
    }

    /// Creates or replaces a clone session.
    #[pyo3(signature = (session, port = None, mcast_grp = None, truncate_bytes = None))]
    fn clone_session_set(
        &self,
        py: Python<'_>,
        session: u32,
        port: Option<u16>,
        mcast_grp: Option<u16>,
        truncate_bytes: Option<u32>,
    ) -> PyResult<()> {
        self.engine(py)
            .clone_session_set(
                session,
                CloneSession {
                    port,
                    mcast_grp,
                    truncate: truncate_bytes,
                },
            )
            .map_err(rt)
    }

    /// Deletes a clone session.
    fn clone_session_delete(&self, py: Python<'_>, session: u32) -> PyResult<()> {
        self.engine(py).clone_session_delete(session).map_err(rt)
    }

    /// A clone session as (port, mcast_grp, truncate_bytes).
    fn clone_session_get(
        &self,
        py: Python<'_>,
        session: u32,
    ) -> PyResult<(Option<u16>, Option<u16>, Option<u32>)> {
        self.engine(py)
            .clone_session_get(session)
            .map(|s| (s.port, s.mcast_grp, s.truncate))
            .map_err(rt)
    }

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

    /// Configures crc16_custom (width 16) or crc32_custom (width 32).
    #[allow(clippy::too_many_arguments)]
    fn set_crc_parameters(
        &self,
        py: Python<'_>,
        width: u32,
        poly: u64,
        init: u64,
        xor_out: u64,
        reflect_in: bool,
        reflect_out: bool,
    ) -> PyResult<()> {
        self.engine(py)
            .set_crc_parameters(width, poly, init, xor_out, reflect_in, reflect_out)
            .map_err(rt)
    }
}

impl PyEngine {
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

/// Registers the class and exceptions in the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PyEngine>()?;
    m.add("EngineError", py.get_type::<EngineError>())?;
    m.add("LoadError", py.get_type::<LoadError>())?;
    m.add("NotFoundError", py.get_type::<NotFoundError>())?;
    m.add("AlreadyExistsError", py.get_type::<AlreadyExistsError>())?;
    m.add(
        "InvalidArgumentError",
        py.get_type::<InvalidArgumentError>(),
    )?;
    m.add("OutOfRangeError", py.get_type::<OutOfRangeError>())?;
    m.add(
        "ResourceExhaustedError",
        py.get_type::<ResourceExhaustedError>(),
    )?;
    m.add(
        "PermissionDeniedError",
        py.get_type::<PermissionDeniedError>(),
    )?;
    m.add(
        "FailedPreconditionError",
        py.get_type::<FailedPreconditionError>(),
    )?;
    Ok(())
}
