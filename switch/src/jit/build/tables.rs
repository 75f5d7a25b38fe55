//! Exact and LPM tables applied in place. A table whose key is whole fields
//! of at most 64 bits together (or that has no key), with no direct meter,
//! no action profile and no extern bound to it, is looked up by the
//! control's own code: an exact key of at most [`DIRECT_BITS`] bits indexes
//! the direct index's slots through the table's [`NativeView`]; a wider one,
//! or an LPM one, goes to [`crate::jit::run::packed_handle`] (the hash maps
//! stay Rust's). The handle found (or the miss) names a [`NativeCall`], and
//! an action compiled without an op left to the interpreter is called
//! straight from there with the call's data, after a hit's direct counter
//! counts the packet ([`crate::jit::run::count_hit`]), the control going on
//! at the table's successor. Anything else the lookup finds (an action that
//! leaves ops, a profile's member, a keyless table with entries) returns
//! the table op to the interpreter, before anything has changed, so it
//! applies the table as it would have.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, FuncRef, InstBuilder, MemFlagsData, Value};

use super::{off, Tr};
use crate::bits::mask;
use crate::exact::DIRECT_BITS;
use crate::jit::run::{Ctx, EXIT, LEFT};
use crate::program::{LookupKind, Node, Program};
use crate::tables::{NativeCall, NativeView, TableState, LEN_OFFSET, NO_ACTION, VIEW_OFFSET};

/// Whether native code may apply table `t` in place: its key is whole
/// fields packed into at most 64 bits (or it has none), and applying it
/// touches nothing but the action it runs and a direct counter (no direct
/// meter or extern, no profile).
pub(in crate::jit) fn in_place(p: &Program, t: usize) -> bool {
    let Some(def) = p.tables.get(t) else {
        return false;
    };
    let key = match &def.field_key {
        Some(key) => key
            .iter()
            .all(|&(f, _)| p.fields.get(f as usize).is_some_and(|fi| fi.width <= 64)),
        // A keyless table with a const default is inlined (`Op::Inline`):
        // its table op runs only once it has entries, which native code
        // leaves to the interpreter.
        None => def.keys.is_empty() && !def.default_entry.as_ref().is_some_and(|d| d.2),
    };
    let bound = |binding: Option<u32>| binding == Some(t as u32);
    let externs = &p.externs;
    key && def.direct_meter.is_none()
        && def.profile.is_none()
        && !externs.lpfs.iter().any(|e| bound(e.binding))
        && !externs.wreds.iter().any(|e| bound(e.binding))
        && !externs.register_actions.iter().any(|e| bound(e.binding))
}

/// Whether native code looks table `t` up through
/// [`crate::jit::run::packed_handle`]: it is an LPM table, or an exact one
/// whose key is too wide for the direct index ([`crate::exact::ExactIndex`]).
pub(in crate::jit) fn by_lookup(p: &Program, t: usize) -> bool {
    p.tables.get(t).is_some_and(|def| {
        def.field_key.as_ref().is_some_and(|key| {
            def.lookup == LookupKind::Lpm || key.iter().map(|&(_, w)| w).sum::<u32>() > DIRECT_BITS
        })
    })
}

/// The actions table `t` may run that native code calls in place (those
/// `callable`, by action, names), sorted; none when `t` is not applied in place.
pub(in crate::jit) fn calls_of<T: Copy>(p: &Program, t: usize, callable: &[Option<T>]) -> Vec<u32> {
    if !in_place(p, t) {
        return vec![];
    }
    let mut actions: Vec<u32> = p.tables[t]
        .actions
        .iter()
        .copied()
        .filter(|&a| callable.get(a as usize).copied().flatten().is_some())
        .collect();
    actions.sort_unstable();
    actions.dedup();
    actions
}

/// Byte offset of a field of table `t`'s view from the first table state.
fn view_at(t: u32, field: usize) -> usize {
    t as usize * std::mem::size_of::<TableState>() + VIEW_OFFSET + field
}

impl Tr<'_, '_> {
    /// Applies table `t`, the op at `pc`, in place: lookup, the action's
    /// call, and a jump to the successor (or the op returned to the
    /// interpreter, see the module doc); false (nothing emitted) when it
    /// cannot: none of its actions can be called, or the block lacks the
    /// lookup or count function it needs.
    pub(super) fn apply_table(&mut self, pc: usize, t: u32) -> bool {
        if self.in_place_calls(t).is_empty() {
            return false;
        }
        let lookup = match (by_lookup(self.p, t as usize), self.calls.lookup) {
            (true, None) => return false,
            (true, lookup) => lookup,
            (false, _) => None,
        };
        let count = match (self.p.tables[t as usize].with_counters, self.calls.count) {
            (true, None) => return false,
            (true, count) => count,
            (false, _) => None,
        };
        let flags = MemFlagsData::trusted();
        let ptr = self.ptr;
        let state = t as usize * std::mem::size_of::<TableState>();
        let left = self.b.create_block();
        let miss = self.b.create_block();
        let found = self.b.create_block();
        let call = self.b.append_block_param(found, ptr);
        let hit = self.b.append_block_param(found, types::I8);
        let handle = self.b.append_block_param(found, types::I32);
        match self.p.tables[t as usize].field_key.clone() {
            Some(key) => {
                let mut k = self.b.ins().iconst(types::I64, 0);
                for &(f, w) in key.iter() {
                    let v = self.field64(f);
                    let v = self.b.ins().band_imm_u(v, mask(w) as u64 as i64);
                    let shifted = self.b.ins().ishl_imm_u(k, i64::from(w));
                    k = self.b.ins().bor(shifted, v);
                }
                let h = match lookup {
                    Some(lookup) => {
                        let state = self.b.ins().iadd_imm_s(self.tables, state as i64);
                        let found = self.b.ins().call(lookup, &[state, k]);
                        self.b.inst_results(found)[0]
                    }
                    None => {
                        let slots_len =
                            self.view_word(t, std::mem::offset_of!(NativeView, slots_len));
                        let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, k, slots_len);
                        self.go_on_if(inside, miss);
                        let slots = self.view_word(t, std::mem::offset_of!(NativeView, slots));
                        let slot = self.b.ins().ishl_imm_u(k, 2);
                        let slot = self.b.ins().iadd(slots, slot);
                        self.b.ins().load(types::I32, flags, slot, 0)
                    }
                };
                let h32 = h;
                let h = self.b.ins().uextend(types::I64, h);
                let some = self
                    .b
                    .ins()
                    .icmp_imm_u(IntCC::NotEqual, h, i64::from(u32::MAX));
                self.go_on_if(some, miss);
                let calls_len = self.view_word(t, std::mem::offset_of!(NativeView, calls_len));
                let known = self.b.ins().icmp(IntCC::UnsignedLessThan, h, calls_len);
                self.go_on_if(known, left);
                let calls = self.view_word(t, std::mem::offset_of!(NativeView, calls));
                let size = std::mem::size_of::<NativeCall>() as i64;
                let h = self.b.ins().imul_imm_u(h, size);
                let c = self.b.ins().iadd(calls, h);
                let yes = self.b.ins().iconst(types::I8, 1);
                self.b
                    .ins()
                    .jump(found, &[c.into(), yes.into(), h32.into()]);
            }
            None => {
                // A keyless table runs its default while it has no entry.
                let len_at = t as usize * std::mem::size_of::<TableState>() + LEN_OFFSET;
                let len = self.b.ins().load(ptr, flags, self.tables, off(len_at));
                self.b.ins().brif(len, left, &[], miss, &[]);
            }
        }
        self.b.switch_to_block(miss);
        let default = view_at(t, std::mem::offset_of!(NativeView, default));
        let c = self.b.ins().iadd_imm_s(self.tables, default as i64);
        let no = self.b.ins().iconst(types::I8, 0);
        let none = self.b.ins().iconst(types::I32, 0);
        self.b
            .ins()
            .jump(found, &[c.into(), no.into(), none.into()]);

        self.b.switch_to_block(found);
        let action = self.b.ins().load(
            types::I32,
            flags,
            call,
            off(std::mem::offset_of!(NativeCall, action)),
        );
        let def = &self.p.tables[t as usize];
        let (by_action, hit_miss, otherwise) = (
            def.next_by_action.clone(),
            def.hit_miss,
            def.base_default_next,
        );
        for (a, func) in self.in_place_calls(t) {
            let run = self.b.create_block();
            let next = self.b.create_block();
            let is = self.b.ins().icmp_imm_u(IntCC::Equal, action, i64::from(a));
            self.b.ins().brif(is, run, &[], next, &[]);
            self.b.switch_to_block(run);
            if let Some(count) = count {
                self.count_hit(count, hit, state, handle);
            }
            self.call_action(func, call);
            let then = by_action.get(a as usize).copied().flatten();
            self.successor(hit, hit_miss, then);
            self.b.switch_to_block(next);
        }
        let nothing = self.b.create_block();
        let none = self
            .b
            .ins()
            .icmp_imm_u(IntCC::Equal, action, i64::from(NO_ACTION));
        self.b.ins().brif(none, nothing, &[], left, &[]);
        self.b.switch_to_block(nothing);
        if let Some(count) = count {
            self.count_hit(count, hit, state, handle);
        }
        self.successor(hit, hit_miss, otherwise);
        self.b.switch_to_block(left);
        self.ret(LEFT + pc as u64);
        true
    }

    /// On a hit, counts the packet on entry `handle` of the table whose
    /// state is at byte `state` from the first, through `count`.
    fn count_hit(&mut self, count: FuncRef, hit: Value, state: usize, handle: Value) {
        let (counted, go) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(hit, counted, &[], go, &[]);
        self.b.switch_to_block(counted);
        let flags = MemFlagsData::trusted();
        let table = self.b.ins().iadd_imm_s(self.tables, state as i64);
        let len_at = off(std::mem::offset_of!(Ctx, ingress_len));
        let bytes = self.b.ins().load(types::I64, flags, self.ctx, len_at);
        self.b.ins().call(count, &[table, handle, bytes]);
        self.b.ins().jump(go, &[]);
        self.b.switch_to_block(go);
    }

    /// The word at `field` of table `t`'s [`NativeView`].
    fn view_word(&mut self, t: u32, field: usize) -> Value {
        let flags = MemFlagsData::trusted();
        self.b
            .ins()
            .load(self.ptr, flags, self.tables, off(view_at(t, field)))
    }

    /// Goes on (in a new block) when `c` holds, else to `otherwise`.
    fn go_on_if(&mut self, c: Value, otherwise: Block) {
        let next = self.b.create_block();
        self.b.ins().brif(c, next, &[], otherwise, &[]);
        self.b.switch_to_block(next);
    }

    /// The actions table `t` calls in place, each with its function.
    fn in_place_calls(&self, t: u32) -> Vec<(u32, FuncRef)> {
        let calls = &self.calls.calls;
        calls_of(self.p, t as usize, calls)
            .into_iter()
            .filter_map(|a| Some((a, calls.get(a as usize).copied().flatten()?)))
            .collect()
    }

    /// Calls the action `func` with the data of the [`NativeCall`] at
    /// `call`, the context's own data put back after; returns `exit` on.
    fn call_action(&mut self, func: FuncRef, call: Value) {
        let flags = MemFlagsData::trusted();
        let ptr = self.ptr;
        let data_at = off(std::mem::offset_of!(Ctx, data));
        let len_at = off(std::mem::offset_of!(Ctx, data_len));
        let own_data = self.b.ins().load(ptr, flags, self.ctx, data_at);
        let own_len = self.b.ins().load(ptr, flags, self.ctx, len_at);
        let data = self
            .b
            .ins()
            .iadd_imm_s(call, std::mem::offset_of!(NativeCall, data) as i64);
        let len = self.b.ins().load(
            types::I32,
            flags,
            call,
            off(std::mem::offset_of!(NativeCall, len)),
        );
        let len = self.b.ins().uextend(ptr, len);
        self.b.ins().store(flags, data, self.ctx, data_at);
        self.b.ins().store(flags, len, self.ctx, len_at);
        let start = self.b.ins().iconst(types::I32, 0);
        let done = self.b.ins().call(func, &[self.ctx, start]);
        let status = self.b.inst_results(done)[0];
        self.b.ins().store(flags, own_data, self.ctx, data_at);
        self.b.ins().store(flags, own_len, self.ctx, len_at);
        let exit = self.b.ins().icmp_imm_u(IntCC::Equal, status, EXIT as i64);
        let (stop, go) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(exit, stop, &[], go, &[]);
        self.b.switch_to_block(stop);
        self.ret(EXIT);
        self.b.switch_to_block(go);
    }

    /// Jumps to the table's successor: by hit or miss when the table has
    /// them, else `then` (the action's, or the default's).
    fn successor(
        &mut self,
        hit: Value,
        hit_miss: Option<(Option<Node>, Option<Node>)>,
        then: Option<Node>,
    ) {
        match hit_miss {
            Some((on_hit, on_miss)) => {
                let (h, m) = (self.label(on_hit), self.label(on_miss));
                self.b.ins().brif(hit, h, &[], m, &[]);
            }
            None => {
                let to = self.label(then);
                self.b.ins().jump(to, &[]);
            }
        }
    }

    /// The block a table's successor node starts (as the interpreter's
    /// `table` maps it: no node is op 0, a node outside the code the end).
    fn label(&self, n: Option<Node>) -> Block {
        let at = match n {
            None => Some(0),
            Some(Node::Table(t)) => self.code.table_labels.get(t as usize).copied(),
            Some(Node::Cond(c)) => self.code.cond_labels.get(c as usize).copied(),
        };
        self.block(at.unwrap_or(u32::MAX))
    }
}
