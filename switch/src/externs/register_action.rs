//! Tofino's `RegisterAction` (and T2NA's numbered forms): a stateful ALU program
//! run on one register cell per packet as one atomic read-modify-write. The cell
//! is copied into the action's state fields, the body runs over them (and any
//! packet field it reads), and the state goes back to the cell; the results
//! (`rv`, `rv1`...) then go where the call sends them.

use crate::bits::mask;
use crate::exec::{eval, run_body, store, State};
use crate::packet::Packet;
use crate::program::{Expr, FieldId, LValue, Prim, Program};

/// A RegisterAction as loaded.
#[derive(Debug, Clone)]
pub struct RegisterActionDef {
    /// Control-plane name.
    pub name: String,
    /// The register array it updates.
    pub register: u32,
    /// The cell's fields in the state header, most significant first (one for a
    /// plain cell, two for Tofino's paired registers), with their widths.
    pub value: Vec<(FieldId, u32)>,
    /// The result fields `rv1`, `rv2`, ... in the state header.
    pub results: Vec<FieldId>,
    /// The `apply` body.
    pub prims: Vec<Prim>,
    /// A `DirectRegisterAction`'s table: the register's cells are that table's
    /// entries' (None: an indexed register, or a direct one no table names, whose
    /// one cell is index 0).
    pub binding: Option<u32>,
}

/// Which cell a register action runs on.
#[derive(Debug, Clone)]
pub enum Cell {
    /// `execute(index)`.
    Index(Expr),
    /// `execute_log()`: the register's log pointer, which then moves on by one.
    Log,
    /// `DirectRegisterAction.execute()`: the cell of the entry the bound table hit.
    Direct,
}

/// Runs register action `action` on cell `at`.
pub(super) fn execute(
    p: &Program,
    st: &mut State,
    pkt: &mut Packet,
    data: &[u128],
    action: u32,
    at: &Cell,
    dests: &[Option<LValue>],
) {
    let Some(ra) = p.externs.register_actions.get(action as usize) else {
        return;
    };
    let reg = ra.register as usize;
    let direct = match (at, ra.binding) {
        (Cell::Direct, Some(table)) => Some(super::direct_handle(st, table)),
        _ => None,
    };
    let i = match direct {
        Some(_) => 0,
        None => {
            let size = st.registers[reg].len();
            if size == 0 {
                return;
            }
            let i = match at {
                Cell::Index(e) => eval(p, st, pkt, data, e),
                Cell::Direct => 0,
                Cell::Log => {
                    let next = &mut st.externs.log_next[reg];
                    let at = *next as usize % size;
                    *next = ((at + 1) % size) as u32;
                    at as u128
                }
            };
            // Tofino's ALU addresses the register with the index's low bits: an index
            // past the end wraps rather than being ignored.
            (i % size as u128) as usize
        }
    };
    let mut cell = match direct {
        Some(h) => *st.externs.direct_registers[reg].cell(h),
        None => st.registers[reg][i],
    };
    for &(f, w) in ra.value.iter().rev() {
        pkt.phv.set(p, f, cell & mask(w));
        cell = if w >= 128 { 0 } else { cell >> w };
    }
    for &f in &ra.results {
        pkt.phv.set(p, f, 0);
    }
    run_body(p, st, pkt, data, &ra.prims);
    let mut cell = 0u128;
    for &(f, w) in &ra.value {
        cell = if w >= 128 { 0 } else { cell << w } | pkt.phv.get(p, f) & mask(w);
    }
    let cell = cell & mask(p.registers[reg].width);
    match direct {
        Some(h) => *st.externs.direct_registers[reg].cell(h) = cell,
        None => st.registers[reg][i] = cell,
    }
    for (dest, &f) in dests.iter().zip(&ra.results) {
        if let Some(lv) = dest {
            let v = pkt.phv.get(p, f);
            store(p, st, pkt, data, lv, v);
        }
    }
}
