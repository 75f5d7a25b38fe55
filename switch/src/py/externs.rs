//! Stateful externs from Python: counters, meters, registers, value sets,
//! LPF and WRED, direct registers, and the custom CRC parameters.

use pyo3::prelude::*;

use super::convert::{rates_pair, rates_tuple};
use super::errors::{invalid, rt};
use super::PyEngine;
use crate::externs::{LpfMode, LpfSpec, WredSpec};
use crate::state::CounterCell;

#[pymethods]
impl PyEngine {
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
        let r = rates_pair(cir, cburst, pir, pburst);
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
