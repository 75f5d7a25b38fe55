//! Paced traffic generator core, exposed to Python as `bufferlab.traffic._generator`.

use pyo3::prelude::*;

/// Generator version, so Python can check it loaded the module it was built with.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The `bufferlab.traffic._generator` Python module.
#[pymodule]
fn _generator(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
