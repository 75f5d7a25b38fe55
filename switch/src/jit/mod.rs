//! The straight-line form of a program's actions and controls compiled to
//! machine code with Cranelift when the program is loaded.
//!
//! Each block — one action body, one control with its conditions, its
//! inlined keyless tables and its jumps, or one checksum's condition —
//! becomes one function. In line:
//! constants, field and parameter reads, validity tests, every operator but
//! division and modulo, casts, field stores, conditions and jumps, the
//! entry test of an inlined table, register arrays' and counters' cells,
//! read and written in place, `random` draws (through `run::random`), and
//! exact and LPM tables of keys up to 64 bits applied in place (the lookup,
//! a direct counter, and a call of the action's own function:
//! `build::tables`).
//! Left to the interpreter, one op at a time (the function returns to
//! [`run`], which runs the op and calls again after it): other keyed tables
//! and what they do (lookup, action, direct meters), primitives other
//! than assignment, expressions kept as trees, and 128-bit `/` and `%`. A
//! block that cannot be translated (a slot out of range, a Cranelift error)
//! stays interpreted as a whole; [`Report`] says which and why.
//!
//! Beside the blocks, [`pack`] compiles how fields move between the PHV and
//! bytes: packed headers' wire forms (the deparser), their extraction (the
//! parser) and calculations' packed inputs (checksums, hashes), each used
//! through [`Packer`] or [`Unpacker`] where the interpreter would pack or
//! extract them field by field; [`parse`] compiles the parser's state
//! machine and [`deparse`] the deparser's emission, each one function. The
//! interpreter ([`crate::flat`], and [`crate::exec`] while tracing) stays
//! the reference, and `--no-jit` runs everything there.

#[cfg(test)]
mod block_tests;
mod build;
mod deparse;
#[cfg(test)]
mod deparse_tests;
mod pack;
#[cfg(test)]
mod pack_tests;
mod parse;
#[cfg(test)]
mod parse_tests;
#[cfg(test)]
mod program_tests;
mod run;
#[cfg(test)]
mod test_fixtures;

pub(crate) use run::run;
pub(crate) use run::ParseEnd;
pub use run::{Native, NativeDeparser, NativeParser, Packer, Unpacker};

use std::time::Instant;

use cranelift_codegen::ir::{types, AbiParam, Signature, Type, UserFuncName};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, FuncId, Linkage, Module};

use crate::flat::{Code, Condition, Op};
use crate::program::Program;

/// What compiling a program's blocks did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Blocks (actions, controls, checksum conditions) running as machine code.
    pub compiled: usize,
    /// Blocks left to the interpreter.
    pub interpreted: usize,
    /// Each block left to the interpreter, with the reason.
    pub fallbacks: Vec<(String, String)>,
    /// Time spent compiling, µs.
    pub compile_us: u64,
    /// Table applications the compiled controls do in place (see
    /// `build::tables`) rather than through the interpreter.
    pub tables_in_place: usize,
    /// Parse states run by the compiled parser (see [`parse`]).
    pub parser_states: usize,
    /// Headers the compiled deparser emits (see [`deparse`]); 0 when the
    /// interpreter deparses every packet.
    pub deparser_headers: usize,
}

/// A block of a program: its name and where its code is.
#[derive(Clone, Copy)]
enum Block {
    Action(usize),
    Ingress,
    Egress,
    Ghost,
    /// A checksum's condition.
    Condition(usize),
}

impl Block {
    /// The block's code (None only for a checksum whose condition is no block).
    fn code(self, p: &Program) -> Option<&Code> {
        match self {
            Block::Action(a) => p.flat.actions.get(a),
            Block::Ingress => Some(&p.flat.ingress),
            Block::Egress => Some(&p.flat.egress),
            Block::Ghost => Some(&p.flat.ghost),
            Block::Condition(c) => match p.flat.conditions.get(c)? {
                Condition::Block(code) => Some(code.as_ref()),
                _ => None,
            },
        }
    }

    fn code_mut(self, p: &mut Program) -> Option<&mut Code> {
        match self {
            Block::Action(a) => p.flat.actions.get_mut(a),
            Block::Ingress => Some(&mut p.flat.ingress),
            Block::Egress => Some(&mut p.flat.egress),
            Block::Ghost => Some(&mut p.flat.ghost),
            Block::Condition(c) => match p.flat.conditions.get_mut(c)? {
                Condition::Block(code) => Some(code.as_mut()),
                _ => None,
            },
        }
    }

    fn name(self, p: &Program) -> String {
        match self {
            Block::Action(a) => format!("action {}", p.actions[a].name),
            Block::Ingress => format!("control {}", p.ingress.name),
            Block::Egress => format!("control {}", p.egress.name),
            Block::Ghost => format!("control {}", p.ghost.name),
            Block::Condition(c) => format!("condition of checksum {}", p.checksums[c].name),
        }
    }
}

/// The blocks of `p` worth compiling: every action, the controls the
/// program has, and its checksums' conditions.
fn blocks(p: &Program) -> Vec<Block> {
    let mut v: Vec<Block> = (0..p.flat.actions.len()).map(Block::Action).collect();
    for (pipe, block) in [
        (&p.ingress, Block::Ingress),
        (&p.egress, Block::Egress),
        (&p.ghost, Block::Ghost),
    ] {
        if pipe.init.is_some() {
            v.push(block);
        }
    }
    let conditions = p.flat.conditions.iter().enumerate();
    let blocks = conditions.filter(|(_, c)| matches!(c, Condition::Block(_)));
    v.extend(blocks.map(|(c, _)| Block::Condition(c)));
    v
}

/// Compiles `p`'s blocks to machine code (replacing any compiled before);
/// blocks that cannot be compiled stay interpreted.
pub fn compile(p: &mut Program) -> Report {
    let t0 = Instant::now();
    strip(p);
    let all = blocks(p);
    let mut report = Report::default();
    let mut module = match new_module() {
        Ok(m) => m,
        Err(why) => {
            report.interpreted = all.len();
            report.fallbacks = all.iter().map(|b| (b.name(p), why.clone())).collect();
            return report;
        }
    };
    let mut done: Vec<(Block, FuncId, build::Limits, usize)> = Vec::with_capacity(all.len());
    // Actions come first: a control's tables applied in place call those
    // that leave no op to the interpreter.
    let mut callable: Vec<Option<FuncId>> = vec![None; p.actions.len()];
    let mut fctx = FunctionBuilderContext::new();
    let mut ctx = module.make_context();
    for (i, &block) in all.iter().enumerate() {
        match define(&mut module, &mut ctx, &mut fctx, p, block, i, &callable) {
            Ok((id, limits, in_place)) => {
                if let (Block::Action(a), false) = (block, limits.spills) {
                    callable[a] = Some(id);
                }
                done.push((block, id, limits, in_place));
            }
            Err(why) => report.fallbacks.push((block.name(p), why)),
        }
        module.clear_context(&mut ctx);
    }
    let mut packed: Vec<(Packed, FuncId, pack::Plan)> = vec![];
    for (i, (what, plan)) in packing_plans(p).into_iter().enumerate() {
        let direction = match what {
            Packed::Extract(_) => pack::Direction::Extract,
            _ => pack::Direction::Pack,
        };
        // Should Cranelift refuse a function of plain loads and stores, that
        // layout stays interpreted, as it is without the JIT.
        if let Ok(id) = pack::define(&mut module, &mut ctx, &mut fctx, &plan, direction, i as u32) {
            packed.push((what, id, plan));
        }
        module.clear_context(&mut ctx);
    }
    let parser = parse::plan(p).and_then(|plan| {
        let id = define_parser(&mut module, &mut ctx, &mut fctx, p, &plan);
        module.clear_context(&mut ctx);
        // Should Cranelift refuse it, the interpreter parses, as without the JIT.
        Some((id.ok()?, plan))
    });
    let deparser = deparse::plan(p).and_then(|plan| {
        let ptr = module.target_config().pointer_type();
        let id = define_body(
            &mut module,
            &mut ctx,
            &mut fctx,
            (&[ptr, ptr, ptr], &[types::I64]),
            (4, 0),
            |b| deparse::translate(b, &plan),
        );
        module.clear_context(&mut ctx);
        // Should Cranelift refuse it, the interpreter deparses, as without the JIT.
        Some((id.ok()?, plan))
    });
    if let Err(e) = module.finalize_definitions() {
        report.interpreted = all.len();
        report.fallbacks = all.iter().map(|b| (b.name(p), e.to_string())).collect();
        return report;
    }
    let memory = run::Memory::new(module);
    for (block, id, limits, in_place) in done {
        match Native::new(&memory, id, limits) {
            Some(native) => {
                if let Some(code) = block.code_mut(p) {
                    code.native = Some(native);
                }
                report.compiled += 1;
                report.tables_in_place += in_place;
            }
            None => report
                .fallbacks
                .push((block.name(p), "no machine code".into())),
        }
    }
    for (what, id, plan) in packed {
        let packer = || Packer::new(&memory, id, plan.fields(), plan.written());
        match what {
            Packed::Header(h) => p.headers[h].native_emit = packer(),
            Packed::Inputs(c) => {
                if let Some(pk) = p.calculations[c].packed.as_mut() {
                    pk.native = packer();
                }
            }
            Packed::Extract(h) => {
                p.headers[h].native_extract =
                    Unpacker::new(&memory, id, plan.fields(), plan.read());
            }
        }
    }
    if let Some((id, plan)) = parser {
        p.native_parser = NativeParser::new(&memory, id, plan.fields, plan.headers);
        if p.native_parser.is_some() {
            report.parser_states = plan.compiled();
        }
    }
    if let Some((id, plan)) = deparser {
        let (fields, valid, capacity) = (plan.fields(), plan.valid(), plan.capacity());
        p.native_deparser = NativeDeparser::new(&memory, id, fields, valid, capacity);
        if p.native_deparser.is_some() {
            report.deparser_headers = plan.packed().count();
        }
    }
    report.interpreted = report.fallbacks.len();
    report.compile_us = t0.elapsed().as_micros() as u64;
    report
}

/// Drops `p`'s machine code: every block, header, calculation, parse
/// state and the deparser run in the interpreter.
pub fn strip(p: &mut Program) {
    for code in p.flat.actions.iter_mut() {
        code.native = None;
    }
    for code in [&mut p.flat.ingress, &mut p.flat.egress, &mut p.flat.ghost] {
        code.native = None;
    }
    for c in p.flat.conditions.iter_mut() {
        if let Condition::Block(code) = c {
            code.native = None;
        }
    }
    p.native_parser = None;
    p.native_deparser = None;
    for h in p.headers.iter_mut() {
        h.native_emit = None;
        h.native_extract = None;
    }
    for pk in p.calculations.iter_mut().filter_map(|c| c.packed.as_mut()) {
        pk.native = None;
    }
}

/// Where a function moving fields goes: a header's wire form, a
/// calculation's inputs, or a header's extraction.
#[derive(Clone, Copy)]
enum Packed {
    Header(usize),
    Inputs(usize),
    Extract(usize),
}

/// The functions moving fields worth compiling: every packed header's wire
/// form (emitted by the deparser, or hashed whole) and extraction, and
/// every calculation's packed inputs, whose fields fit their 64-bit slots.
fn packing_plans(p: &Program) -> Vec<(Packed, pack::Plan)> {
    let headers = p.headers.iter().enumerate().flat_map(|(h, hi)| {
        let plan = pack::Plan::of_header(p, hi);
        let extract = plan
            .as_ref()
            .filter(|plan| plan.extractable())
            .map(|plan| (Packed::Extract(h), plan.clone()));
        plan.map(|plan| (Packed::Header(h), plan))
            .into_iter()
            .chain(extract)
    });
    let inputs = p.calculations.iter().enumerate().filter_map(|(c, calc)| {
        let plan = pack::Plan::of_inputs(p, calc.packed.as_ref()?)?;
        Some((Packed::Inputs(c), plan))
    });
    headers
        .chain(inputs)
        .filter(|(_, plan)| plan.fields() < i32::MAX as usize / 8)
        .collect()
}

/// A module for the host, code at fixed addresses. The mid-end optimiser is
/// off: it took most of the compile time (buffer_switch.p4's 111
/// blocks: about 60 ms without it, 110 to 200 ms with it, on a loaded
/// machine), and the translation already folds what it would (constants into
/// ops, 64-bit compares of fields); register allocation stays the thorough one.
/// Cranelift's IR verifier runs in debug builds (the tests) only: in a release
/// build it was a few per cent of a simulation's CPU time, each switch's
/// program checked again at every load.
fn new_module() -> Result<JITModule, String> {
    let mut flags = settings::builder();
    let verify = if cfg!(debug_assertions) {
        "true"
    } else {
        "false"
    };
    for (k, v) in [
        ("opt_level", "none"),
        ("use_colocated_libcalls", "false"),
        ("is_pic", "false"),
        ("enable_verifier", verify),
    ] {
        flags
            .set(k, v)
            .map_err(|e| format!("cranelift flag {k}: {e}"))?;
    }
    let isa = cranelift_native::builder()
        .map_err(|e| format!("host not supported by cranelift: {e}"))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| format!("cranelift: {e}"))?;
    let mut builder = JITBuilder::with_isa(isa, default_libcall_names());
    builder.symbol(run::PACKED_HANDLE, run::packed_handle as *const u8);
    builder.symbol(run::COUNT_HIT, run::count_hit as *const u8);
    builder.symbol(run::RANDOM, run::random as *const u8);
    Ok(JITModule::new(builder))
}

/// A signature of the host's calling convention.
fn signature(module: &JITModule, params: &[Type], returns: &[Type]) -> Signature {
    let mut sig = module.make_signature();
    sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
    sig.returns
        .extend(returns.iter().map(|&t| AbiParam::new(t)));
    sig
}

/// Declares a function of the host's calling convention taking `params`
/// and returning `returns`, and readies `ctx` to build it under `name`
/// (a namespace and an index, for Cranelift's messages).
fn declare(
    module: &mut JITModule,
    ctx: &mut cranelift_codegen::Context,
    params: &[Type],
    returns: &[Type],
    name: (u32, u32),
) -> Result<FuncId, String> {
    let sig = signature(module, params, returns);
    let id = module
        .declare_anonymous_function(&sig)
        .map_err(|e| e.to_string())?;
    ctx.func.signature = sig;
    ctx.func.name = UserFuncName::user(name.0, name.1);
    Ok(id)
}

/// The Rust function imported as `name` (one `JITBuilder::symbol` names)
/// declared in `func`.
fn import(
    module: &mut JITModule,
    func: &mut cranelift_codegen::ir::Function,
    name: &str,
    params: &[Type],
    returns: &[Type],
) -> Result<cranelift_codegen::ir::FuncRef, String> {
    let sig = signature(module, params, returns);
    let id = module
        .declare_function(name, Linkage::Import, &sig)
        .map_err(|e| e.to_string())?;
    Ok(module.declare_func_in_func(id, func))
}

/// Translates and defines one block's function, with its limits and the
/// number of tables it applies in place (calling the functions `callable`
/// names by action).
fn define(
    module: &mut JITModule,
    ctx: &mut cranelift_codegen::Context,
    fctx: &mut FunctionBuilderContext,
    p: &Program,
    block: Block,
    i: usize,
    callable: &[Option<FuncId>],
) -> Result<(FuncId, build::Limits, usize), String> {
    let code = block.code(p).ok_or("no code")?;
    let limits = build::check(p, code)?;
    let ptr = module.target_config().pointer_type();
    let id = declare(
        module,
        ctx,
        &[ptr, types::I32],
        &[types::I64],
        (0, i as u32),
    )?;
    let config = module.target_config();
    let mut b = FunctionBuilder::new(&mut ctx.func, fctx);
    let mut calls = vec![None; callable.len()];
    let (mut looked_up, mut counted) = (false, false);
    for op in &code.ops {
        if let Op::Table { table } = *op {
            let actions = build::calls_of(p, table as usize, callable);
            let t = table as usize;
            looked_up |= !actions.is_empty() && build::by_lookup(p, t);
            counted |= !actions.is_empty() && p.tables[t].with_counters;
            for a in actions {
                let slot = &mut calls[a as usize];
                if let (None, Some(id)) = (*slot, callable[a as usize]) {
                    *slot = Some(module.declare_func_in_func(id, b.func));
                }
            }
        }
    }
    let (key, handle) = ([ptr, types::I64], [types::I32]);
    let lookup = match looked_up {
        true => Some(import(module, b.func, run::PACKED_HANDLE, &key, &handle)?),
        false => None,
    };
    let hit = [ptr, types::I32, types::I64];
    let count = match counted {
        true => Some(import(module, b.func, run::COUNT_HIT, &hit, &[])?),
        false => None,
    };
    let random = match code.ops.iter().any(|op| matches!(op, Op::Random { .. })) {
        true => Some(import(
            module,
            b.func,
            run::RANDOM,
            &[ptr, types::I64, types::I64, types::I64, types::I64],
            &[types::I64],
        )?),
        false => None,
    };
    let calls = build::Calls {
        calls,
        lookup,
        count,
        random,
    };
    let built = build::translate(&mut b, p, code, ptr, calls);
    let in_place = match built {
        Ok(n) => {
            b.finalize(config);
            n
        }
        Err(why) => {
            // A builder left half way leaves its context dirty.
            *fctx = FunctionBuilderContext::new();
            return Err(why);
        }
    };
    module
        .define_function(id, ctx)
        .map_err(|e| format!("cranelift: {e:?}"))?;
    Ok((id, limits, in_place))
}

/// Translates and defines `p`'s parser as compiled by `plan`.
fn define_parser(
    module: &mut JITModule,
    ctx: &mut cranelift_codegen::Context,
    fctx: &mut FunctionBuilderContext,
    p: &Program,
    plan: &parse::ParserPlan,
) -> Result<FuncId, String> {
    let ptr = module.target_config().pointer_type();
    let signature = (&[ptr, types::I32][..], &[types::I64][..]);
    define_body(module, ctx, fctx, signature, (3, 0), |b| {
        parse::translate(b, p, plan, ptr)
    })
}

/// Declares a function of `signature` (parameters, results) named `name`
/// (see [`declare`]), has `body` build it and defines it in `module`.
fn define_body(
    module: &mut JITModule,
    ctx: &mut cranelift_codegen::Context,
    fctx: &mut FunctionBuilderContext,
    signature: (&[Type], &[Type]),
    name: (u32, u32),
    body: impl FnOnce(&mut FunctionBuilder<'_>),
) -> Result<FuncId, String> {
    let id = declare(module, ctx, signature.0, signature.1, name)?;
    let mut b = FunctionBuilder::new(&mut ctx.func, fctx);
    body(&mut b);
    b.finalize(module.target_config());
    module
        .define_function(id, ctx)
        .map_err(|e| format!("cranelift: {e:?}"))?;
    Ok(id)
}
