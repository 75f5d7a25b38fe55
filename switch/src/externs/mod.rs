//! Tofino's extern objects (TNA/T2NA), one file per family: what a loaded program
//! declares of them ([`ExternDefs`]), their run-time state ([`ExternState`]) and the
//! calls a parser, control or deparser makes ([`ExternPrim`], run by [`exec`]).
//! Externs that mean what a BMv2 primitive means (counters, meters, `Hash.get`,
//! `Random.get`, `Register.read`/`write`) are loaded as those primitives instead.

mod checksum;
mod emit;
mod parser_counter;
mod register_action;

use emit::Slot;
pub use parser_counter::Shape as CounterShape;
pub use register_action::RegisterActionDef;

use crate::exec::{eval, store, State};
use crate::packet::Packet;
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
    /// `Checksum.verify()`: 1 when the sum so far is 0xFFFF (complement 0).
    ChecksumVerify { inst: u32, dest: LValue },
    /// `Checksum.get()`: the complement of the sum so far.
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
    /// `RegisterAction.execute(index)` and `execute_log()` (`index` None): runs the
    /// action's body on one cell; results go to `dests` (None: result unused).
    RegisterAction {
        action: u32,
        index: Option<Expr>,
        dests: Vec<Option<LValue>>,
    },
    /// `this.predicate(c1, ...)` inside a RegisterAction body.
    Predicate { conds: Vec<Expr>, dest: LValue },
    /// `ParserCounter.set(value[, max, rotate, mask, add])`.
    ParserCounterSet {
        inst: u32,
        value: Expr,
        shape: Option<parser_counter::Shape>,
    },
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
    /// Per register array: where the next `execute_log` writes.
    pub(crate) log_next: Vec<u32>,
}

impl ExternState {
    /// Fresh state for `p`'s externs.
    pub fn new(p: &Program) -> Self {
        ExternState {
            sums: vec![0; p.externs.checksums.len()],
            deposit: None,
            counters: vec![0; p.externs.parser_counters.len()],
            log_next: vec![0; p.registers.len()],
        }
    }

    /// Forgets what a previous packet's parse left (sums, counters, a pending deposit).
    pub fn start_parse(&mut self) {
        self.sums.fill(0);
        self.counters.fill(0);
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
            let ok = checksum::sum(st, *inst) == 0xffff;
            store(p, st, pkt, data, dest, u128::from(ok));
        }
        ExternPrim::ChecksumGet { inst, dest } => {
            let v = !checksum::sum(st, *inst);
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
        ExternPrim::RegisterAction {
            action,
            index,
            dests,
        } => register_action::execute(p, st, pkt, data, *action, index.as_ref(), dests),
        ExternPrim::Predicate { conds, dest } => {
            let shift = conds
                .iter()
                .enumerate()
                .map(|(i, c)| u32::from(eval(p, st, pkt, data, c) != 0) << i)
                .sum::<u32>();
            store(p, st, pkt, data, dest, 1u128 << shift);
        }
        ExternPrim::ParserCounterSet { inst, value, shape } => {
            let v = eval(p, st, pkt, data, value);
            parser_counter::set(st, *inst, v, shape.as_ref());
        }
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
