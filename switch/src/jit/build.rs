//! Translating one block's straight-line form ([`crate::flat::Code`]) to
//! Cranelift IR.
//!
//! The function takes the context ([`super::run::Ctx`]) and the op to start
//! at, and returns a status ([`super::run::END`], [`super::run::EXIT`], or
//! [`super::run::LEFT`] plus the index of an op it leaves to the
//! interpreter). The flat code's registers become SSA variables (128-bit, as
//! the interpreter's); field loads, compares and stores stay 64-bit, as the
//! slots are. Register arrays and counters are read and written in place
//! ([`arrays`]), and exact tables applied in place ([`tables`]). An op left
//! to the interpreter (other tables, primitives, trees, 128-bit division)
//! stores the live registers into the context and returns; the driver runs
//! the op and calls again at the next op, whose entry reloads them.

mod arith;
mod arrays;
mod tables;

pub(super) use tables::{by_lookup, calls_of};

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, Block, FuncRef, InstBuilder, JumpTableData, MemFlagsData, Type, Value,
};
use cranelift_frontend::{FunctionBuilder, Variable};

use super::run::{array_words, Ctx, VecWords, END, EXIT, LEFT, NO_RESUME};
use crate::bits::mask;
use crate::flat::{left_to_interpreter, r, Code, Op, REGS};
use crate::program::{BinOp, Program};
use crate::state::CounterCell;
use crate::tables::{TableState, LEN_OFFSET};

/// Sizes the packet and state must have for a block's code: every slot it
/// touches is below them (checked at load time here, and per call by the driver).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Limits {
    /// Field slots.
    pub fields: usize,
    /// Header validity bits.
    pub headers: usize,
    /// Table states.
    pub tables: usize,
    /// Register arrays.
    pub registers: usize,
    /// Counter arrays.
    pub counters: usize,
    /// Whether it leaves an op to the interpreter, and so needs a register file.
    pub spills: bool,
}

/// Where register arrays' and counter arrays' vectors keep their cells'
/// address and their length, when native code may read them in place.
pub(super) type ArrayWords = Option<(VecWords, VecWords)>;

/// How many registers (from 0) are live across an op left to the
/// interpreter; None for ops compiled in line (register arrays and counters
/// are, when `arrays` says where their cells are). Registers are allocated
/// as a stack, so the live ones are those the op reads or writes and those below.
pub(super) fn left(op: &Op, arrays: ArrayWords) -> Option<usize> {
    let n = |d: u8, k: usize| Some((usize::from(d) + k).min(REGS));
    let in_line = arrays.is_some();
    match *op {
        Op::RegisterGet { .. }
        | Op::RegisterRead { .. }
        | Op::RegisterReadF { .. }
        | Op::RegisterWrite { .. }
        | Op::Count { .. }
            if in_line =>
        {
            None
        }
        Op::Eval { d, .. } | Op::RegisterGet { d, .. } => n(d, 1),
        Op::Bin { op, d } if left_to_interpreter(op) => n(d, 2),
        Op::BinK { op, d, .. } | Op::BinF { op, d, .. } | Op::FieldBinK { op, d, .. }
            if left_to_interpreter(op) =>
        {
            n(d, 1)
        }
        Op::RegisterRead { a, .. } | Op::Count { a, .. } => n(a, 1),
        Op::RegisterWrite { a, .. } => n(a, 2),
        Op::RegisterReadF { .. } | Op::Prim { .. } | Op::Table { .. } => Some(0),
        _ => None,
    }
}

/// Whether native code for `code` leaves any op to the interpreter.
fn spills(code: &Code, arrays: ArrayWords) -> bool {
    code.ops.iter().any(|op| left(op, arrays).is_some())
}

/// Checks every slot `code` names against `p`; the limits its calls need.
pub(super) fn check(p: &Program, code: &Code) -> Result<Limits, String> {
    let fields = p.fields.len();
    let field = |f: u32| -> Result<(), String> {
        match p.fields.get(f as usize) {
            Some(fi) if fi.width <= 64 => Ok(()),
            Some(fi) => Err(format!("field {} is {} bits wide", fi.name, fi.width)),
            None => Err(format!("field slot {f} out of range")),
        }
    };
    // An index below the number of objects of its kind, or why not.
    let below = |what: &str, i: u32, n: usize| match (i as usize) < n {
        true => Ok(()),
        false => Err(format!("{what} {i} out of range")),
    };
    let header = |h: u32| below("header", h, p.headers.len());
    let table = |t: u32| below("table", t, p.tables.len());
    let register = |a: u32| below("register array", a, p.registers.len());
    let counter = |a: u32| below("counter array", a, p.counters.len());
    if code.ops.len() >= (i32::MAX as usize) / 2 || fields >= (i32::MAX as usize) / 8 {
        return Err("block too large".into());
    }
    for op in &code.ops {
        match *op {
            Op::Field { f, .. }
            | Op::SignedField { f, .. }
            | Op::BinF { f, .. }
            | Op::FieldBinK { f, .. }
            | Op::AddF { f, .. }
            | Op::SubF { f, .. }
            | Op::FieldEqK { f, .. }
            | Op::JumpUnlessFieldEqK { f, .. }
            | Op::JumpUnlessFieldNeK { f, .. }
            | Op::JumpUnlessFK { f, .. }
            | Op::Store { f, .. }
            | Op::StoreConst { f, .. }
            | Op::StoreLocal { f, .. } => field(f)?,
            Op::Copy { f, src } => field(f).and(field(src))?,
            Op::StoreConsts { at, n } => {
                let run = code.stores.get(at as usize..(at + n) as usize);
                for &(f, _) in run.unwrap_or(&[]) {
                    field(f)?;
                }
            }
            Op::StoreLocals { at, n } => {
                let run = code.locals.get(at as usize..(at + n) as usize);
                for &(f, _) in run.unwrap_or(&[]) {
                    field(f)?;
                }
            }
            Op::Valid { h, .. } | Op::JumpIfValid { h, .. } => header(h)?,
            Op::Inline { table: t, .. } => table(t)?,
            Op::RegisterGet { array, .. } | Op::RegisterWrite { array, .. } => register(array)?,
            Op::RegisterRead { f, array, .. } => field(f).and(register(array))?,
            Op::RegisterReadF { f, array, index } => {
                field(f).and(field(index)).and(register(array))?
            }
            Op::Count { array, .. } => counter(array)?,
            Op::Random { f, .. } => field(f)?,
            _ => {}
        }
    }
    let limits = Limits {
        fields,
        headers: p.headers.len(),
        tables: p.tables.len(),
        registers: p.registers.len(),
        counters: p.counters.len(),
        spills: spills(code, array_words()),
    };
    // Native code reaches a table's state, or an array's vector, at a
    // constant offset from the first.
    let reach = |n: usize, size: usize| n.saturating_mul(size) < i32::MAX as usize;
    if !reach(limits.tables, std::mem::size_of::<TableState>()) {
        return Err("too many tables".into());
    }
    if !reach(limits.registers, std::mem::size_of::<Vec<u128>>())
        || !reach(limits.counters, std::mem::size_of::<Vec<CounterCell>>())
    {
        return Err("too many register or counter arrays".into());
    }
    Ok(limits)
}

/// A byte offset into the context.
fn off(at: usize) -> i32 {
    at as i32
}

/// The translation of one block.
struct Tr<'a, 'b> {
    b: &'a mut FunctionBuilder<'b>,
    code: &'a Code,
    p: &'a Program,
    ptr: Type,
    regs: [Variable; REGS],
    ctx: Value,
    // The register file ops left to the interpreter read and write.
    regfile: Value,
    fields: Value,
    valid: Value,
    data: Value,
    data_len: Value,
    tables: Value,
    registers: Value,
    counters: Value,
    arrays: ArrayWords,
    // What tables applied in place call.
    calls: Calls,
    // Tables applied in place so far.
    in_place: usize,
    // The block of each op that starts one (jump targets, resume points).
    blocks: Vec<Option<Block>>,
    end: Block,
}

/// The functions a block's code calls: its tables applied in place, and its ops.
pub(super) struct Calls {
    /// By action: the action's function (None: the action is left to the interpreter).
    pub calls: Vec<Option<FuncRef>>,
    /// [`super::run::packed_handle`], if a table looked up by it
    /// ([`by_lookup`]) is applied in place.
    pub lookup: Option<FuncRef>,
    /// [`super::run::count_hit`], if a table with direct counters is applied in place.
    pub count: Option<FuncRef>,
    /// [`super::run::random`], if the block draws random values.
    pub random: Option<FuncRef>,
}

/// Translates `code` into the function `b` builds (signature: context
/// pointer, start op as i32; status as i64), its tables applied in place
/// calling `calls`. Returns the number of tables it applies in place.
pub(super) fn translate(
    b: &mut FunctionBuilder<'_>,
    p: &Program,
    code: &Code,
    ptr: Type,
    calls: Calls,
) -> Result<usize, String> {
    let n = code.ops.len();
    let arrays = array_words();
    // Resume points: the starts (0 for actions, 1 for controls), each
    // table's and condition's label, and the op after each one left to the
    // interpreter (with the registers to reload there).
    let mut resume: Vec<Option<usize>> = vec![None; n];
    let mut mark = |pc: usize, live: usize| {
        if let Some(slot) = resume.get_mut(pc) {
            *slot = Some(slot.unwrap_or(0).max(live));
        }
    };
    mark(0, 0);
    mark(1, 0);
    for &l in code.table_labels.iter().chain(&code.cond_labels) {
        mark(l as usize, 0);
    }
    for (pc, op) in code.ops.iter().enumerate() {
        if let (Some(live), false) = (left(op, arrays), matches!(op, Op::Table { .. })) {
            mark(pc + 1, live);
        }
    }
    let mut leader: Vec<bool> = resume.iter().map(Option::is_some).collect();
    for op in &code.ops {
        if let Some(t) = target(op) {
            if let Some(l) = leader.get_mut(t as usize) {
                *l = true;
            }
        }
    }

    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let (ctx, start) = (b.block_params(entry)[0], b.block_params(entry)[1]);
    // A register read before any write reads 0: the frontend puts that 0 in.
    let regs: [Variable; REGS] = std::array::from_fn(|_| b.declare_var(types::I128));
    // The pointers the ops use, loaded once (a null stands in for one never used).
    let uses = |f: fn(&Op) -> bool| code.ops.iter().any(f);
    let flags = MemFlagsData::trusted();
    let mut load_ptr = |used: bool, at: usize| match used {
        true => b.ins().load(ptr, flags, ctx, off(at)),
        false => b.ins().iconst(ptr, 0),
    };
    let fields = load_ptr(true, std::mem::offset_of!(Ctx, fields));
    let valid = load_ptr(
        uses(|op| matches!(op, Op::Valid { .. } | Op::JumpIfValid { .. })),
        std::mem::offset_of!(Ctx, valid),
    );
    let local = uses(|op| {
        matches!(
            op,
            Op::Local { .. } | Op::StoreLocal { .. } | Op::StoreLocals { .. }
        )
    });
    let data = load_ptr(local, std::mem::offset_of!(Ctx, data));
    let data_len = load_ptr(local, std::mem::offset_of!(Ctx, data_len));
    let applies = code.ops.iter().any(|op| match *op {
        Op::Table { table } => !calls_of(p, table as usize, &calls.calls).is_empty(),
        _ => false,
    });
    let tables = load_ptr(
        applies || uses(|op| matches!(op, Op::Inline { .. })),
        std::mem::offset_of!(Ctx, tables),
    );
    let registers = load_ptr(
        arrays.is_some()
            && uses(|op| {
                matches!(
                    op,
                    Op::RegisterGet { .. }
                        | Op::RegisterRead { .. }
                        | Op::RegisterReadF { .. }
                        | Op::RegisterWrite { .. }
                )
            }),
        std::mem::offset_of!(Ctx, registers),
    );
    let counters = load_ptr(
        arrays.is_some() && uses(|op| matches!(op, Op::Count { .. })),
        std::mem::offset_of!(Ctx, counters),
    );
    let regfile = load_ptr(spills(code, arrays), std::mem::offset_of!(Ctx, regs));
    let blocks: Vec<Option<Block>> = leader
        .iter()
        .map(|&l| l.then(|| b.create_block()))
        .collect();
    let end = b.create_block();
    let mut t = Tr {
        b,
        code,
        p,
        ptr,
        regs,
        ctx,
        regfile,
        fields,
        valid,
        data,
        data_len,
        tables,
        registers,
        counters,
        arrays,
        calls,
        in_place: 0,
        blocks,
        end,
    };
    t.dispatch(start, &resume);
    t.body()?;
    t.b.switch_to_block(t.end);
    t.ret(END);
    t.b.seal_all_blocks();
    Ok(t.in_place)
}

/// The op a jumping op may continue at.
fn target(op: &Op) -> Option<u32> {
    match *op {
        Op::Jump { t }
        | Op::JumpIfZero { t, .. }
        | Op::JumpIfNonZero { t, .. }
        | Op::JumpUnlessK { t, .. }
        | Op::JumpUnlessFK { t, .. }
        | Op::JumpUnlessFieldEqK { t, .. }
        | Op::JumpUnlessFieldNeK { t, .. }
        | Op::JumpIfValid { t, .. }
        | Op::AndSkip { t, .. }
        | Op::OrSkip { t, .. }
        | Op::Inline { t, .. } => Some(t),
        _ => None,
    }
}

impl Tr<'_, '_> {
    /// The entry: a jump table from the start op to its resume block, which
    /// reloads the registers live there.
    fn dispatch(&mut self, start: Value, resume: &[Option<usize>]) {
        let none = self.b.create_block();
        let mut table = Vec::with_capacity(resume.len());
        let mut reloads = vec![];
        for (pc, live) in resume.iter().enumerate() {
            let to = match (live, self.blocks[pc]) {
                (Some(0), Some(block)) => block,
                (Some(live), Some(block)) => {
                    let reload = self.b.create_block();
                    reloads.push((reload, *live, block));
                    reload
                }
                _ => none,
            };
            table.push(self.b.func.dfg.block_call(to, &[]));
        }
        let default = self.b.func.dfg.block_call(none, &[]);
        let jt = self
            .b
            .create_jump_table(JumpTableData::new(default, &table));
        self.b.ins().br_table(start, jt);
        for (reload, live, block) in reloads {
            self.b.switch_to_block(reload);
            for (i, &var) in self.regs.iter().enumerate().take(live) {
                let v = self.b.ins().load(
                    types::I128,
                    MemFlagsData::trusted(),
                    self.regfile,
                    off(16 * i),
                );
                self.b.def_var(var, v);
            }
            self.b.ins().jump(block, &[]);
        }
        self.b.switch_to_block(none);
        self.ret(NO_RESUME);
    }

    /// Returns `status` from the function.
    fn ret(&mut self, status: u64) {
        let v = self.b.ins().iconst(types::I64, status as i64);
        self.b.ins().return_(&[v]);
    }

    /// The block an op continues at (past the last op: the end).
    fn block(&self, t: u32) -> Block {
        self.blocks
            .get(t as usize)
            .copied()
            .flatten()
            .unwrap_or(self.end)
    }

    fn get(&mut self, d: u8) -> Value {
        self.b.use_var(self.regs[r(d)])
    }

    fn set(&mut self, d: u8, v: Value) {
        self.b.def_var(self.regs[r(d)], v);
    }

    /// Constant `i` of the code (0 when missing, as the interpreter reads it).
    fn konst(&self, i: u32) -> u128 {
        self.code.consts.get(i as usize).copied().unwrap_or(0)
    }

    /// A field's 64-bit slot.
    fn field64(&mut self, f: u32) -> Value {
        self.b.ins().load(
            types::I64,
            MemFlagsData::trusted(),
            self.fields,
            off(8 * f as usize),
        )
    }

    /// A field's value, 128 bits wide.
    fn field(&mut self, f: u32) -> Value {
        let v = self.field64(f);
        self.b.ins().uextend(types::I128, v)
    }

    /// `f =` a value drawn in `[r[a], r[a + 1]]` through [`super::run::random`],
    /// nothing when the range is empty.
    fn random(&mut self, f: u32, a: u8) -> Result<(), String> {
        let random = self
            .calls
            .random
            .ok_or("random drawn without its function")?;
        let (lo, hi) = (self.get(a), self.get(a + 1));
        let drawn = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, lo, hi);
        let (draw, join) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(drawn, draw, &[], join, &[]);
        self.b.switch_to_block(draw);
        let rng_at = off(std::mem::offset_of!(Ctx, rng));
        let rng = self
            .b
            .ins()
            .load(self.ptr, MemFlagsData::trusted(), self.ctx, rng_at);
        let (lo_low, lo_high) = self.b.ins().isplit(lo);
        let (hi_low, hi_high) = self.b.ins().isplit(hi);
        let call = self
            .b
            .ins()
            .call(random, &[rng, lo_low, lo_high, hi_low, hi_high]);
        let v = self.b.inst_results(call)[0];
        self.store(f, v);
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
        Ok(())
    }

    /// Stores `v` (64 bits) into field `f`, cut to the field's width.
    fn store(&mut self, f: u32, v: Value) {
        let m = mask(self.p.fields[f as usize].width) as u64;
        let v = if m == u64::MAX {
            v
        } else {
            self.b.ins().band_imm_u(v, m as i64)
        };
        self.b
            .ins()
            .store(MemFlagsData::trusted(), v, self.fields, off(8 * f as usize));
    }

    /// Action parameter `i` (0 past the call's data): the load reads the
    /// context's zero cell instead of reading past the data.
    fn local(&mut self, i: u16) -> Value {
        let inside =
            self.b
                .ins()
                .icmp_imm_u(IntCC::UnsignedGreaterThan, self.data_len, i64::from(i));
        let at = self.b.ins().iadd_imm_s(self.data, 16 * i64::from(i));
        let zero = self
            .b
            .ins()
            .iadd_imm_s(self.ctx, std::mem::offset_of!(Ctx, zero) as i64);
        let at = self.b.ins().select(inside, at, zero);
        self.b
            .ins()
            .load(types::I128, MemFlagsData::trusted(), at, 0)
    }

    /// A field compared with a constant, as a 64-bit compare when the
    /// constant fits (the slot is 64 bits): the condition, or its constant value.
    fn field_test(&mut self, op: BinOp, f: u32, k: u128) -> Result<Result<Value, bool>, String> {
        let cc = match op {
            BinOp::Eq => IntCC::Equal,
            BinOp::Ne => IntCC::NotEqual,
            BinOp::Lt => IntCC::UnsignedLessThan,
            BinOp::Le => IntCC::UnsignedLessThanOrEqual,
            BinOp::Gt => IntCC::UnsignedGreaterThan,
            BinOp::Ge => IntCC::UnsignedGreaterThanOrEqual,
            _ => {
                let x = self.field(f);
                let y = self.k128(k);
                let v = self.binop_inline(op, x, y)?;
                return Ok(Ok(self.nonzero(v)));
            }
        };
        let Ok(k) = u64::try_from(k) else {
            // The slot is below the constant.
            return Ok(Err(matches!(op, BinOp::Ne | BinOp::Lt | BinOp::Le)));
        };
        let v = self.field64(f);
        Ok(Ok(self.b.ins().icmp_imm_u(cc, v, k as i64)))
    }

    /// Continues at `t` when `c` holds, else at the next op.
    fn branch(&mut self, c: Value, t: u32) {
        let next = self.b.create_block();
        let to = self.block(t);
        self.b.ins().brif(c, to, &[], next, &[]);
        self.b.switch_to_block(next);
    }

    /// Translates the ops, block by block; ops no block reaches are skipped.
    fn body(&mut self) -> Result<(), String> {
        let mut open = false;
        for pc in 0..self.code.ops.len() {
            if let Some(block) = self.blocks[pc] {
                if open {
                    self.b.ins().jump(block, &[]);
                }
                self.b.switch_to_block(block);
                open = true;
            }
            if open {
                open = self.op(pc)?;
            }
        }
        if open {
            self.b.ins().jump(self.end, &[]);
        }
        Ok(())
    }

    /// Translates the op at `pc`; whether the code falls through to the next.
    fn op(&mut self, pc: usize) -> Result<bool, String> {
        let op = self.code.ops[pc];
        if let Op::Table { table } = op {
            if self.apply_table(pc, table) {
                self.in_place += 1;
                return Ok(false);
            }
        }
        if let Some(live) = left(&op, self.arrays) {
            for i in 0..live {
                let v = self.b.use_var(self.regs[i]);
                self.b
                    .ins()
                    .store(MemFlagsData::trusted(), v, self.regfile, off(16 * i));
            }
            self.ret(LEFT + pc as u64);
            return Ok(false);
        }
        match op {
            Op::Const { d, k } => {
                let v = self.k128(self.konst(k));
                self.set(d, v);
            }
            Op::Field { d, f } => {
                let v = self.field(f);
                self.set(d, v);
            }
            Op::SignedField { d, f, w } => {
                let v = self.field(f);
                let v = self.sign_extend(v, u32::from(w));
                self.set(d, v);
            }
            Op::Local { d, i } => {
                let v = self.local(i);
                self.set(d, v);
            }
            Op::Valid { d, h } => {
                let v = self.b.ins().load(
                    types::I8,
                    MemFlagsData::trusted(),
                    self.valid,
                    off(h as usize),
                );
                let v = self.bool128(v);
                self.set(d, v);
            }
            Op::Bin { op, d } => {
                let (x, y) = (self.get(d), self.get(d + 1));
                let v = self.binop_inline(op, x, y)?;
                self.set(d, v);
            }
            Op::BinK { op, d, k } => {
                let x = self.get(d);
                let y = self.k128(self.konst(k));
                let v = self.binop_inline(op, x, y)?;
                self.set(d, v);
            }
            Op::BinF { op, d, f } => {
                let x = self.get(d);
                let y = self.field(f);
                let v = self.binop_inline(op, x, y)?;
                self.set(d, v);
            }
            Op::FieldBinK { op, d, f, k } => {
                let x = self.field(f);
                let y = self.k128(self.konst(k));
                let v = self.binop_inline(op, x, y)?;
                self.set(d, v);
            }
            Op::AndK { d, k } => {
                let x = self.get(d);
                let y = self.k128(self.konst(k));
                let v = self.b.ins().band(x, y);
                self.set(d, v);
            }
            Op::AddF { d, f } | Op::SubF { d, f } => {
                let x = self.get(d);
                let y = self.field(f);
                let v = match op {
                    Op::AddF { .. } => self.b.ins().iadd(x, y),
                    _ => self.b.ins().isub(x, y),
                };
                self.set(d, v);
            }
            Op::FieldEqK { d, f, k } => {
                let v = match self.field_test(BinOp::Eq, f, self.konst(k))? {
                    Ok(c) => self.bool128(c),
                    Err(c) => self.k128(u128::from(c)),
                };
                self.set(d, v);
            }
            Op::JumpUnlessFieldEqK { f, k, t } => {
                return self.jump_unless_field(BinOp::Eq, f, k, t);
            }
            Op::JumpUnlessFieldNeK { f, k, t } => {
                return self.jump_unless_field(BinOp::Ne, f, k, t);
            }
            Op::JumpUnlessFK { op, f, k, t } => return self.jump_unless_field(op, f, k, t),
            Op::JumpUnlessK { op, a, k, t } => {
                let x = self.get(a);
                let y = self.k128(self.konst(k));
                let v = self.binop_inline(op, x, y)?;
                let c = self.nonzero(v);
                let (next, to) = (self.b.create_block(), self.block(t));
                self.b.ins().brif(c, next, &[], to, &[]);
                self.b.switch_to_block(next);
            }
            Op::AndSkip { d, t } | Op::JumpIfZero { a: d, t } => {
                let v = self.get(d);
                let c = self.nonzero(v);
                let (next, to) = (self.b.create_block(), self.block(t));
                self.b.ins().brif(c, next, &[], to, &[]);
                self.b.switch_to_block(next);
            }
            Op::JumpIfNonZero { a, t } => {
                let v = self.get(a);
                let c = self.nonzero(v);
                self.branch(c, t);
            }
            Op::OrSkip { d, t } => {
                let v = self.get(d);
                let c = self.nonzero(v);
                let (one, next) = (self.b.create_block(), self.b.create_block());
                self.b.ins().brif(c, one, &[], next, &[]);
                self.b.switch_to_block(one);
                let v = self.k128(1);
                self.set(d, v);
                let to = self.block(t);
                self.b.ins().jump(to, &[]);
                self.b.switch_to_block(next);
            }
            Op::Not { d } | Op::D2B { d } => {
                let v = self.get(d);
                let z = self.k128(0);
                let cc = match op {
                    Op::Not { .. } => IntCC::Equal,
                    _ => IntCC::NotEqual,
                };
                let c = self.b.ins().icmp(cc, v, z);
                let v = self.bool128(c);
                self.set(d, v);
            }
            Op::BitNot { d } => {
                let v = self.get(d);
                let v = self.b.ins().bnot(v);
                self.set(d, v);
            }
            Op::TwoCompMod { d, w } => {
                let v = self.get(d);
                let v = match w {
                    0 => self.k128(0),
                    w => self.sign_extend(v, u32::from(w)),
                };
                self.set(d, v);
            }
            Op::SatCast { d, w } => {
                let v = self.get(d);
                let v = self.sat_cast(v, u32::from(w));
                self.set(d, v);
            }
            Op::USatCast { d, w } => {
                let v = self.get(d);
                let z = self.k128(0);
                let neg = self.b.ins().icmp(IntCC::SignedLessThan, v, z);
                let m = self.k128(mask(u32::from(w)));
                let over = self.b.ins().icmp(IntCC::UnsignedGreaterThan, v, m);
                let v = self.choose(over, m, v);
                let v = self.choose(neg, z, v);
                self.set(d, v);
            }
            Op::Store { f, a } => {
                let v = self.get(a);
                let v = self.b.ins().ireduce(types::I64, v);
                self.store(f, v);
            }
            Op::StoreConst { f, k } => {
                let k = self.konst(k) as u64 as i64;
                let v = self.b.ins().iconst(types::I64, k);
                self.b
                    .ins()
                    .store(MemFlagsData::trusted(), v, self.fields, off(8 * f as usize));
            }
            Op::StoreConsts { at, n } => {
                let run = self.code.stores.get(at as usize..(at + n) as usize);
                for &(f, v) in run.unwrap_or(&[]) {
                    let v = self.b.ins().iconst(types::I64, v as u64 as i64);
                    self.b.ins().store(
                        MemFlagsData::trusted(),
                        v,
                        self.fields,
                        off(8 * f as usize),
                    );
                }
            }
            Op::StoreLocals { at, n } => {
                let run = self.code.locals.get(at as usize..(at + n) as usize);
                for &(f, i) in run.unwrap_or(&[]) {
                    let v = self.local(i);
                    let v = self.b.ins().ireduce(types::I64, v);
                    self.store(f, v);
                }
            }
            Op::StoreLocal { f, i } => {
                let v = self.local(i);
                let v = self.b.ins().ireduce(types::I64, v);
                self.store(f, v);
            }
            Op::Copy { f, src } => {
                let v = self.field64(src);
                self.store(f, v);
            }
            Op::Jump { t } => {
                let to = self.block(t);
                self.b.ins().jump(to, &[]);
                return Ok(false);
            }
            Op::JumpIfValid { h, valid, t } => {
                let v = self.b.ins().load(
                    types::I8,
                    MemFlagsData::trusted(),
                    self.valid,
                    off(h as usize),
                );
                let c = self
                    .b
                    .ins()
                    .icmp_imm_u(IntCC::Equal, v, i64::from(u8::from(valid)));
                self.branch(c, t);
            }
            Op::Inline { table, t } => {
                let at = table as usize * std::mem::size_of::<TableState>() + LEN_OFFSET;
                let len =
                    self.b
                        .ins()
                        .load(self.ptr, MemFlagsData::trusted(), self.tables, off(at));
                let c = self.b.ins().icmp_imm_u(IntCC::NotEqual, len, 0);
                self.branch(c, t);
            }
            Op::Exit => {
                self.ret(EXIT);
                return Ok(false);
            }
            Op::End => {
                self.ret(END);
                return Ok(false);
            }
            Op::RegisterGet { .. }
            | Op::RegisterRead { .. }
            | Op::RegisterReadF { .. }
            | Op::RegisterWrite { .. }
            | Op::Count { .. } => self.array_op(op)?,
            Op::Random { f, a } => self.random(f, a)?,
            Op::Eval { .. } | Op::Prim { .. } | Op::Table { .. } => {
                return Err(format!("{op:?} not left to the interpreter"))
            }
        }
        Ok(true)
    }

    /// Jumps to `t` unless `field op k`.
    fn jump_unless_field(&mut self, op: BinOp, f: u32, k: u32, t: u32) -> Result<bool, String> {
        match self.field_test(op, f, self.konst(k))? {
            Ok(c) => {
                let (next, to) = (self.b.create_block(), self.block(t));
                self.b.ins().brif(c, next, &[], to, &[]);
                self.b.switch_to_block(next);
                Ok(true)
            }
            Err(true) => Ok(true),
            Err(false) => {
                let to = self.block(t);
                self.b.ins().jump(to, &[]);
                Ok(false)
            }
        }
    }
}
