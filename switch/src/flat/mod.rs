//! Straight-line form of actions and controls, built once at load time.
//!
//! The expression tree and the control graph cost a call, a large stack
//! frame and a lookup of the table's definition and state per node; most of
//! a compiled program's nodes are tiny (p4c wraps each action an apply
//! block calls in a keyless table with a const default). Here each action
//! body and each control becomes one array of register operations with
//! field slots, constants and jump targets resolved: keyless tables with a
//! const default are inlined with their action data folded into constants,
//! conditionals become jumps, and only tables with keys (or entries) go
//! through [`crate::exec::apply_table`]. Anything rare (stacks, unions,
//! hashes, clones, logging, wide fields) keeps its tree form and runs
//! through the interpreter in [`crate::exec`]. [`crate::jit`] compiles these
//! forms to machine code and hands back the ops it leaves to the interpreter
//! ([`step`]).

mod build;
#[cfg(test)]
pub(crate) mod random;
mod run;
#[cfg(test)]
mod tests;

pub use build::build;
pub use run::{holds, run_action, run_control};
pub(crate) use run::{left_to_interpreter, run_from, step, Next};

use crate::program::{BinOp, Expr, Prim};

/// Registers of the straight-line form; deeper expressions are evaluated
/// as trees.
pub(crate) const REGS: usize = 16;

/// Register index within the register file (the mask keeps indexing free of
/// bounds checks; the compiler never emits an index past `REGS`).
#[inline(always)]
pub(crate) fn r(i: u8) -> usize {
    usize::from(i) & (REGS - 1)
}

/// Where a fallback operation's action data comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DataRef {
    /// The data the action was called with.
    Call,
    /// Data fixed at load time (an inlined default action), in [`Code::data`].
    Fixed(u32),
}

/// One operation. `d` names the destination register; binary operations
/// take their left operand from `d` and their right from `d + 1` (or a
/// constant), so registers are allocated as a stack.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Op {
    Const {
        d: u8,
        k: u32,
    },
    Field {
        d: u8,
        f: u32,
    },
    SignedField {
        d: u8,
        f: u32,
        w: u8,
    },
    Local {
        d: u8,
        i: u16,
    },
    Valid {
        d: u8,
        h: u32,
    },
    Bin {
        op: BinOp,
        d: u8,
    },
    BinK {
        op: BinOp,
        d: u8,
        k: u32,
    },
    /// `r[d] = r[d] op field`.
    BinF {
        op: BinOp,
        d: u8,
        f: u32,
    },
    /// `r[d] = field op constant`.
    FieldBinK {
        op: BinOp,
        d: u8,
        f: u32,
        k: u32,
    },
    /// A run of constant stores: `n` (field, value) pairs from [`Code::stores`].
    StoreConsts {
        at: u32,
        n: u32,
    },
    /// A run of parameter stores: `n` (field, parameter) pairs from [`Code::locals`].
    StoreLocals {
        at: u32,
        n: u32,
    },
    /// A register read whose index is a field.
    RegisterReadF {
        f: u32,
        array: u32,
        index: u32,
    },
    JumpIfNonZero {
        a: u8,
        t: u32,
    },
    /// Jumps unless `r[a] op constant`.
    JumpUnlessK {
        op: BinOp,
        a: u8,
        k: u32,
        t: u32,
    },
    /// Jumps unless `field op constant`.
    JumpUnlessFK {
        op: BinOp,
        f: u32,
        k: u32,
        t: u32,
    },
    /// Jumps when the header's validity is `valid`.
    JumpIfValid {
        h: u32,
        valid: bool,
        t: u32,
    },
    /// `&&`: when `r[d]` is 0 the result is 0 and the right side is skipped.
    AndSkip {
        d: u8,
        t: u32,
    },
    /// `||`: when `r[d]` is not 0 the result is 1 and the right side is skipped.
    OrSkip {
        d: u8,
        t: u32,
    },
    Not {
        d: u8,
    },
    BitNot {
        d: u8,
    },
    D2B {
        d: u8,
    },
    TwoCompMod {
        d: u8,
        w: u8,
    },
    SatCast {
        d: u8,
        w: u8,
    },
    USatCast {
        d: u8,
        w: u8,
    },
    RegisterGet {
        d: u8,
        array: u32,
    },
    /// `r[d] &= constant` (`BinK` with `&`, the commonest operator forms have ops
    /// of their own: one dispatch instead of a second one on the operator).
    AndK {
        d: u8,
        k: u32,
    },
    /// `r[d] += field`.
    AddF {
        d: u8,
        f: u32,
    },
    /// `r[d] -= field`.
    SubF {
        d: u8,
        f: u32,
    },
    /// `r[d] = field == constant`.
    FieldEqK {
        d: u8,
        f: u32,
        k: u32,
    },
    /// Jumps unless `field == constant`.
    JumpUnlessFieldEqK {
        f: u32,
        k: u32,
        t: u32,
    },
    /// Jumps unless `field != constant`.
    JumpUnlessFieldNeK {
        f: u32,
        k: u32,
        t: u32,
    },
    /// A node evaluated as a tree (see [`Code::exprs`]).
    Eval {
        d: u8,
        e: u32,
        data: DataRef,
    },
    Store {
        f: u32,
        a: u8,
    },
    StoreConst {
        f: u32,
        k: u32,
    },
    StoreLocal {
        f: u32,
        i: u16,
    },
    Copy {
        f: u32,
        src: u32,
    },
    RegisterRead {
        f: u32,
        array: u32,
        a: u8,
    },
    RegisterWrite {
        array: u32,
        a: u8,
    },
    Count {
        array: u32,
        a: u8,
    },
    /// `f =` a uniform value in `[r[a], r[a + 1]]` from the state's
    /// generator; nothing (and no draw) when `r[a] > r[a + 1]`.
    Random {
        f: u32,
        a: u8,
    },
    Jump {
        t: u32,
    },
    JumpIfZero {
        a: u8,
        t: u32,
    },
    /// A primitive run by the interpreter (see [`Code::prims`]).
    Prim {
        p: u32,
        data: DataRef,
    },
    Exit,
    /// An inlined keyless table: when it has an entry after all, it runs
    /// through the table machinery at `t` instead.
    Inline {
        table: u32,
        t: u32,
    },
    /// Applies a table, then continues at its successor's label.
    Table {
        table: u32,
    },
    End,
}

/// The straight-line form of one action or one control.
#[derive(Debug, Clone, Default)]
pub struct Code {
    pub(crate) ops: Vec<Op>,
    pub(crate) consts: Vec<u128>,
    exprs: Vec<Expr>,
    prims: Vec<Prim>,
    data: Vec<Vec<u128>>,
    pub(crate) stores: Vec<(u32, u128)>,
    pub(crate) locals: Vec<(u32, u16)>,
    // Label of each table and conditional node (u32::MAX when not in this control).
    pub(crate) table_labels: Vec<u32>,
    pub(crate) cond_labels: Vec<u32>,
    /// This code compiled to machine code (None: interpreted).
    pub(crate) native: Option<crate::jit::Native>,
}

/// Straight-line forms of a program's actions, controls and checksum conditions.
#[derive(Debug, Clone, Default)]
pub struct Flat {
    /// One per action, indexed like [`crate::program::Program::actions`].
    pub actions: Vec<Code>,
    /// The ingress control.
    pub ingress: Code,
    /// The egress control.
    pub egress: Code,
    /// T2NA's ghost control.
    pub ghost: Code,
    /// One per checksum, indexed like [`crate::program::Program::checksums`].
    pub conditions: Vec<Condition>,
}

/// When a checksum is verified or updated.
#[derive(Debug, Clone)]
pub enum Condition {
    /// Always (it has no condition).
    Always,
    /// When this header is valid: one load, cheaper than entering a block.
    Valid(crate::program::HeaderId),
    /// When this block, run from op 0, exits (see [`run::holds`]).
    Block(Box<Code>),
}
