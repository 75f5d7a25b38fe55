//! bufferlab's switch engine: BMv2 JSON with v1model semantics and a traffic
//! manager, exposed to Python as `bufferlab.switch._engine`.

pub mod arch;
pub mod bits;
pub mod engine;
pub mod error;
pub mod exact;
pub mod exec;
pub mod externs;
pub mod flat;
pub mod gress;
pub mod hash;
pub mod jit;
pub mod keys;
pub mod live;
pub mod load;
pub mod lpm;
pub mod packet;
pub mod program;
pub mod py;
pub mod runtime;
pub mod state;
pub mod tables;
pub mod trace;
pub mod wide;

use pyo3::prelude::*;

/// Engine version, so Python can check it loaded the module it was built with.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The `bufferlab.switch._engine` Python module.
#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    py::register(m)?;
    live::py::register(m)?;
    Ok(())
}
