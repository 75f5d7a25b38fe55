//! The control-plane API of one loaded program (a gress): counter, meter and
//! register arrays and parser value sets.

use super::{not_found, R};
use crate::bits::mask;
use crate::error::RuntimeError;
use crate::gress::Gress;
use crate::state::{CounterCell, MeterRate};

impl Gress {
    fn array_index<'a>(
        mut names: impl Iterator<Item = &'a str>,
        what: &str,
        name: &str,
    ) -> R<usize> {
        names
            .position(|n| n == name)
            .map_or_else(|| not_found(what, name), Ok)
    }

    fn cell_index(len: usize, index: u64, name: &str) -> R<usize> {
        let i = index as usize;
        if i >= len {
            return Err(RuntimeError::OutOfRange(format!(
                "{name}: index {index} is outside 0..{len}"
            )));
        }
        Ok(i)
    }

    /// Reads an indirect counter cell.
    pub fn counter_read(&self, name: &str, index: u64) -> R<CounterCell> {
        let c = Self::array_index(
            self.prog.counters.iter().map(|c| c.name.as_str()),
            "counter",
            name,
        )?;
        let i = Self::cell_index(self.st.counters[c].len(), index, name)?;
        Ok(self.st.counters[c][i])
    }

    /// Writes an indirect counter cell.
    pub fn counter_write(&mut self, name: &str, index: u64, value: CounterCell) -> R<()> {
        let c = Self::array_index(
            self.prog.counters.iter().map(|c| c.name.as_str()),
            "counter",
            name,
        )?;
        let i = Self::cell_index(self.st.counters[c].len(), index, name)?;
        self.st.counters[c][i] = value;
        Ok(())
    }

    /// Zeroes every cell of a counter array (direct counters included).
    pub fn counter_reset(&mut self, name: &str) -> R<()> {
        let c = Self::array_index(
            self.prog.counters.iter().map(|c| c.name.as_str()),
            "counter",
            name,
        )?;
        self.st.counters[c]
            .iter_mut()
            .for_each(|x| *x = CounterCell::default());
        if let Some(t) = self.prog.counters[c].direct_table {
            let handles: Vec<u32> = self.st.tables[t as usize].iter().map(|(h, _)| h).collect();
            for h in handles {
                if let Some(e) = self.st.tables[t as usize].entry_mut(h) {
                    e.counter = CounterCell::default();
                }
            }
        }
        Ok(())
    }

    /// Configures an indirect meter cell (committed, peak), or clears it with `None`.
    pub fn meter_set(
        &mut self,
        name: &str,
        index: u64,
        rates: Option<[MeterRate; 2]>,
        now: u64,
    ) -> R<()> {
        let m = Self::array_index(
            self.prog.meters.iter().map(|m| m.name.as_str()),
            "meter",
            name,
        )?;
        let i = Self::cell_index(self.st.meters[m].len(), index, name)?;
        match rates {
            Some(r) => self.st.meters[m][i].set_rates(r, now),
            None => self.st.meters[m][i].reset(),
        }
        Ok(())
    }

    /// Reads a meter cell's configuration.
    pub fn meter_get(&self, name: &str, index: u64) -> R<Option<[MeterRate; 2]>> {
        let m = Self::array_index(
            self.prog.meters.iter().map(|m| m.name.as_str()),
            "meter",
            name,
        )?;
        let i = Self::cell_index(self.st.meters[m].len(), index, name)?;
        Ok(self.st.meters[m][i].rates)
    }

    /// Reads a register cell.
    pub fn register_read(&self, name: &str, index: u64) -> R<u128> {
        let r = Self::array_index(
            self.prog.registers.iter().map(|r| r.name.as_str()),
            "register",
            name,
        )?;
        let i = Self::cell_index(self.st.registers[r].len(), index, name)?;
        Ok(self.st.registers[r][i])
    }

    /// Writes a register cell (the value must fit the register width).
    pub fn register_write(&mut self, name: &str, index: u64, value: u128) -> R<()> {
        let r = Self::array_index(
            self.prog.registers.iter().map(|r| r.name.as_str()),
            "register",
            name,
        )?;
        let i = Self::cell_index(self.st.registers[r].len(), index, name)?;
        let w = self.prog.registers[r].width;
        if value & !mask(w) != 0 {
            return Err(RuntimeError::InvalidArgument(format!(
                "{name}: value does not fit in {w} bits"
            )));
        }
        self.st.registers[r][i] = value;
        Ok(())
    }

    /// Resets every cell of a register array to its initial value (0 unless the program
    /// gives one: TNA's `Register(size, initial)`), and a T2NA FIFO or stack to empty.
    pub fn register_reset(&mut self, name: &str) -> R<()> {
        let r = Self::array_index(
            self.prog.registers.iter().map(|r| r.name.as_str()),
            "register",
            name,
        )?;
        let initial = self.prog.registers[r].initial;
        self.st.registers[r].iter_mut().for_each(|x| *x = initial);
        // A T2NA register used as a FIFO or stack starts empty again.
        if let Some(pointers) = self.st.externs.pointers.get_mut(r) {
            *pointers = Default::default();
        }
        Ok(())
    }

    /// Adds a value (with mask) to a parser value set.
    pub fn value_set_add(&mut self, name: &str, value: u128, vmask: Option<u128>) -> R<()> {
        let v = Self::array_index(
            self.prog.value_sets.iter().map(|v| v.name.as_str()),
            "value set",
            name,
        )?;
        let vs = &self.prog.value_sets[v];
        let m = vmask.unwrap_or(mask(vs.width)) & mask(vs.width);
        let entry = (value & m, m);
        if self.st.vsets[v].contains(&entry) {
            return Err(RuntimeError::AlreadyExists(format!(
                "value set {name}: value exists"
            )));
        }
        if self.st.vsets[v].len() >= vs.max_size {
            return Err(RuntimeError::ResourceExhausted(format!(
                "value set {name} is full"
            )));
        }
        self.st.vsets[v].push(entry);
        Ok(())
    }

    /// Removes one value (with its mask, as added) from a parser value set.
    pub fn value_set_remove(&mut self, name: &str, value: u128, vmask: Option<u128>) -> R<()> {
        let v = Self::array_index(
            self.prog.value_sets.iter().map(|v| v.name.as_str()),
            "value set",
            name,
        )?;
        let m = vmask.unwrap_or(mask(self.prog.value_sets[v].width))
            & mask(self.prog.value_sets[v].width);
        let entry = (value & m, m);
        let Some(i) = self.st.vsets[v].iter().position(|e| *e == entry) else {
            return Err(RuntimeError::NotFound(format!(
                "value set {name}: no such value"
            )));
        };
        self.st.vsets[v].remove(i);
        Ok(())
    }

    /// A parser value set's values as (value, mask), in the order they were added.
    pub fn value_set_values(&self, name: &str) -> R<Vec<(u128, u128)>> {
        let v = Self::array_index(
            self.prog.value_sets.iter().map(|v| v.name.as_str()),
            "value set",
            name,
        )?;
        Ok(self.st.vsets[v].clone())
    }

    /// Removes every value of a parser value set.
    pub fn value_set_clear(&mut self, name: &str) -> R<()> {
        let v = Self::array_index(
            self.prog.value_sets.iter().map(|v| v.name.as_str()),
            "value set",
            name,
        )?;
        self.st.vsets[v].clear();
        Ok(())
    }
}
