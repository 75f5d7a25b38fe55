//! Fields to bytes and back as machine code: a header's wire form for the
//! deparser, a checksum's or hash's inputs laid out at load time, and a
//! header's fields extracted by the parser.
//!
//! A plan is a list of fields, each with its bit offset in the output, whose
//! bytes are fixed ([`crate::program::HeaderInfo::packed`],
//! [`crate::program::PackedInputs`]). The function assembles each 8-byte
//! word of the output in a register from the fields that overlap it (one
//! load, a mask, a shift and an `or` per field and word) and stores it
//! big-endian, so a 20-byte IPv4 header is three stores instead of a
//! read-modify-write per field. The output is written in whole words: the
//! caller's buffer has room for the rounding (see [`super::Packer`]).
//!
//! Extraction is the reverse: each field is one unaligned 8-byte load from
//! its first byte, a byte swap and two shifts into its slot; the caller
//! checks that the frame has those 8 bytes (see [`super::Unpacker`]).

use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::JITModule;
use cranelift_module::{FuncId, Module};

use crate::program::{HeaderInfo, PackedInputs, Program, WireKind};

/// What one packing function writes: fields (slot, bit offset, width) and
/// the output's length in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Plan {
    /// Each field: its slot, its bit offset in the output, its width (1 to 64).
    pub parts: Vec<(u32, u32, u32)>,
    /// Bytes of output.
    pub bytes: u32,
}

impl Plan {
    /// Field slots the function reads: every slot it names is below this.
    pub(super) fn fields(&self) -> usize {
        self.parts
            .iter()
            .map(|&(f, ..)| f as usize + 1)
            .max()
            .unwrap_or(0)
    }

    /// Bytes the function writes: the output rounded up to whole 8-byte words.
    pub(super) fn written(&self) -> usize {
        self.bytes.div_ceil(8) as usize * 8
    }

    /// Bytes extraction reads: 8 from each field's first byte.
    pub(super) fn read(&self) -> usize {
        self.parts
            .iter()
            .map(|&(_, at, _)| at as usize / 8 + 8)
            .max()
            .unwrap_or(0)
    }

    /// Whether every field lies within the 8 bytes from its first byte, so
    /// extraction reads each with one load.
    pub(super) fn extractable(&self) -> bool {
        self.parts.iter().all(|&(_, at, w)| at % 8 + w <= 64)
    }

    /// The plan of a packed header's wire form; None for metadata (never
    /// emitted) and when a field is wider than its 64-bit slot (its upper
    /// bits live elsewhere).
    pub(super) fn of_header(p: &Program, h: &HeaderInfo) -> Option<Plan> {
        if !h.packed || h.metadata || h.num_fields == 0 {
            return None;
        }
        let first = h.first_field as usize;
        let wire = p.wire.get(first..first + h.num_fields as usize)?;
        let mut parts = Vec::with_capacity(wire.len());
        for (k, wf) in wire.iter().enumerate() {
            if wf.kind != WireKind::Plain || wf.high.is_some() || !(1..=64).contains(&wf.width) {
                return None;
            }
            parts.push(((first + k) as u32, wf.offset, wf.width));
        }
        Plan::checked(parts, h.fixed_bits / 8)
    }

    /// The plan of a calculation's packed inputs; None as for a header.
    pub(super) fn of_inputs(p: &Program, pk: &PackedInputs) -> Option<Plan> {
        let mut parts = Vec::with_capacity(pk.fields.len());
        for &(f, at) in &pk.fields {
            let wf = p.wire.get(f as usize)?;
            if wf.kind != WireKind::Plain || wf.high.is_some() || !(1..=64).contains(&wf.width) {
                return None;
            }
            parts.push((f, at, wf.width));
        }
        Plan::checked(parts, pk.bytes)
    }

    /// A plan whose fields all lie inside its bytes.
    fn checked(parts: Vec<(u32, u32, u32)>, bytes: u32) -> Option<Plan> {
        let inside = parts
            .iter()
            .all(|&(_, at, w)| u64::from(at) + u64::from(w) <= u64::from(bytes) * 8);
        (inside && bytes > 0 && bytes < (1 << 20)).then_some(Plan { parts, bytes })
    }
}

/// Which way a function moves fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    /// Field slots to bytes (signature: slots, output).
    Pack,
    /// Bytes to field slots (signature: input, slots).
    Extract,
}

/// Declares and defines the function moving `plan`'s fields `direction`
/// (two pointers; no result).
pub(super) fn define(
    module: &mut JITModule,
    ctx: &mut cranelift_codegen::Context,
    fctx: &mut FunctionBuilderContext,
    plan: &Plan,
    direction: Direction,
    name: u32,
) -> Result<FuncId, String> {
    let ptr = module.target_config().pointer_type();
    let name = (1 + direction as u32, name);
    super::define_body(module, ctx, fctx, (&[ptr, ptr], &[]), name, |b| {
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let (x, y) = (b.block_params(entry)[0], b.block_params(entry)[1]);
        match direction {
            Direction::Pack => pack(b, plan, x, y),
            Direction::Extract => extract(b, plan, x, y),
        }
        b.ins().return_(&[]);
        b.seal_all_blocks();
    })
}

/// Memory flags of the field slots (a `u64` array) and of byte buffers (not aligned).
const SLOTS: MemFlagsData = MemFlagsData::trusted();
const BYTES: MemFlagsData = MemFlagsData::new().with_notrap();

/// Each field's bits from its 8-byte window at `input` into its slot.
pub(super) fn extract(b: &mut FunctionBuilder<'_>, plan: &Plan, input: Value, fields: Value) {
    for &(f, at, w) in &plan.parts {
        let v = b.ins().load(types::I64, BYTES, input, (at / 8) as i32);
        let v = b.ins().bswap(v);
        let v = match at % 8 {
            0 => v,
            s => b.ins().ishl_imm_u(v, i64::from(s)),
        };
        let v = match w {
            64 => v,
            w => b.ins().ushr_imm_u(v, i64::from(64 - w)),
        };
        b.ins().store(SLOTS, v, fields, (8 * f) as i32);
    }
}

/// The output's words, each from the fields that overlap it.
pub(super) fn pack(b: &mut FunctionBuilder<'_>, plan: &Plan, fields: Value, out: Value) {
    let (slot, bytes) = (SLOTS, BYTES);
    for word in 0..plan.bytes.div_ceil(8) {
        let (lo, hi) = (64 * word, 64 * word + 64);
        let mut acc: Option<Value> = None;
        for &(f, at, w) in &plan.parts {
            let end = at + w;
            if at >= hi || end <= lo {
                continue;
            }
            let v = b.ins().load(types::I64, slot, fields, (8 * f) as i32);
            let v = match w {
                64 => v,
                w => b.ins().band_imm_u(v, ((1u64 << w) - 1) as i64),
            };
            // Bits of the field before the word shift out at the top; bits
            // after it shift out at the bottom.
            let v = match (end <= hi, hi.abs_diff(end)) {
                (_, 0) => v,
                (true, s) => b.ins().ishl_imm_u(v, i64::from(s)),
                (false, s) => b.ins().ushr_imm_u(v, i64::from(s)),
            };
            acc = Some(match acc {
                None => v,
                Some(a) => b.ins().bor(a, v),
            });
        }
        let v = match acc {
            Some(v) => b.ins().bswap(v),
            None => b.ins().iconst(types::I64, 0),
        };
        b.ins().store(bytes, v, out, (8 * word) as i32);
    }
}
