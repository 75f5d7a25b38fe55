//! The control plane's side of the Tofino filters: each `Lpf`/`Wred` cell's
//! configuration, set and read as BF Runtime's LPF and WRED tables do (by index,
//! or, for a direct instance, by the entry handle of its table), and a cell's state
//! read back; and a `DirectRegister`'s cell of an entry, which BF Runtime shows as
//! a data field of the entry. Names resolve as every runtime name does (`locate`):
//! `Ingress.lpf`, or with the pipe in front (`pipe.Ingress.lpf`) as P4Info names it.

use super::{Object, R};
use crate::engine::Engine;
use crate::error::RuntimeError;
use crate::externs::{FilterCells, FilterDef, LpfCell, LpfSpec, WredCell, WredSpec};

/// The cell `index` of `cells` (an entry handle for a direct instance).
fn cell_mut<'a, T: Clone>(
    cells: &'a mut FilterCells<T>,
    def: &FilterDef,
    index: u64,
) -> R<&'a mut T> {
    match cells {
        FilterCells::Indexed(v) => {
            let n = v.len();
            v.get_mut(index as usize).ok_or_else(|| {
                RuntimeError::OutOfRange(format!("{}: index {index} is outside 0..{n}", def.name))
            })
        }
        FilterCells::Direct(d) => Ok(d.cell(Some(index as u32))),
    }
}

impl Engine {
    /// The gress and instance number of filter `name` (an Lpf or a Wred).
    fn filter(&self, kind: Object, name: &str) -> R<(usize, usize)> {
        let (g, local) = self.locate(kind, name)?;
        let externs = &self.gress(g).prog.externs;
        let defs = if kind == Object::Lpf {
            &externs.lpfs
        } else {
            &externs.wreds
        };
        defs.iter()
            .position(|d| d.name == local)
            .map(|i| (g, i))
            .ok_or_else(|| RuntimeError::NotFound(format!("'{name}' does not exist")))
    }

    /// Configures cell `index` of Lpf `name` (a DirectLpf's entry handle); its filter
    /// state starts afresh, as BF Runtime's entry add or modify starts it.
    pub fn lpf_set(&mut self, name: &str, index: u64, spec: LpfSpec) -> R<()> {
        spec.validate()
            .map_err(|m| RuntimeError::InvalidArgument(format!("{name}: {m}")))?;
        let (g, i) = self.filter(Object::Lpf, name)?;
        let gress = self.gress_mut(g);
        let def = &gress.prog.externs.lpfs[i];
        *cell_mut(&mut gress.st.externs.lpfs[i], def, index)? = LpfCell {
            spec,
            ..LpfCell::default()
        };
        Ok(())
    }

    /// Cell `index` of Lpf `name`: its configuration and state.
    pub fn lpf_get(&mut self, name: &str, index: u64) -> R<LpfCell> {
        let (g, i) = self.filter(Object::Lpf, name)?;
        let gress = self.gress_mut(g);
        let def = &gress.prog.externs.lpfs[i];
        Ok(*cell_mut(&mut gress.st.externs.lpfs[i], def, index)?)
    }

    /// Configures cell `index` of Wred `name` (a DirectWred's entry handle); its
    /// average starts afresh.
    pub fn wred_set(&mut self, name: &str, index: u64, spec: WredSpec) -> R<()> {
        spec.validate()
            .map_err(|m| RuntimeError::InvalidArgument(format!("{name}: {m}")))?;
        let (g, i) = self.filter(Object::Wred, name)?;
        let gress = self.gress_mut(g);
        let def = &gress.prog.externs.wreds[i];
        *cell_mut(&mut gress.st.externs.wreds[i], def, index)? = WredCell::configured(spec);
        Ok(())
    }

    /// Cell `index` of Wred `name`: its configuration and state.
    pub fn wred_get(&mut self, name: &str, index: u64) -> R<WredCell> {
        let (g, i) = self.filter(Object::Wred, name)?;
        let gress = self.gress_mut(g);
        let def = &gress.prog.externs.wreds[i];
        Ok(*cell_mut(&mut gress.st.externs.wreds[i], def, index)?)
    }

    /// The gress and register number of DirectRegister `name`, with its table.
    fn direct_register(&self, name: &str) -> R<(usize, usize)> {
        let (g, local) = self.locate(Object::Register, name)?;
        let prog = &self.gress(g).prog;
        let r = prog
            .registers
            .iter()
            .position(|x| x.name == local)
            .ok_or_else(|| RuntimeError::NotFound(format!("register '{name}' does not exist")))?;
        match prog.externs.direct_register_tables.get(r) {
            Some(Some(_)) => Ok((g, r)),
            _ => Err(RuntimeError::InvalidArgument(format!(
                "{name} is not a DirectRegister bound to a table"
            ))),
        }
    }

    /// The cell of DirectRegister `name` that entry `handle` of its table holds.
    pub fn direct_register_read(&mut self, name: &str, handle: u32) -> R<u128> {
        let (g, r) = self.direct_register(name)?;
        let st = &mut self.gress_mut(g).st;
        Ok(*st.externs.direct_registers[r].cell(Some(handle)))
    }

    /// Writes the cell of DirectRegister `name` that entry `handle` holds.
    pub fn direct_register_write(&mut self, name: &str, handle: u32, value: u128) -> R<()> {
        let (g, r) = self.direct_register(name)?;
        let gress = self.gress_mut(g);
        let w = gress.prog.registers[r].width;
        if value & !crate::bits::mask(w) != 0 {
            return Err(RuntimeError::InvalidArgument(format!(
                "{name}: value does not fit in {w} bits"
            )));
        }
        *gress.st.externs.direct_registers[r].cell(Some(handle)) = value;
        Ok(())
    }
}
