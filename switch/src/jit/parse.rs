//! A program's parser as one machine-code function.
//!
//! The function takes the context ([`super::run::ParseCtx`]: field slots,
//! validity bits, the frame and its cursor) and the state to start at, and
//! runs the state machine as far as it can. A state it compiles ([`plan`]
//! says which) checks once that the frame holds every byte its extractions
//! read, extracts each header with one unaligned load per field (as
//! [`super::pack`]'s extraction does), tests its key's fields against each
//! transition's values and masks, and jumps to the next state's block.
//!
//! Any other state, and a state whose reads would pass the frame's end or
//! whose visit would pass the step limit, is where the function returns
//! [`RESUME`] plus the state, before it has done anything of that state: the
//! interpreter ([`crate::exec::parser`]) goes on from there and raises the
//! errors (a frame cut short, a parser timeout) itself, so they stay in one
//! place.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, InstBuilder, JumpTableData, MemFlagsData, Type, Value};
use cranelift_frontend::{FunctionBuilder, Variable};

use super::pack::{extract, Plan};
use super::run::{ParseCtx, PARSED, REJECTED, RESUME};
use crate::bits::mask;
use crate::exec::MAX_PARSE_STEPS;
use crate::program::{Expr, ExtractTarget, LValue, ParseState, ParserOp, Program, TransitionMatch};

/// One operation of a compiled state, at a byte offset from the cursor the
/// state starts at (known at load time: every earlier operation moves the
/// cursor by a fixed amount).
#[derive(Debug, Clone)]
enum Step {
    /// Header `h`'s fields from `at`, then its validity (its union's other
    /// members made invalid, as `setValid` does).
    Extract { h: u32, at: u32, plan: Plan },
    /// A constant into a field, already cut to the field's width.
    SetConst { f: u32, v: u64 },
    /// Field `src` into field `f`, cut to `mask`.
    SetField { f: u32, src: u32, mask: u64 },
}

/// One transition of a compiled state: per key component (value, mask),
/// none for the default; the next state (None: accept).
type Arm = (Vec<(u64, u64)>, Option<u32>);

/// How one compiled state runs.
#[derive(Debug, Clone)]
struct StatePlan {
    steps: Vec<Step>,
    /// Bytes past the state's cursor its operations read or pass.
    need: u32,
    /// Bytes it moves the cursor.
    advance: u32,
    /// Each key component: its field slot and the mask of its width.
    key: Vec<(u32, u64)>,
    /// The transitions, in order.
    transitions: Vec<Arm>,
    /// TNA's `$reject`.
    reject: bool,
}

/// The plans of `p`'s states (None for those left to the interpreter),
/// and the field slots and headers they touch (every one is below these).
pub(super) struct ParserPlan {
    states: Vec<Option<StatePlan>>,
    /// Field slots: each one named is below this.
    pub fields: usize,
    /// Header validity bits: each one named is below this.
    pub headers: usize,
}

impl ParserPlan {
    /// States compiled.
    pub(super) fn compiled(&self) -> usize {
        self.states.iter().flatten().count()
    }
}

/// Which of `p`'s states compile, and how; None when none does.
pub(super) fn plan(p: &Program) -> Option<ParserPlan> {
    let extracts: Vec<Option<Plan>> = p
        .headers
        .iter()
        .map(|hi| {
            let whole = hi.fixed_bits % 8 == 0 && !hi.metadata;
            Plan::of_header(p, hi).filter(|plan| whole && plan.extractable())
        })
        .collect();
    let states: Vec<Option<StatePlan>> = p
        .parse_states
        .iter()
        .map(|s| state_plan(p, s, &extracts))
        .collect();
    let mut plan = ParserPlan {
        states,
        fields: 0,
        headers: 0,
    };
    for s in plan.states.iter().flatten() {
        for step in &s.steps {
            let (f, h) = match step {
                Step::Extract { h, plan, .. } => {
                    let members = p.headers[*h as usize]
                        .union
                        .map(|u| &p.unions[u as usize].headers[..])
                        .unwrap_or(&[]);
                    let last = members.iter().copied().chain([*h]).max().unwrap_or(*h);
                    (plan.fields(), last as usize + 1)
                }
                Step::SetConst { f, .. } => (*f as usize + 1, 0),
                Step::SetField { f, src, .. } => ((*f).max(*src) as usize + 1, 0),
            };
            plan.fields = plan.fields.max(f);
            plan.headers = plan.headers.max(h);
        }
        let keys = s.key.iter().map(|&(f, _)| f as usize + 1);
        plan.fields = plan.fields.max(keys.max().unwrap_or(0));
    }
    (plan.compiled() > 0 && plan.fields < i32::MAX as usize / 8).then_some(plan)
}

/// A narrow field slot (its whole value in its 64-bit slot).
fn narrow(p: &Program, f: u32) -> Option<u32> {
    let fi = p.fields.get(f as usize)?;
    (fi.width <= 64 && p.wire.get(f as usize)?.high.is_none()).then_some(f)
}

/// How state `s` compiles, or None when it is left to the interpreter.
fn state_plan(p: &Program, s: &ParseState, extracts: &[Option<Plan>]) -> Option<StatePlan> {
    if s.reject {
        let plan = StatePlan {
            steps: vec![],
            need: 0,
            advance: 0,
            key: vec![],
            transitions: vec![],
            reject: true,
        };
        return Some(plan);
    }
    let (mut steps, mut at, mut need) = (vec![], 0u32, 0u32);
    for op in &s.ops {
        match op {
            ParserOp::Extract(ExtractTarget::Header(h)) => {
                let plan = extracts.get(*h as usize)?.clone()?;
                let read = plan.read().max(plan.bytes as usize);
                need = need.max(at.checked_add(u32::try_from(read).ok()?)?);
                let bytes = plan.bytes;
                steps.push(Step::Extract { h: *h, at, plan });
                at = at.checked_add(bytes)?;
            }
            ParserOp::Advance(Expr::Const(bits)) if bits % 8 == 0 => {
                at = at.checked_add(u32::try_from(bits / 8).ok()?)?;
                need = need.max(at);
            }
            ParserOp::Set(LValue::Field(f), e) => {
                let f = narrow(p, *f)?;
                let width = mask(p.fields[f as usize].width) as u64;
                steps.push(match e {
                    Expr::Const(v) => Step::SetConst {
                        f,
                        v: *v as u64 & width,
                    },
                    Expr::Field(src) => Step::SetField {
                        f,
                        src: narrow(p, *src)?,
                        mask: width,
                    },
                    _ => return None,
                });
            }
            _ => return None,
        }
    }
    if s.key_lookahead != 0 {
        return None;
    }
    let key = s
        .key
        .iter()
        .map(|k| match k.expr {
            Expr::Field(f) if k.width <= 64 => Some((narrow(p, f)?, mask(k.width) as u64)),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    let mut transitions = vec![];
    for t in &s.transitions {
        match &t.on {
            TransitionMatch::Default => transitions.push((vec![], t.next)),
            TransitionMatch::Value(vm) if vm.len() == key.len() => {
                // A key component is at most 64 bits: a value above that never
                // matches, and a mask's upper bits meet only zeros.
                if vm.iter().all(|&(v, _)| v >> 64 == 0) {
                    let vm = vm.iter().map(|&(v, m)| (v as u64, m as u64)).collect();
                    transitions.push((vm, t.next));
                }
            }
            _ => return None,
        }
    }
    Some(StatePlan {
        steps,
        need,
        advance: at,
        key,
        transitions,
        reject: false,
    })
}

/// Memory flags of the context, field slots and validity bits (aligned,
/// never trapping) and of the frame (not aligned; read only within bounds
/// checked before).
const TRUSTED: MemFlagsData = MemFlagsData::trusted();

/// Byte offset of a context field.
macro_rules! at {
    ($field:ident) => {
        std::mem::offset_of!(ParseCtx, $field) as i32
    };
}

/// The translation of a parser.
struct Tr<'a, 'b> {
    b: &'a mut FunctionBuilder<'b>,
    ctx: Value,
    fields: Value,
    valid: Value,
    data: Value,
    len: Value,
    cursor: Variable,
    steps: Variable,
    /// Each state's block (compiled states only).
    blocks: Vec<Option<Block>>,
    /// Blocks returning a status (accept, or a state left to the
    /// interpreter), one per status, filled after the states.
    exits: Vec<(u64, Block)>,
}

/// Translates `plan` into the function `b` builds (signature: context
/// pointer, start state as i32; status as i64).
pub(super) fn translate(b: &mut FunctionBuilder<'_>, p: &Program, plan: &ParserPlan, ptr: Type) {
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let (ctx, start) = (b.block_params(entry)[0], b.block_params(entry)[1]);
    let load = |b: &mut FunctionBuilder<'_>, off: i32| b.ins().load(ptr, TRUSTED, ctx, off);
    let (fields, valid) = (load(b, at!(fields)), load(b, at!(valid)));
    let (data, len) = (load(b, at!(data)), load(b, at!(len)));
    let cursor = b.declare_var(ptr);
    let c = load(b, at!(cursor));
    b.def_var(cursor, c);
    let steps = b.declare_var(types::I32);
    let n = b.ins().load(types::I32, TRUSTED, ctx, at!(steps));
    b.def_var(steps, n);
    let blocks = plan
        .states
        .iter()
        .map(|s| s.as_ref().map(|_| b.create_block()))
        .collect();
    let mut tr = Tr {
        b,
        ctx,
        fields,
        valid,
        data,
        len,
        cursor,
        steps,
        blocks,
        exits: vec![],
    };
    tr.dispatch(start);
    for (si, s) in plan.states.iter().enumerate() {
        if let (Some(s), Some(block)) = (s, tr.blocks[si]) {
            tr.b.switch_to_block(block);
            tr.state(p, si as u32, s);
        }
    }
    for (status, block) in std::mem::take(&mut tr.exits) {
        tr.b.switch_to_block(block);
        tr.leave_with(status);
    }
    tr.b.seal_all_blocks();
}

impl Tr<'_, '_> {
    /// The entry: a jump table from the start state to its block; a state
    /// not compiled (or out of range) goes back to the interpreter at once.
    fn dispatch(&mut self, start: Value) {
        let back = self.b.create_block();
        let mut table = Vec::with_capacity(self.blocks.len());
        for si in 0..self.blocks.len() {
            let to = self.blocks[si].unwrap_or(back);
            table.push(self.b.func.dfg.block_call(to, &[]));
        }
        let default = self.b.func.dfg.block_call(back, &[]);
        let jt = self
            .b
            .create_jump_table(JumpTableData::new(default, &table));
        self.b.ins().br_table(start, jt);
        self.b.switch_to_block(back);
        let start = self.b.ins().uextend(types::I64, start);
        let status = self.b.ins().iadd_imm_u(start, RESUME as i64);
        self.leave(status);
    }

    /// Stores the cursor and the steps taken into the context and returns `status`.
    fn leave(&mut self, status: Value) {
        let (c, n) = (self.b.use_var(self.cursor), self.b.use_var(self.steps));
        self.b.ins().store(TRUSTED, c, self.ctx, at!(cursor));
        self.b.ins().store(TRUSTED, n, self.ctx, at!(steps));
        self.b.ins().return_(&[status]);
    }

    /// [`Tr::leave`] with a status known now.
    fn leave_with(&mut self, status: u64) {
        let v = self.b.ins().iconst(types::I64, status as i64);
        self.leave(v);
    }

    /// The block going on at state `next`: its own, or (accept, or a state
    /// not compiled) the one returning that status.
    fn target(&mut self, next: Option<u32>) -> Block {
        if let Some(block) = next.and_then(|si| *self.blocks.get(si as usize)?) {
            return block;
        }
        let status = next.map_or(PARSED, |si| RESUME + u64::from(si));
        if let Some(&(_, block)) = self.exits.iter().find(|(s, _)| *s == status) {
            return block;
        }
        let block = self.b.create_block();
        self.exits.push((status, block));
        block
    }

    /// State `si`'s block (the builder is in it): the checks, its steps, its
    /// key and transitions.
    fn state(&mut self, p: &Program, si: u32, s: &StatePlan) {
        let (c, n) = (self.b.use_var(self.cursor), self.b.use_var(self.steps));
        let limit = i64::from(MAX_PARSE_STEPS);
        let mut stop = self
            .b
            .ins()
            .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, n, limit);
        if s.need > 0 {
            let end = self.b.ins().iadd_imm_u(c, i64::from(s.need));
            let past = self.b.ins().icmp(IntCC::UnsignedGreaterThan, end, self.len);
            stop = self.b.ins().bor(stop, past);
        }
        let (back, body) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(stop, back, &[], body, &[]);
        self.b.switch_to_block(back);
        self.leave_with(RESUME + u64::from(si));
        self.b.switch_to_block(body);
        let n = self.b.ins().iadd_imm_u(n, 1);
        self.b.def_var(self.steps, n);
        if s.reject {
            self.leave_with(REJECTED);
            return;
        }
        let base = self.b.ins().iadd(self.data, c);
        for step in &s.steps {
            self.step(p, base, step);
        }
        if s.advance > 0 {
            let c = self.b.ins().iadd_imm_u(c, i64::from(s.advance));
            self.b.def_var(self.cursor, c);
        }
        if s.transitions.is_empty() {
            self.leave_with(PARSED);
            return;
        }
        let key: Vec<(Value, u64)> = s
            .key
            .iter()
            .map(|&(f, width)| {
                let v = self
                    .b
                    .ins()
                    .load(types::I64, TRUSTED, self.fields, 8 * f as i32);
                (v, width)
            })
            .collect();
        for (vm, next) in &s.transitions {
            let to = self.target(*next);
            if vm.is_empty() {
                self.b.ins().jump(to, &[]);
                return;
            }
            let miss = self.b.create_block();
            for (&(k, width), &(v, m)) in key.iter().zip(vm) {
                let m = m & width;
                let k = match m {
                    u64::MAX => k,
                    m => self.b.ins().band_imm_u(k, m as i64),
                };
                let ne = self.b.ins().icmp_imm_u(IntCC::NotEqual, k, v as i64);
                let more = self.b.create_block();
                self.b.ins().brif(ne, miss, &[], more, &[]);
                self.b.switch_to_block(more);
            }
            self.b.ins().jump(to, &[]);
            self.b.switch_to_block(miss);
        }
        // No transition matched: the interpreter's loop ends, as at accept.
        self.leave_with(PARSED);
    }

    /// One step of a state whose frame bytes start at `base`.
    fn step(&mut self, p: &Program, base: Value, step: &Step) {
        match step {
            Step::Extract { h, at, plan } => {
                let input = self.b.ins().iadd_imm_u(base, i64::from(*at));
                extract(self.b, plan, input, self.fields);
                let hi = &p.headers[*h as usize];
                if let Some(u) = hi.union {
                    let zero = self.b.ins().iconst(types::I8, 0);
                    for &m in p.unions[u as usize].headers.iter().filter(|&&m| m != *h) {
                        self.b.ins().store(TRUSTED, zero, self.valid, m as i32);
                    }
                }
                let one = self.b.ins().iconst(types::I8, 1);
                self.b.ins().store(TRUSTED, one, self.valid, *h as i32);
            }
            Step::SetConst { f, v } => {
                let v = self.b.ins().iconst(types::I64, *v as i64);
                self.b.ins().store(TRUSTED, v, self.fields, 8 * *f as i32);
            }
            Step::SetField { f, src, mask } => {
                let v = self
                    .b
                    .ins()
                    .load(types::I64, TRUSTED, self.fields, 8 * *src as i32);
                let v = match *mask {
                    u64::MAX => v,
                    m => self.b.ins().band_imm_u(v, m as i64),
                };
                self.b.ins().store(TRUSTED, v, self.fields, 8 * *f as i32);
            }
        }
    }
}
