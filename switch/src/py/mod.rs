//! Python bindings (`bufferlab.switch._engine`): a thin layer converting
//! Python values to the engine's run-time API; Python's `Engine` wraps it.
//! The class is one; its methods are grouped by concern, one file each:
//! running the engine ([`engine`](self::engine)), tables and action profiles
//! ([`tables`](self::tables)), stateful externs ([`externs`](self::externs)),
//! multicast and clone sessions ([`replication`](self::replication)), ports
//! and the traffic manager ([`tm`](self::tm)), Tofino's TM, port metadata
//! and packet generator ([`tofino`](self::tofino)); Python values become
//! engine values in [`convert`](self::convert).

use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

use pyo3::prelude::*;

use crate::engine::Engine;

mod convert;
mod engine;
mod errors;
mod externs;
mod replication;
mod tables;
mod tm;
mod tofino;

pub(crate) use errors::rt;
use errors::{
    AlreadyExistsError, EngineError, FailedPreconditionError, InvalidArgumentError, LoadError,
    NotFoundError, OutOfRangeError, PermissionDeniedError, ResourceExhaustedError,
};

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
