//! The deparser's emission as one function: each header of the deparse
//! order, when valid, packed at the output's cursor.
//!
//! The function tests each header's validity bit in order and, for a valid
//! one with a packed wire form ([`pack::Plan::of_header`]), assembles its
//! words at the cursor ([`pack::pack`]) and moves the cursor by its length.
//! It returns the bytes emitted. The last word of a header may write up to
//! 7 bytes past its end, which the next header (or nothing) overwrites, so
//! the caller's buffer has room for every header at once plus a word
//! ([`DeparsePlan::capacity`]). A valid header without a packed form (a
//! varbit, a field wider than 64 bits: buffer_switch.p4's PAUSE padding)
//! makes it return [`INTERPRET`] at once, and the interpreter deparses that
//! packet, as it does every packet while tracing.

use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData};
use cranelift_frontend::FunctionBuilder;

use super::pack;
use crate::program::Program;

/// What the compiled deparser returns for a packet it leaves to the interpreter.
pub(super) const INTERPRET: u64 = u64::MAX;

/// The headers a compiled deparser emits, in order, with their wire forms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct DeparsePlan {
    /// Each header of the deparse order and its packed wire form (None:
    /// the interpreter emits packets where it is valid).
    pub headers: Vec<(u32, Option<pack::Plan>)>,
}

impl DeparsePlan {
    /// Field slots the function reads: every slot it names is below this.
    pub(super) fn fields(&self) -> usize {
        self.packed()
            .map(|(_, plan)| plan.fields())
            .max()
            .unwrap_or(0)
    }

    /// Validity bits the function reads: every header it names is below this.
    pub(super) fn valid(&self) -> usize {
        self.headers
            .iter()
            .map(|&(h, _)| h as usize + 1)
            .max()
            .unwrap_or(0)
    }

    /// Bytes the output buffer must hold: every header at once, and the
    /// last one's word rounded up.
    pub(super) fn capacity(&self) -> usize {
        let bytes: usize = self.packed().map(|(_, p)| p.bytes as usize).sum();
        bytes + 8
    }

    /// The headers the machine code emits, with their wire forms.
    pub(super) fn packed(&self) -> impl Iterator<Item = (u32, &pack::Plan)> {
        let plans = self.headers.iter();
        plans.filter_map(|(h, plan)| Some((*h, plan.as_ref()?)))
    }
}

/// The plan of `p`'s deparser; None when no header of its deparse order
/// has a packed wire form.
pub(super) fn plan(p: &Program) -> Option<DeparsePlan> {
    let headers = p.deparse_order.iter().map(|&h| {
        let info = p.headers.get(h as usize);
        (h, info.and_then(|info| pack::Plan::of_header(p, info)))
    });
    let plan = DeparsePlan {
        headers: headers.collect(),
    };
    // Offsets of the loads and stores are 32-bit immediates.
    let fits = plan.capacity() < i32::MAX as usize
        && plan.fields() < i32::MAX as usize / 8
        && plan.valid() < i32::MAX as usize;
    (plan.packed().next().is_some() && fits).then_some(plan)
}

/// Memory flags of the validity bits (a `bool` array).
const FLAGS: MemFlagsData = MemFlagsData::trusted();

/// Emits the function's body: (field slots, validity bits, output) to the
/// bytes emitted.
pub(super) fn translate(b: &mut FunctionBuilder<'_>, plan: &DeparsePlan) {
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry);
    let (fields, valid, out) = (params[0], params[1], params[2]);
    let interpret = b.create_block();
    let mut at = b.ins().iconst(types::I64, 0);
    for (h, header) in &plan.headers {
        let (emit, next) = (b.create_block(), b.create_block());
        b.append_block_param(next, types::I64);
        let bit = b.ins().uload8(types::I32, FLAGS, valid, *h as i32);
        let Some(header) = header else {
            b.ins().brif(bit, interpret, &[], next, &[at.into()]);
            b.switch_to_block(next);
            at = b.block_params(next)[0];
            continue;
        };
        b.ins().brif(bit, emit, &[], next, &[at.into()]);
        b.switch_to_block(emit);
        let cursor = b.ins().iadd(out, at);
        pack::pack(b, header, fields, cursor);
        let moved = b.ins().iadd_imm_u(at, i64::from(header.bytes));
        b.ins().jump(next, &[moved.into()]);
        b.switch_to_block(next);
        at = b.block_params(next)[0];
    }
    b.ins().return_(&[at]);
    b.switch_to_block(interpret);
    let status = b.ins().iconst(types::I64, INTERPRET as i64);
    b.ins().return_(&[status]);
    b.seal_all_blocks();
}
