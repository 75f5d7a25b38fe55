//! Tofino's extern objects (TNA/T2NA), one file per family: what a loaded program
//! declares of them ([`ExternDefs`]), their run-time state ([`ExternState`]) and the
//! calls a parser, control or deparser makes ([`ExternPrim`], run by [`exec`]).
//! Externs that mean what a BMv2 primitive means (counters, meters, `Hash.get`,
//! `Random.get`, `Register.read`/`write`, `RegisterParam.read`) are loaded as those
//! primitives instead. The control plane's side of the filters is in `runtime::filters`.
//! Each pipe's packet generator ([`pktgen`]) is here too: the engine's clock runs it.

mod checksum;
mod direct;
mod emit;
mod lpf;
mod math_unit;
mod parser_counter;
pub mod pktgen;
mod register_action;
mod wred;

use direct::DirectCells;
use emit::Slot;
pub use lpf::{LpfCell, LpfMode, LpfSpec};
pub use math_unit::{MathOp, MathUnitDef};
pub use parser_counter::Shape as CounterShape;
pub use register_action::{Cell as RegisterCell, Pointers, RegisterActionDef};
pub use wred::{WredCell, WredSpec};

use crate::exec::{eval, store, State};
use crate::packet::{refill, Packet};
use crate::program::{Calculation, Expr, FieldId, LValue, Program};

/// One call of a Tofino extern, resolved at load time.
#[derive(Debug, Clone)]
pub enum ExternPrim {
    /// `Checksum.add(data)` (`negate`: `subtract(data)`) into checksum `inst`'s sum.
    ChecksumAdd {
        inst: u32,
        data: Calculation,
        negate: bool,
    },
    /// `Checksum.verify()`: 1 when the sum so far is not 0xFFFF (a wrong checksum).
    ChecksumVerify { inst: u32, dest: LValue },
    /// `Checksum.get()`: the ones'-complement sum so far.
    ChecksumGet { inst: u32, dest: LValue },
    /// `Checksum.subtract_all_and_deposit(dest)`: from here to the end of parsing every
    /// extracted header is subtracted, and `dest` gets the sum when parsing ends.
    ChecksumDeposit { inst: u32, dest: LValue },
    /// `Checksum.update(data[, zeros_as_ones])` in a deparser.
    ChecksumUpdate {
        data: Calculation,
        zeros_as_ones: bool,
        dest: LValue,
    },
    /// `RegisterAction.execute(index)`, `execute_log()` and
    /// `DirectRegisterAction.execute()`: runs the action's body on one cell; results
    /// go to `dests` (None: result unused).
    RegisterAction {
        action: u32,
        at: register_action::Cell,
        dests: Vec<Option<LValue>>,
    },
    /// `Lpf.execute(value, index)` (`index` None: `DirectLpf.execute(value)`).
    Lpf {
        inst: u32,
        value: Expr,
        index: Option<Expr>,
        dest: LValue,
    },
    /// `Wred.execute(value, index)` (`index` None: `DirectWred.execute(value)`).
    Wred {
        inst: u32,
        value: Expr,
        index: Option<Expr>,
        dest: LValue,
    },
    /// `MathUnit.execute(value)` inside a RegisterAction body.
    MathUnit {
        unit: u32,
        value: Expr,
        dest: LValue,
    },
    /// `this.predicate(c1, ...)` inside a RegisterAction body.
    Predicate { conds: Vec<Expr>, dest: LValue },
    /// T2NA `this.address()` inside a RegisterAction body: the cell's index.
    Address(LValue),
    /// T2NA `this.min8/max8/min16/max16(value, mask[, index])` inside a body.
    MinMax {
        value: Expr,
        mask: Expr,
        /// Lane width: 8 or 16.
        lane: u32,
        max: bool,
        dest: LValue,
        index: Option<LValue>,
    },
    /// `ParserCounter.set(value[, max, rotate, mask, add])`.
    ParserCounterSet {
        inst: u32,
        value: Expr,
        shape: Option<parser_counter::Shape>,
    },
    /// Tofino 2 `ParserCounter.push(value[, max, rotate, mask, add][, update_with_top])`.
    ParserCounterPush {
        inst: u32,
        value: Expr,
        shape: Option<parser_counter::Shape>,
        update_with_top: Option<Expr>,
    },
    /// Tofino 2 `ParserCounter.pop()`.
    ParserCounterPop(u32),
    /// `ParserCounter.increment(n)` / `decrement(n)` (`by` already signed).
    ParserCounterAdd { inst: u32, by: Expr, negate: bool },
    /// `ParserCounter.is_zero()` (`negative`: `is_negative()`).
    ParserCounterTest {
        inst: u32,
        negative: bool,
        dest: LValue,
    },
    /// `ParserPriority.set(p)`: kept for the trace; the engine does not drop by it.
    ParserPrioritySet(Expr),
    /// `port_metadata_unpack<T>(pkt)`: fields read from the port-metadata slot.
    PortMetadataUnpack {
        bits: u32,
        fields: Vec<(FieldId, u32)>,
    },
    /// `invalidate(field)`: the field reads as never written (0 here).
    Invalidate(LValue),
    /// `Mirror.emit(session[, header])` in a deparser: the header's fields.
    MirrorEmit { session: Expr, header: Vec<FieldId> },
    /// `Resubmit.emit([header])` in the ingress deparser: the header's fields.
    ResubmitEmit { header: Vec<FieldId> },
    /// `Digest.pack(data)`: a learn list sent to the control plane.
    DigestPack(u32),
}

/// The extern instances a program declares, by kind.
#[derive(Debug, Clone, Default)]
pub struct ExternDefs {
    /// `Checksum` instances, by name.
    pub checksums: Vec<String>,
    /// `ParserCounter` instances, by name.
    pub parser_counters: Vec<String>,
    /// RegisterActions (and T2NA's numbered forms).
    pub register_actions: Vec<RegisterActionDef>,
    /// The program has a `Resubmit` instance (the engine then keeps each received
    /// frame for a second pass).
    pub resubmits: bool,
    /// The program has a `Mirror` instance (an ingress mirror copies the frame as
    /// received, so the engine keeps it).
    pub mirrors: bool,
    /// `Lpf` and `DirectLpf` instances.
    pub lpfs: Vec<FilterDef>,
    /// `Wred` and `DirectWred` instances.
    pub wreds: Vec<FilterDef>,
    /// `MathUnit` instances.
    pub math_units: Vec<MathUnitDef>,
    /// Per register array: the table whose entries are a `DirectRegister`'s cells.
    pub direct_register_tables: Vec<Option<u32>>,
}

/// An `Lpf`/`Wred` instance, or a direct one.
#[derive(Debug, Clone)]
pub struct FilterDef {
    /// Control-plane name.
    pub name: String,
    /// Cells of an indexed instance (a direct one has one per entry of `binding`).
    pub size: usize,
    /// Width of the filtered value, bits.
    pub width: u32,
    /// `DirectLpf`/`DirectWred`.
    pub direct: bool,
    /// A direct instance's table (None: indexed, or direct with no table naming it).
    pub binding: Option<u32>,
    /// Wred: the value returned for a drop, and for no drop.
    pub drop_values: (u8, u8),
}

/// An indexed filter's cells, or a direct one's.
#[derive(Debug, Clone)]
pub(crate) enum FilterCells<T> {
    Indexed(Vec<T>),
    Direct(DirectCells<T>),
}

impl<T: Clone + Default> FilterCells<T> {
    fn new(p: &Program, def: &FilterDef) -> Self {
        match def.binding {
            Some(t) => {
                let size = p.tables.get(t as usize).map_or(0, |t| t.max_size);
                FilterCells::Direct(DirectCells::new(size, T::default()))
            }
            None => FilterCells::Indexed(vec![T::default(); def.size]),
        }
    }
}

/// Run-time state of a program's externs.
#[derive(Debug, Clone, Default)]
pub struct ExternState {
    /// Per checksum instance: its ones'-complement sum for the packet being parsed.
    pub(crate) sums: Vec<u16>,
    /// The residual a `subtract_all_and_deposit` is collecting: instance and destination.
    pub(crate) deposit: Option<(u32, LValue)>,
    /// Per parser counter: its value for the packet being parsed.
    pub(crate) counters: Vec<i16>,
    /// Per parser counter: its saved values (Tofino 2).
    pub(crate) counter_stacks: Vec<parser_counter::Stack>,
    /// Per register array: where the next `execute_log` writes.
    pub(crate) log_next: Vec<u32>,
    /// Per register array: its FIFO and stack pointers (T2NA).
    pub(crate) pointers: Vec<Pointers>,
    /// The index of the cell the running RegisterAction body updates.
    pub(crate) address: u128,
    /// Per register array: a `DirectRegister`'s per-entry cells (empty otherwise).
    pub(crate) direct_registers: Vec<DirectCells<u128>>,
    /// Per `Lpf`/`DirectLpf` instance: its cells.
    pub(crate) lpfs: Vec<FilterCells<LpfCell>>,
    /// Per `Wred`/`DirectWred` instance: its cells.
    pub(crate) wreds: Vec<FilterCells<WredCell>>,
    /// The table being applied and the entry it hit (None: a miss), which direct
    /// externs address.
    pub(crate) hit: Option<(u32, Option<u32>)>,
}

impl ExternState {
    /// Fresh state for `p`'s externs.
    pub fn new(p: &Program) -> Self {
        ExternState {
            sums: vec![0; p.externs.checksums.len()],
            deposit: None,
            counters: vec![0; p.externs.parser_counters.len()],
            counter_stacks: vec![parser_counter::Stack::default(); p.externs.parser_counters.len()],
            log_next: vec![0; p.registers.len()],
            pointers: vec![Pointers::default(); p.registers.len()],
            address: 0,
            direct_registers: p
                .registers
                .iter()
                .enumerate()
                .map(|(r, def)| {
                    let size = match p.externs.direct_register_tables.get(r) {
                        Some(Some(t)) => p.tables.get(*t as usize).map_or(0, |t| t.max_size),
                        _ => 0,
                    };
                    DirectCells::new(size, def.initial)
                })
                .collect(),
            lpfs: p
                .externs
                .lpfs
                .iter()
                .map(|d| FilterCells::new(p, d))
                .collect(),
            wreds: p
                .externs
                .wreds
                .iter()
                .map(|d| FilterCells::new(p, d))
                .collect(),
            hit: None,
        }
    }

    /// Puts the direct extern cells of entry `handle` of table `table` back to their
    /// initial state: what a new entry starts with (call when an entry is added).
    pub fn reset_entry(&mut self, p: &Program, table: u32, handle: u32) {
        for (r, t) in p.externs.direct_register_tables.iter().enumerate() {
            if *t == Some(table) {
                self.direct_registers[r].reset(handle);
            }
        }
        for (def, cells) in p.externs.lpfs.iter().zip(&mut self.lpfs) {
            if let (Some(t), FilterCells::Direct(c)) = (def.binding, cells) {
                if t == table {
                    c.reset(handle);
                }
            }
        }
        for (def, cells) in p.externs.wreds.iter().zip(&mut self.wreds) {
            if let (Some(t), FilterCells::Direct(c)) = (def.binding, cells) {
                if t == table {
                    c.reset(handle);
                }
            }
        }
    }

    /// Forgets what a previous packet's parse left (sums, counters, a pending deposit).
    pub fn start_parse(&mut self) {
        refill(&mut self.sums, 0);
        refill(&mut self.counters, 0);
        refill(&mut self.counter_stacks, parser_counter::Stack::default());
        self.deposit = None;
    }
}

/// Runs one extern call.
pub fn exec(p: &Program, st: &mut State, pkt: &mut Packet, data: &[u128], prim: &ExternPrim) {
    match prim {
        ExternPrim::ChecksumAdd {
            inst,
            data: fields,
            negate,
        } => checksum::add(p, st, pkt, *inst, fields, *negate),
        ExternPrim::ChecksumVerify { inst, dest } => {
            // The error flag Tofino's parser sets: 1 when the data do not sum to 0xFFFF.
            // (tofino1_base.p4's comment reads "whether the checksum is valid"; Intel's own
            // programs and tests, e.g. open-p4studio's tna_checksum, use it as the error.)
            let wrong = checksum::sum(st, *inst) != 0xffff;
            store(p, st, pkt, data, dest, u128::from(wrong));
        }
        ExternPrim::ChecksumGet { inst, dest } => {
            // The sum itself: after subtracting the fields a program will change, what the
            // deparser's update() adds the new values to (an incremental update).
            let v = checksum::sum(st, *inst);
            store(p, st, pkt, data, dest, u128::from(v));
        }
        ExternPrim::ChecksumDeposit { inst, dest } => {
            st.externs.deposit = Some((*inst, dest.clone()));
        }
        ExternPrim::ChecksumUpdate {
            data: fields,
            zeros_as_ones,
            dest,
        } => {
            let v = checksum::update(p, st, pkt, fields, *zeros_as_ones);
            store(p, st, pkt, data, dest, u128::from(v));
        }
        ExternPrim::RegisterAction { action, at, dests } => {
            register_action::execute(p, st, pkt, data, *action, at, dests)
        }
        ExternPrim::Lpf {
            inst,
            value,
            index,
            dest,
        } => {
            let Some(def) = p.externs.lpfs.get(*inst as usize) else {
                return;
            };
            let x = eval(p, st, pkt, data, value);
            let at = index.as_ref().map(|e| eval(p, st, pkt, data, e));
            let handle = def.binding.and_then(|t| direct_handle(st, t));
            let now = pkt.now;
            let y = filter_cell(&mut st.externs.lpfs[*inst as usize], at, handle)
                .map_or(x, |c| c.execute(x, now, def.width));
            store(p, st, pkt, data, dest, y);
        }
        ExternPrim::Wred {
            inst,
            value,
            index,
            dest,
        } => {
            let Some(def) = p.externs.wreds.get(*inst as usize) else {
                return;
            };
            let x = eval(p, st, pkt, data, value);
            let at = index.as_ref().map(|e| eval(p, st, pkt, data, e));
            let handle = def.binding.and_then(|t| direct_handle(st, t));
            let now = pkt.now;
            // A uniform draw in [0, 1) from the top 53 bits.
            let u = (st.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let drop = filter_cell(&mut st.externs.wreds[*inst as usize], at, handle)
                .is_some_and(|c| c.execute(x, now, u));
            let (yes, no) = def.drop_values;
            store(
                p,
                st,
                pkt,
                data,
                dest,
                u128::from(if drop { yes } else { no }),
            );
        }
        ExternPrim::MathUnit { unit, value, dest } => {
            let x = eval(p, st, pkt, data, value);
            let y = p
                .externs
                .math_units
                .get(*unit as usize)
                .map_or(0, |m| m.execute(x));
            store(p, st, pkt, data, dest, y);
        }
        ExternPrim::Predicate { conds, dest } => {
            let shift = conds
                .iter()
                .enumerate()
                .map(|(i, c)| u32::from(eval(p, st, pkt, data, c) != 0) << i)
                .sum::<u32>();
            store(p, st, pkt, data, dest, 1u128 << shift);
        }
        ExternPrim::Address(dest) => {
            let a = st.externs.address;
            store(p, st, pkt, data, dest, a);
        }
        ExternPrim::MinMax {
            value,
            mask,
            lane,
            max,
            dest,
            index,
        } => {
            let v = eval(p, st, pkt, data, value);
            let m = eval(p, st, pkt, data, mask);
            let (best, at) = register_action::min_max(v, m, *lane, *max);
            store(p, st, pkt, data, dest, best);
            if let Some(lv) = index {
                store(p, st, pkt, data, lv, at);
            }
        }
        ExternPrim::ParserCounterSet { inst, value, shape } => {
            let v = eval(p, st, pkt, data, value);
            parser_counter::set(st, *inst, v, shape.as_ref());
        }
        ExternPrim::ParserCounterPush {
            inst,
            value,
            shape,
            update_with_top,
        } => {
            let v = eval(p, st, pkt, data, value);
            let update = update_with_top
                .as_ref()
                .is_some_and(|e| eval(p, st, pkt, data, e) != 0);
            parser_counter::push(st, *inst, v, shape.as_ref(), update);
        }
        ExternPrim::ParserCounterPop(inst) => parser_counter::pop(st, *inst),
        ExternPrim::ParserCounterAdd { inst, by, negate } => {
            let by = eval(p, st, pkt, data, by) as i16;
            parser_counter::add(st, *inst, if *negate { by.wrapping_neg() } else { by });
        }
        ExternPrim::ParserCounterTest {
            inst,
            negative,
            dest,
        } => {
            let v = parser_counter::value(st, *inst);
            let hit = if *negative { v < 0 } else { v == 0 };
            store(p, st, pkt, data, dest, u128::from(hit));
        }
        ExternPrim::ParserPrioritySet(_) => {}
        ExternPrim::PortMetadataUnpack { bits, fields } => {
            emit::port_metadata_unpack(p, pkt, *bits, fields)
        }
        ExternPrim::Invalidate(lv) => store(p, st, pkt, data, lv, 0),
        ExternPrim::MirrorEmit { session, header } => {
            let s = eval(p, st, pkt, data, session);
            pkt.tna.mirror_session = Some(s as u16);
            emit::pack_fields(p, pkt, header, Slot::Mirror);
        }
        ExternPrim::ResubmitEmit { header } => {
            pkt.tna.resubmit = true;
            emit::pack_fields(p, pkt, header, Slot::Resubmit);
        }
        ExternPrim::DigestPack(list) => pkt.flags.digest = Some(*list),
    }
}

/// The entry a direct extern bound to `table` addresses: the one that table hit, or
/// its miss cell (None: a miss, or a call from another table's action).
pub(crate) fn direct_handle(st: &State, table: u32) -> Option<u32> {
    match st.externs.hit {
        Some((t, h)) if t == table => h,
        _ => None,
    }
}

/// The cell a filter call addresses: `index` of an indexed instance (wrapping, as
/// Tofino's address does), or `handle`'s of a direct one.
fn filter_cell<T: Clone>(
    cells: &mut FilterCells<T>,
    index: Option<u128>,
    handle: Option<u32>,
) -> Option<&mut T> {
    match cells {
        FilterCells::Indexed(v) if !v.is_empty() => {
            let n = v.len();
            v.get_mut((index.unwrap_or(0) % n as u128) as usize)
        }
        FilterCells::Indexed(_) => None,
        FilterCells::Direct(d) => Some(d.cell(handle)),
    }
}

/// Subtracts an extracted header from a pending `subtract_all_and_deposit` residual.
pub(crate) fn on_extract(p: &Program, st: &mut State, pkt: &Packet, h: crate::program::HeaderId) {
    if let Some((inst, _)) = st.externs.deposit {
        checksum::subtract_header(p, st, pkt, inst, h);
    }
}

/// Writes a pending `subtract_all_and_deposit` residual into its destination.
pub(crate) fn end_parse(p: &Program, st: &mut State, pkt: &mut Packet) {
    if let Some((inst, dest)) = st.externs.deposit.take() {
        let v = checksum::sum(st, inst);
        store(p, st, pkt, &[], &dest, u128::from(v));
    }
}
