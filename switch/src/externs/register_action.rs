//! Tofino's `RegisterAction` (and T2NA's numbered forms, `DirectRegisterAction`
//! and `MinMaxAction`): a stateful ALU program run on one register cell per
//! packet as one atomic read-modify-write. The cell is copied into the action's
//! state fields, the body runs over them (and any packet field it reads), and the
//! state goes back to the cell; the results (`rv`, `rv1`...) then go where the
//! call sends them.
//!
//! T2NA's `enqueue`/`dequeue` use the register as a FIFO and `push`/`pop` as a
//! stack (pointers kept per register): the body runs on the cell enqueued to,
//! dequeued from, pushed to or popped from, and the pointer moves. A full FIFO or
//! stack runs the action's `overflow` body instead (on the cell at the FIFO's
//! head, or the stack's top element), an empty one its `underflow` body (on the
//! FIFO's head, or the stack's bottom cell), and the pointers stay; without that
//! body nothing runs and the results are 0.

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
    /// T2NA: the body run instead of `apply` when `enqueue`/`push` finds the
    /// register full.
    pub overflow: Option<Vec<Prim>>,
    /// T2NA: the body run instead of `apply` when `dequeue`/`pop` finds it empty.
    pub underflow: Option<Vec<Prim>>,
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
    /// T2NA `enqueue()`: the cell after the FIFO's last.
    Enqueue,
    /// T2NA `dequeue()`: the FIFO's first cell.
    Dequeue,
    /// T2NA `push()`: the cell above the stack's top.
    Push,
    /// T2NA `pop()`: the stack's top cell.
    Pop,
}

/// A register's FIFO and stack pointers (T2NA).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pointers {
    /// The FIFO's first cell.
    pub head: u32,
    /// Cells in the FIFO.
    pub len: u32,
    /// Cells on the stack (the next push writes cell `top`).
    pub top: u32,
}

/// Which body runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Body {
    Apply,
    Overflow,
    Underflow,
}

/// The indexed cell `at` addresses in a register of `size` cells, the body that
/// runs on it, and the register's pointers moved as the call moves them.
fn place(at: &Cell, index: u128, size: u32, ptr: &mut Pointers, log: &mut u32) -> (u32, Body) {
    let n = size;
    match at {
        // Tofino's ALU addresses the register with the index's low bits: an index
        // past the end wraps rather than being ignored.
        Cell::Index(_) => ((index % u128::from(n)) as u32, Body::Apply),
        Cell::Direct => (0, Body::Apply),
        Cell::Log => {
            let i = *log % n;
            *log = (i + 1) % n;
            (i, Body::Apply)
        }
        Cell::Enqueue if ptr.len >= n => (ptr.head, Body::Overflow),
        Cell::Enqueue => {
            ptr.len += 1;
            ((ptr.head + ptr.len - 1) % n, Body::Apply)
        }
        Cell::Dequeue if ptr.len == 0 => (ptr.head, Body::Underflow),
        Cell::Dequeue => {
            let i = ptr.head;
            ptr.head = (ptr.head + 1) % n;
            ptr.len -= 1;
            (i, Body::Apply)
        }
        Cell::Push if ptr.top >= n => (n - 1, Body::Overflow),
        Cell::Push => {
            ptr.top += 1;
            (ptr.top - 1, Body::Apply)
        }
        Cell::Pop if ptr.top == 0 => (0, Body::Underflow),
        Cell::Pop => {
            ptr.top -= 1;
            (ptr.top, Body::Apply)
        }
    }
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
    let (i, body) = match direct {
        Some(h) => {
            // A direct cell's address is its entry's handle; the miss cell's is the
            // one after the table's entries.
            let size = p
                .tables
                .get(ra.binding.unwrap_or(0) as usize)
                .map_or(0, |t| t.max_size);
            (h.map_or(size as u32, |h| h), Body::Apply)
        }
        None => {
            let size = st.registers[reg].len();
            if size == 0 {
                return;
            }
            let index = match at {
                Cell::Index(e) => eval(p, st, pkt, data, e),
                _ => 0,
            };
            let x = &mut st.externs;
            place(
                at,
                index,
                size as u32,
                &mut x.pointers[reg],
                &mut x.log_next[reg],
            )
        }
    };
    let prims = match body {
        Body::Apply => Some(&ra.prims),
        Body::Overflow => ra.overflow.as_ref(),
        Body::Underflow => ra.underflow.as_ref(),
    };
    for &f in &ra.results {
        pkt.phv.set(p, f, 0);
    }
    if let Some(prims) = prims {
        let mut cell = match direct {
            Some(h) => *st.externs.direct_registers[reg].cell(h),
            None => st.registers[reg][i as usize],
        };
        for &(f, w) in ra.value.iter().rev() {
            pkt.phv.set(p, f, cell & mask(w));
            cell = if w >= 128 { 0 } else { cell >> w };
        }
        st.externs.address = u128::from(i);
        run_body(p, st, pkt, data, prims);
        let mut cell = 0u128;
        for &(f, w) in &ra.value {
            cell = if w >= 128 { 0 } else { cell << w } | pkt.phv.get(p, f) & mask(w);
        }
        let cell = cell & mask(p.registers[reg].width);
        match direct {
            Some(h) => *st.externs.direct_registers[reg].cell(h) = cell,
            None => st.registers[reg][i as usize] = cell,
        }
    }
    for (dest, &f) in dests.iter().zip(&ra.results) {
        if let Some(lv) = dest {
            let v = pkt.phv.get(p, f);
            store(p, st, pkt, data, lv, v);
        }
    }
}

/// T2NA's `min8`/`max8`/`min16`/`max16`: the smallest (`max`: largest) of the
/// `lane`-bit lanes of `value` (lane 0 the least significant) whose `lanes` mask
/// bit is set, and its lane number, the lowest on ties. No lane selected: the
/// lane's largest value for a min and 0 for a max, at lane 0.
pub(super) fn min_max(value: u128, lanes: u128, lane: u32, max: bool) -> (u128, u128) {
    let n = 128 / lane;
    let mut best: Option<(u128, u128)> = None;
    for k in 0..n {
        if lanes >> k & 1 == 0 {
            continue;
        }
        let v = value >> (k * lane) & mask(lane);
        let better = match best {
            None => true,
            Some((b, _)) => (max && v > b) || (!max && v < b),
        };
        if better {
            best = Some((v, u128::from(k)));
        }
    }
    best.unwrap_or((if max { 0 } else { mask(lane) }, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(calls: &[Cell], size: u32) -> Vec<(u32, bool)> {
        let mut ptr = Pointers::default();
        let mut log = 0;
        calls
            .iter()
            .map(|c| {
                let (i, b) = place(c, 0, size, &mut ptr, &mut log);
                (i, b == Body::Apply)
            })
            .collect()
    }

    #[test]
    fn a_fifo_fills_wraps_and_refuses_past_its_ends() {
        use Cell::*;
        let calls = [
            Dequeue, Enqueue, Enqueue, Enqueue, Enqueue, Dequeue, Enqueue, Dequeue, Dequeue,
            Dequeue, Dequeue,
        ];
        let got = run(&calls, 3);
        assert_eq!(
            got,
            [
                (0, false), // empty: underflow at the head
                (0, true),
                (1, true),
                (2, true),
                (0, false), // full: overflow at the head
                (0, true),  // first in, first out
                (0, true),  // the freed cell, wrapped
                (1, true),
                (2, true),
                (0, true),
                (1, false), // empty again, the head at cell 1
            ]
        );
    }

    #[test]
    fn a_stack_pushes_up_and_pops_down() {
        use Cell::*;
        let got = run(&[Pop, Push, Push, Push, Pop, Pop, Pop, Pop], 2);
        assert_eq!(
            got,
            [
                (0, false),
                (0, true),
                (1, true),
                (1, false),
                (1, true),
                (0, true),
                (0, false),
                (0, false)
            ]
        );
    }

    #[test]
    fn min_and_max_lanes_under_a_mask() {
        // 8-bit lanes 0..15 hold 16, 15, ..., 1; lane 3 holds 13.
        let value = (0..16u128).fold(0, |v, k| v | (16 - k) << (8 * k));
        assert_eq!(min_max(value, 0xffff, 8, false), (1, 15));
        assert_eq!(min_max(value, 0xffff, 8, true), (16, 0));
        assert_eq!(min_max(value, 0b1010, 8, false), (13, 3));
        // Ties go to the lowest lane; 16-bit lanes; an empty mask.
        assert_eq!(min_max(0x0005_0002_0002_0009, 0x0f, 16, false), (2, 1));
        assert_eq!(min_max(value, 0, 8, false), (0xff, 0));
        assert_eq!(min_max(value, 0, 16, true), (0, 0));
    }
}
