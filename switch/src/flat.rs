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
//! through the interpreter in [`crate::exec`].

use crate::bits::{mask, sign_extend};
use crate::exec::{apply_table, binop, eval, exec_prim, State};
use crate::packet::Packet;
use crate::program::{BinOp, Expr, LValue, Node, Prim, Program, TableType};

/// Registers of the straight-line form; deeper expressions are evaluated
/// as trees.
const REGS: usize = 16;

/// Register index within the register file (the mask keeps indexing free of
/// bounds checks; the compiler never emits an index past `REGS`).
#[inline(always)]
fn r(i: u8) -> usize {
    usize::from(i) & (REGS - 1)
}

/// Where a fallback operation's action data comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DataRef {
    /// The data the action was called with.
    Call,
    /// Data fixed at load time (an inlined default action), in [`Code::data`].
    Fixed(u32),
}

/// One operation. `d` names the destination register; binary operations
/// take their left operand from `d` and their right from `d + 1` (or a
/// constant), so registers are allocated as a stack.
#[derive(Debug, Clone, Copy)]
enum Op {
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
    ops: Vec<Op>,
    consts: Vec<u128>,
    exprs: Vec<Expr>,
    prims: Vec<Prim>,
    data: Vec<Vec<u128>>,
    stores: Vec<(u32, u128)>,
    locals: Vec<(u32, u16)>,
    // Label of each table and conditional node (u32::MAX when not in this control).
    table_labels: Vec<u32>,
    cond_labels: Vec<u32>,
}

/// Straight-line forms of a program's actions and controls.
#[derive(Debug, Clone, Default)]
pub struct Flat {
    /// One per action, indexed like [`Program::actions`].
    pub actions: Vec<Code>,
    /// The ingress control.
    pub ingress: Code,
    /// The egress control.
    pub egress: Code,
}

/// Action data of a call site: known at load time (an inlined default) or not.
#[derive(Clone, Copy)]
enum Data<'a> {
    Call,
    Fixed(&'a [u128], u32),
}

impl Data<'_> {
    fn fallback(self) -> DataRef {
        match self {
            Data::Call => DataRef::Call,
            Data::Fixed(_, i) => DataRef::Fixed(i),
        }
    }
}

struct Builder<'p> {
    p: &'p Program,
    code: Code,
    // Inline ops waiting for their table op: (op index, table).
    stubs: Vec<(usize, u32)>,
    // Start of the last op that may be jumped to: ops from here on may not
    // be merged into the one before.
    barrier: u32,
}

/// The jump target of a jumping op.
fn jump_target(op: &mut Op) -> Option<&mut u32> {
    match op {
        Op::Jump { t }
        | Op::JumpIfZero { t, .. }
        | Op::JumpIfNonZero { t, .. }
        | Op::JumpUnlessK { t, .. }
        | Op::JumpUnlessFK { t, .. }
        | Op::JumpUnlessFieldEqK { t, .. }
        | Op::JumpUnlessFieldNeK { t, .. }
        | Op::JumpIfValid { t, .. } => Some(t),
        _ => None,
    }
}

/// Operators whose result is 0 or 1 already (so `d2b` of it is itself).
fn boolean(e: &Expr) -> bool {
    match e {
        Expr::Valid(_) | Expr::Not(_) | Expr::D2B(_) => true,
        Expr::Bin(op, ..) => matches!(
            op,
            BinOp::Eq
                | BinOp::Ne
                | BinOp::Lt
                | BinOp::Le
                | BinOp::Gt
                | BinOp::Ge
                | BinOp::SLt
                | BinOp::SLe
                | BinOp::SGt
                | BinOp::SGe
                | BinOp::And
                | BinOp::Or
        ),
        _ => false,
    }
}

impl<'p> Builder<'p> {
    fn new(p: &'p Program) -> Self {
        Builder {
            p,
            code: Code::default(),
            stubs: vec![],
            barrier: 0,
        }
    }

    fn at(&self) -> u32 {
        self.code.ops.len() as u32
    }

    fn konst(&mut self, v: u128) -> u32 {
        self.code.consts.push(v);
        (self.code.consts.len() - 1) as u32
    }

    fn fmask(&self, f: u32) -> u128 {
        mask(self.p.fields[f as usize].width)
    }

    /// A field whose whole value is its 64-bit slot (wider ones are read and
    /// written through the tree interpreter).
    fn narrow(&self, f: u32) -> bool {
        self.p.fields[f as usize].width <= 64
    }

    fn eval_fallback(&mut self, e: &Expr, d: u8, data: Data) {
        self.code.exprs.push(e.clone());
        let e = (self.code.exprs.len() - 1) as u32;
        self.code.ops.push(Op::Eval {
            d,
            e,
            data: data.fallback(),
        });
    }

    /// Emits code leaving the value of `e` in register `d`.
    fn expr(&mut self, e: &Expr, d: u8, data: Data) {
        if usize::from(d) + 1 >= REGS {
            return self.eval_fallback(e, d, data);
        }
        let op = match e {
            Expr::Const(v) => Op::Const {
                d,
                k: self.konst(*v),
            },
            Expr::Field(f) if self.narrow(*f) => Op::Field { d, f: *f },
            Expr::SignedField(f, w) if self.narrow(*f) && *w < 256 => Op::SignedField {
                d,
                f: *f,
                w: *w as u8,
            },
            Expr::Local(i) => match data {
                Data::Call => Op::Local { d, i: *i },
                Data::Fixed(values, _) => Op::Const {
                    d,
                    k: self.konst(values.get(usize::from(*i)).copied().unwrap_or(0)),
                },
            },
            Expr::Valid(h) => Op::Valid { d, h: *h },
            Expr::Bin(op @ (BinOp::And | BinOp::Or), a, b) => {
                self.expr(a, d, data);
                let skip = self.at();
                self.code.ops.push(Op::End);
                self.expr(b, d, data);
                self.code.ops.push(Op::D2B { d });
                let t = self.at();
                self.code.ops[skip as usize] = if *op == BinOp::And {
                    Op::AndSkip { d, t }
                } else {
                    Op::OrSkip { d, t }
                };
                return;
            }
            Expr::Bin(op, a, b) => match (a.as_ref(), b.as_ref()) {
                (Expr::Field(f), Expr::Const(v)) if self.narrow(*f) => Op::FieldBinK {
                    op: *op,
                    d,
                    f: *f,
                    k: self.konst(*v),
                },
                (a, b) => {
                    self.expr(a, d, data);
                    match b {
                        Expr::Const(v) => Op::BinK {
                            op: *op,
                            d,
                            k: self.konst(*v),
                        },
                        Expr::Field(f) if self.narrow(*f) => Op::BinF { op: *op, d, f: *f },
                        b => {
                            self.expr(b, d + 1, data);
                            Op::Bin { op: *op, d }
                        }
                    }
                }
            },
            Expr::Not(x) => {
                // `!` tests for 0 as `d2b` does: the `d2b` adds nothing.
                let x = match x.as_ref() {
                    Expr::D2B(y) => y,
                    x => x,
                };
                self.expr(x, d, data);
                Op::Not { d }
            }
            Expr::D2B(x) if boolean(x) => return self.expr(x, d, data),
            Expr::BitNot(x) => {
                self.expr(x, d, data);
                Op::BitNot { d }
            }
            Expr::D2B(x) => {
                self.expr(x, d, data);
                Op::D2B { d }
            }
            Expr::TwoCompMod(x, w) if *w < 256 => {
                self.expr(x, d, data);
                Op::TwoCompMod { d, w: *w as u8 }
            }
            Expr::SatCast(x, w) if *w < 256 => {
                self.expr(x, d, data);
                Op::SatCast { d, w: *w as u8 }
            }
            Expr::USatCast(x, w) if *w < 256 => {
                self.expr(x, d, data);
                Op::USatCast { d, w: *w as u8 }
            }
            Expr::Cond(c, a, b) => {
                self.expr(c, d, data);
                let jz = self.at();
                self.code.ops.push(Op::End);
                self.expr(a, d, data);
                let jend = self.at();
                self.code.ops.push(Op::End);
                let t = self.at();
                self.code.ops[jz as usize] = Op::JumpIfZero { a: d, t };
                self.expr(b, d, data);
                let t = self.at();
                self.code.ops[jend as usize] = Op::Jump { t };
                return;
            }
            Expr::Register { array, index } => {
                self.expr(index, d, data);
                Op::RegisterGet { d, array: *array }
            }
            _ => return self.eval_fallback(e, d, data),
        };
        self.code.ops.push(op);
    }

    /// Emits a jump (its target to be set) taken when `e` is 0; returns its index.
    fn jump_unless(&mut self, e: &Expr, data: Data) -> usize {
        let op = match e {
            Expr::D2B(x) => return self.jump_unless(x, data),
            Expr::Valid(h) => Op::JumpIfValid {
                h: *h,
                valid: false,
                t: 0,
            },
            Expr::Not(x) => match x.as_ref() {
                Expr::Valid(h) => Op::JumpIfValid {
                    h: *h,
                    valid: true,
                    t: 0,
                },
                Expr::D2B(y) => {
                    self.expr(y, 0, data);
                    Op::JumpIfNonZero { a: 0, t: 0 }
                }
                x => {
                    self.expr(x, 0, data);
                    Op::JumpIfNonZero { a: 0, t: 0 }
                }
            },
            Expr::Bin(op, a, b) if boolean(e) && !matches!(op, BinOp::And | BinOp::Or) => {
                match (a.as_ref(), b.as_ref()) {
                    (Expr::Field(f), Expr::Const(v)) if self.narrow(*f) => Op::JumpUnlessFK {
                        op: *op,
                        f: *f,
                        k: self.konst(*v),
                        t: 0,
                    },
                    (a, Expr::Const(v)) => {
                        self.expr(a, 0, data);
                        Op::JumpUnlessK {
                            op: *op,
                            a: 0,
                            k: self.konst(*v),
                            t: 0,
                        }
                    }
                    _ => {
                        self.expr(e, 0, data);
                        Op::JumpIfZero { a: 0, t: 0 }
                    }
                }
            }
            e => {
                self.expr(e, 0, data);
                Op::JumpIfZero { a: 0, t: 0 }
            }
        };
        self.code.ops.push(op);
        self.code.ops.len() - 1
    }

    /// Emits an action body; `Exit` ends the action (and so the control).
    fn action(&mut self, a: u32, data: Data) {
        let prims = &self.p.actions[a as usize].prims;
        let base = self.code.ops.len();
        let mut starts = Vec::with_capacity(prims.len() + 1);
        let mut jumps = vec![];
        let targets: Vec<u32> = prims
            .iter()
            .filter_map(|pr| match pr {
                Prim::Jump(t) | Prim::JumpIfZero(_, t) => Some(*t),
                _ => None,
            })
            .collect();
        for (i, prim) in prims.iter().enumerate() {
            starts.push(self.at());
            if targets.contains(&(i as u32)) {
                self.barrier = self.at();
            }
            match prim {
                Prim::Assign(LValue::Field(f), e) => self.assign(*f, e, data),
                Prim::RegisterRead {
                    dest: LValue::Field(f),
                    array,
                    index: Expr::Field(index),
                } if self.narrow(*f) && self.narrow(*index) => {
                    self.code.ops.push(Op::RegisterReadF {
                        f: *f,
                        array: *array,
                        index: *index,
                    });
                }
                Prim::RegisterRead {
                    dest: LValue::Field(f),
                    array,
                    index,
                } if self.narrow(*f) => {
                    self.expr(index, 0, data);
                    self.code.ops.push(Op::RegisterRead {
                        f: *f,
                        array: *array,
                        a: 0,
                    });
                }
                Prim::RegisterWrite {
                    array,
                    index,
                    value,
                } => {
                    // The write masks to the cell's width: a wider mask adds nothing.
                    let rm = mask(self.p.registers[*array as usize].width);
                    let value = match value {
                        Expr::Bin(BinOp::BitAnd, x, m) if matches!(**m, Expr::Const(m) if m & rm == rm) => {
                            x
                        }
                        v => v,
                    };
                    self.expr(index, 0, data);
                    self.expr(value, 1, data);
                    self.code.ops.push(Op::RegisterWrite {
                        array: *array,
                        a: 0,
                    });
                }
                Prim::Count { array, index } => {
                    self.expr(index, 0, data);
                    self.code.ops.push(Op::Count {
                        array: *array,
                        a: 0,
                    });
                }
                Prim::Jump(t) => {
                    jumps.push((self.code.ops.len(), *t));
                    self.code.ops.push(Op::Jump { t: 0 });
                }
                Prim::JumpIfZero(c, t) => {
                    let at = self.jump_unless(c, data);
                    jumps.push((at, *t));
                }
                Prim::Exit => self.code.ops.push(Op::Exit),
                Prim::NoOp => {}
                prim => self.interpreted(prim.clone(), data),
            }
        }
        starts.push(self.at());
        for (at, target) in jumps {
            // A jump past the last primitive ends the action, as the interpreter's does.
            let t = starts
                .get(target as usize)
                .copied()
                .unwrap_or(*starts.last().unwrap_or(&(base as u32)));
            if let Some(dst) = jump_target(&mut self.code.ops[at]) {
                *dst = t;
            }
        }
    }

    /// The last op, when a new one may be merged into it.
    fn mergeable(&mut self) -> Option<&mut Op> {
        if self.at() > self.barrier {
            self.code.ops.last_mut()
        } else {
            None
        }
    }

    /// Emits `f = v` (`v` already masked), joining a run of such stores.
    fn store_const(&mut self, f: u32, v: u128) {
        let at = self.code.stores.len() as u32;
        match self.mergeable() {
            Some(Op::StoreConsts { n, .. }) => *n += 1,
            Some(last @ Op::StoreConst { .. }) => {
                let Op::StoreConst { f: f0, k } = *last else {
                    return;
                };
                *last = Op::StoreConsts { at, n: 2 };
                let v0 = self.code.consts.get(k as usize).copied().unwrap_or(0);
                self.code.stores.push((f0, v0));
            }
            _ => {
                let k = self.konst(v);
                self.code.ops.push(Op::StoreConst { f, k });
                return;
            }
        }
        self.code.stores.push((f, v));
    }

    /// Emits `f = parameter i`, joining a run of such stores.
    fn store_local(&mut self, f: u32, i: u16) {
        let at = self.code.locals.len() as u32;
        match self.mergeable() {
            Some(Op::StoreLocals { n, .. }) => *n += 1,
            Some(last @ Op::StoreLocal { .. }) => {
                let Op::StoreLocal { f: f0, i: i0 } = *last else {
                    return;
                };
                *last = Op::StoreLocals { at, n: 2 };
                self.code.locals.push((f0, i0));
            }
            _ => {
                self.code.ops.push(Op::StoreLocal { f, i });
                return;
            }
        }
        self.code.locals.push((f, i));
    }

    /// Emits a primitive the tree interpreter runs.
    fn interpreted(&mut self, prim: Prim, data: Data) {
        self.code.prims.push(prim);
        let p = (self.code.prims.len() - 1) as u32;
        self.code.ops.push(Op::Prim {
            p,
            data: data.fallback(),
        });
    }

    /// Emits `f = e`, with the common shapes as single operations.
    fn assign(&mut self, f: u32, e: &Expr, data: Data) {
        if !self.narrow(f) {
            return self.interpreted(Prim::Assign(LValue::Field(f), e.clone()), data);
        }
        let fm = self.fmask(f);
        // p4c masks arithmetic to the destination's width; the store masks anyway.
        let e = match e {
            Expr::Bin(BinOp::BitAnd, x, m) if matches!(**m, Expr::Const(m) if m & fm == fm) => x,
            e => e,
        };
        let op = match (e, data) {
            (Expr::Const(v), _) => return self.store_const(f, *v & fm),
            (Expr::Local(i), Data::Fixed(values, _)) => {
                let v = values.get(usize::from(*i)).copied().unwrap_or(0);
                return self.store_const(f, v & fm);
            }
            (Expr::Local(i), Data::Call) => return self.store_local(f, *i),
            (Expr::Field(src), _) if self.narrow(*src) => Op::Copy { f, src: *src },
            (e, _) => {
                self.expr(e, 0, data);
                Op::Store { f, a: 0 }
            }
        };
        self.code.ops.push(op);
    }

    /// Emits a control graph from `init`: every node once, at its label,
    /// each chain of nodes falling through to its first successor.
    fn control(&mut self, init: Option<Node>) {
        self.code.table_labels = vec![u32::MAX; self.p.tables.len()];
        self.code.cond_labels = vec![u32::MAX; self.p.conditionals.len()];
        // Op 0 ends the control: jumping to 0 is leaving it.
        self.code.ops.push(Op::End);
        let mut fixups: Vec<(usize, Node)> = vec![];
        let mut todo: Vec<Node> = vec![];
        self.chain(init, &mut todo, &mut fixups);
        while let Some(n) = todo.pop() {
            if self.label(n) == u32::MAX {
                self.chain(Some(n), &mut todo, &mut fixups);
            }
        }
        for (at, table) in std::mem::take(&mut self.stubs) {
            let stub = self.at();
            self.code.ops.push(Op::Table { table });
            if let Op::Inline { t, .. } = &mut self.code.ops[at] {
                *t = stub;
            }
        }
        for (at, n) in fixups {
            let t = self.label(n);
            if let Some(dst) = jump_target(&mut self.code.ops[at]) {
                *dst = t;
            }
        }
    }

    fn chain(
        &mut self,
        mut n: Option<Node>,
        todo: &mut Vec<Node>,
        fixups: &mut Vec<(usize, Node)>,
    ) {
        loop {
            match n {
                None => {
                    self.code.ops.push(Op::End);
                    return;
                }
                Some(x) if self.label(x) != u32::MAX => {
                    let t = self.label(x);
                    self.code.ops.push(Op::Jump { t });
                    return;
                }
                Some(x) => match self.node(x, todo, fixups) {
                    Some(next) => n = next,
                    None => return,
                },
            }
        }
    }

    fn label(&self, n: Node) -> u32 {
        match n {
            Node::Table(t) => self.code.table_labels[t as usize],
            Node::Cond(c) => self.code.cond_labels[c as usize],
        }
    }

    fn set_label(&mut self, n: Node) {
        let here = self.at();
        self.barrier = here;
        match n {
            Node::Table(t) => self.code.table_labels[t as usize] = here,
            Node::Cond(c) => self.code.cond_labels[c as usize] = here,
        }
    }

    /// Emits one node, queueing the successors it jumps to; returns the
    /// one it falls through to (`None` when it dispatches by itself).
    fn node(
        &mut self,
        n: Node,
        todo: &mut Vec<Node>,
        fixups: &mut Vec<(usize, Node)>,
    ) -> Option<Option<Node>> {
        match n {
            Node::Cond(c) => {
                self.set_label(n);
                let cd = &self.p.conditionals[c as usize];
                let (true_next, false_next) = (cd.true_next, cd.false_next);
                let at = self.jump_unless(&cd.expr, Data::Call);
                if let Some(f) = false_next {
                    fixups.push((at, f));
                    todo.push(f);
                }
                Some(true_next)
            }
            Node::Table(t) => {
                let def = &self.p.tables[t as usize];
                todo.extend(def.next_by_action.iter().flatten().copied());
                todo.extend(def.base_default_next);
                if let Some((h, m)) = def.hit_miss {
                    todo.extend(h);
                    todo.extend(m);
                }
                self.set_label(n);
                let (true, TableType::Simple, Some((a, values, true))) =
                    (def.keys.is_empty(), def.ty, &def.default_entry)
                else {
                    self.code.ops.push(Op::Table { table: t });
                    return None;
                };
                // What `apply_table` does for such a table while it has no
                // entry, spelt out: the default action with the program's
                // data, then the miss successor. A table op after the
                // control's end handles it should it ever get an entry.
                let next = match def.hit_miss {
                    Some((_, miss)) => miss,
                    None => def.next_by_action.get(*a as usize).copied().flatten(),
                };
                self.stubs.push((self.code.ops.len(), t));
                self.code.ops.push(Op::Inline { table: t, t: 0 });
                self.code.data.push(values.clone());
                let di = (self.code.data.len() - 1) as u32;
                self.action(*a, Data::Fixed(values, di));
                Some(next)
            }
        }
    }
}

/// Gives the commonest operator forms (buffer_switch.p4's masks, counter sums,
/// and equality tests) their own ops, one for one, so jump targets stay put.
fn specialise(mut code: Code) -> Code {
    for op in &mut code.ops {
        *op = match *op {
            Op::BinK {
                op: BinOp::BitAnd,
                d,
                k,
            } => Op::AndK { d, k },
            Op::BinF {
                op: BinOp::Add,
                d,
                f,
            } => Op::AddF { d, f },
            Op::BinF {
                op: BinOp::Sub,
                d,
                f,
            } => Op::SubF { d, f },
            Op::FieldBinK {
                op: BinOp::Eq,
                d,
                f,
                k,
            } => Op::FieldEqK { d, f, k },
            Op::JumpUnlessFK {
                op: BinOp::Eq,
                f,
                k,
                t,
            } => Op::JumpUnlessFieldEqK { f, k, t },
            Op::JumpUnlessFK {
                op: BinOp::Ne,
                f,
                k,
                t,
            } => Op::JumpUnlessFieldNeK { f, k, t },
            other => other,
        };
    }
    code
}

/// Builds the straight-line forms of `p`'s actions and controls.
pub fn build(p: &Program) -> Flat {
    let actions = (0..p.actions.len() as u32)
        .map(|a| {
            let mut b = Builder::new(p);
            b.action(a, Data::Call);
            b.code.ops.push(Op::End);
            specialise(b.code)
        })
        .collect();
    let control = |init| {
        let mut b = Builder::new(p);
        b.control(init);
        specialise(b.code)
    };
    Flat {
        actions,
        ingress: control(p.ingress.init),
        egress: control(p.egress.init),
    }
}

/// Runs one action's straight-line form with its data.
pub fn run_action(p: &Program, st: &mut State, pkt: &mut Packet, action: u32, data: &[u128]) {
    if let Some(code) = p.flat.actions.get(action as usize) {
        run(p, st, pkt, code, data, 0);
    }
}

/// Runs a control's straight-line form (`exit` stops it; the flag is
/// cleared on the way out, as the control ends there).
pub fn run_control(p: &Program, st: &mut State, pkt: &mut Packet, code: &Code) {
    run(p, st, pkt, code, &[], 1);
    pkt.flags.exit = false;
}

/// Runs `code` from `pc` until `End`, or until `exit` is set.
fn run(p: &Program, st: &mut State, pkt: &mut Packet, code: &Code, data: &[u128], mut pc: usize) {
    let mut regs = [0u128; REGS];
    let data_of = |d: DataRef| -> &[u128] {
        match d {
            DataRef::Call => data,
            DataRef::Fixed(i) => code.data.get(i as usize).map_or(&[], Vec::as_slice),
        }
    };
    let k = |i: u32| code.consts.get(i as usize).copied().unwrap_or(0);
    while let Some(op) = code.ops.get(pc) {
        pc += 1;
        match *op {
            Op::Const { d, k: i } => regs[r(d)] = k(i),
            Op::Field { d, f } => regs[r(d)] = u128::from(pkt.phv.fields[f as usize]),
            Op::SignedField { d, f, w } => {
                regs[r(d)] = sign_extend(u128::from(pkt.phv.fields[f as usize]), u32::from(w));
            }
            Op::Local { d, i } => regs[r(d)] = data.get(usize::from(i)).copied().unwrap_or(0),
            Op::Valid { d, h } => regs[r(d)] = u128::from(pkt.phv.valid[h as usize]),
            Op::Bin { op, d } => regs[r(d)] = binop(op, regs[r(d)], regs[r(d + 1)]),
            Op::BinK { op, d, k: i } => regs[r(d)] = binop(op, regs[r(d)], k(i)),
            Op::BinF { op, d, f } => {
                regs[r(d)] = binop(op, regs[r(d)], u128::from(pkt.phv.fields[f as usize]));
            }
            Op::FieldBinK { op, d, f, k: i } => {
                regs[r(d)] = binop(op, u128::from(pkt.phv.fields[f as usize]), k(i));
            }
            Op::AndK { d, k: i } => regs[r(d)] &= k(i),
            Op::AddF { d, f } => {
                regs[r(d)] = regs[r(d)].wrapping_add(u128::from(pkt.phv.fields[f as usize]));
            }
            Op::SubF { d, f } => {
                regs[r(d)] = regs[r(d)].wrapping_sub(u128::from(pkt.phv.fields[f as usize]));
            }
            Op::FieldEqK { d, f, k: i } => {
                regs[r(d)] = u128::from(u128::from(pkt.phv.fields[f as usize]) == k(i));
            }
            Op::JumpUnlessFieldEqK { f, k: i, t } => {
                if u128::from(pkt.phv.fields[f as usize]) != k(i) {
                    pc = t as usize;
                }
            }
            Op::JumpUnlessFieldNeK { f, k: i, t } => {
                if u128::from(pkt.phv.fields[f as usize]) == k(i) {
                    pc = t as usize;
                }
            }
            Op::AndSkip { d, t } => {
                if regs[r(d)] == 0 {
                    pc = t as usize;
                }
            }
            Op::OrSkip { d, t } => {
                if regs[r(d)] != 0 {
                    regs[r(d)] = 1;
                    pc = t as usize;
                }
            }
            Op::Not { d } => regs[r(d)] = u128::from(regs[r(d)] == 0),
            Op::BitNot { d } => regs[r(d)] = !regs[r(d)],
            Op::D2B { d } => regs[r(d)] = u128::from(regs[r(d)] != 0),
            Op::TwoCompMod { d, w } => {
                let w = u32::from(w);
                regs[r(d)] = sign_extend(regs[r(d)] & mask(w), w);
            }
            Op::SatCast { d, w } => {
                let v = regs[r(d)] as i128;
                let w = u32::from(w).clamp(1, 128);
                let (lo, hi) = if w == 128 {
                    (i128::MIN, i128::MAX)
                } else {
                    (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
                };
                regs[r(d)] = v.clamp(lo, hi) as u128;
            }
            Op::USatCast { d, w } => {
                let v = regs[r(d)];
                regs[r(d)] = if (v as i128) < 0 {
                    0
                } else {
                    v.min(mask(u32::from(w)))
                };
            }
            Op::RegisterGet { d, array } => {
                let i = regs[r(d)];
                regs[r(d)] = usize::try_from(i)
                    .ok()
                    .and_then(|i| st.registers[array as usize].get(i).copied())
                    .unwrap_or(0);
            }
            Op::Eval { d, e, data } => {
                if let Some(e) = code.exprs.get(e as usize) {
                    regs[r(d)] = eval(p, st, pkt, data_of(data), e);
                }
            }
            Op::Store { f, a } => {
                pkt.phv.fields[f as usize] = (regs[r(a)] & st.fmask[f as usize]) as u64;
            }
            Op::StoreConst { f, k: i } => pkt.phv.fields[f as usize] = k(i) as u64,
            Op::StoreConsts { at, n } => {
                let (at, n) = (at as usize, n as usize);
                for &(f, v) in code.stores.get(at..at + n).unwrap_or(&[]) {
                    pkt.phv.fields[f as usize] = v as u64;
                }
            }
            Op::StoreLocals { at, n } => {
                let (at, n) = (at as usize, n as usize);
                for &(f, i) in code.locals.get(at..at + n).unwrap_or(&[]) {
                    let v = data.get(usize::from(i)).copied().unwrap_or(0);
                    pkt.phv.fields[f as usize] = (v & st.fmask[f as usize]) as u64;
                }
            }
            Op::StoreLocal { f, i } => {
                let v = data.get(usize::from(i)).copied().unwrap_or(0);
                pkt.phv.fields[f as usize] = (v & st.fmask[f as usize]) as u64;
            }
            Op::Copy { f, src } => {
                pkt.phv.fields[f as usize] =
                    (u128::from(pkt.phv.fields[src as usize]) & st.fmask[f as usize]) as u64;
            }
            Op::RegisterRead { f, array, a } => {
                if let Some(v) = usize::try_from(regs[r(a)])
                    .ok()
                    .and_then(|i| st.registers[array as usize].get(i).copied())
                {
                    pkt.phv.fields[f as usize] = (v & st.fmask[f as usize]) as u64;
                }
            }
            Op::RegisterReadF { f, array, index } => {
                if let Some(v) = usize::try_from(u128::from(pkt.phv.fields[index as usize]))
                    .ok()
                    .and_then(|i| st.registers[array as usize].get(i).copied())
                {
                    pkt.phv.fields[f as usize] = (v & st.fmask[f as usize]) as u64;
                }
            }
            Op::RegisterWrite { array, a } => {
                let v = regs[r(a + 1)] & mask(p.registers[array as usize].width);
                if let Some(cell) = usize::try_from(regs[r(a)])
                    .ok()
                    .and_then(|i| st.registers[array as usize].get_mut(i))
                {
                    *cell = v;
                }
            }
            Op::Count { array, a } => {
                if let Some(c) = usize::try_from(regs[r(a)])
                    .ok()
                    .and_then(|i| st.counters[array as usize].get_mut(i))
                {
                    c.count(u64::from(pkt.ingress_len));
                }
            }
            Op::Jump { t } => pc = t as usize,
            Op::JumpIfZero { a, t } => {
                if regs[r(a)] == 0 {
                    pc = t as usize;
                }
            }
            Op::JumpIfNonZero { a, t } => {
                if regs[r(a)] != 0 {
                    pc = t as usize;
                }
            }
            Op::JumpUnlessK { op, a, k: i, t } => {
                if binop(op, regs[r(a)], k(i)) == 0 {
                    pc = t as usize;
                }
            }
            Op::JumpUnlessFK { op, f, k: i, t } => {
                if binop(op, u128::from(pkt.phv.fields[f as usize]), k(i)) == 0 {
                    pc = t as usize;
                }
            }
            Op::JumpIfValid { h, valid, t } => {
                if pkt.phv.valid[h as usize] == valid {
                    pc = t as usize;
                }
            }
            Op::Prim { p: i, data } => {
                if let Some(prim) = code.prims.get(i as usize) {
                    exec_prim(p, st, pkt, data_of(data), prim);
                    if pkt.flags.exit {
                        return;
                    }
                }
            }
            Op::Exit => {
                pkt.flags.exit = true;
                return;
            }
            Op::Inline { table, t } => {
                if !st.tables[table as usize].is_empty() {
                    pc = t as usize;
                }
            }
            Op::Table { table } => {
                let next = apply_table(p, st, pkt, table);
                if pkt.flags.exit {
                    return;
                }
                pc = match next {
                    None => 0,
                    Some(Node::Table(t)) => code.table_labels[t as usize] as usize,
                    Some(Node::Cond(c)) => code.cond_labels[c as usize] as usize,
                };
            }
            Op::End => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::Rng;
    use crate::program::ActionDef;

    /// A program with fields up to 128 bits wide (`p4src/forward.p4`).
    const FORWARD: &str = include_str!("../../sim/tests/fixtures/forward.json");

    const OPS: [BinOp; 23] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Mod,
        BinOp::Shl,
        BinOp::Shr,
        BinOp::Sar,
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::SLt,
        BinOp::SLe,
        BinOp::SGt,
        BinOp::SGe,
        BinOp::And,
        BinOp::Or,
        BinOp::BitAnd,
        BinOp::BitOr,
        BinOp::BitXor,
    ];

    fn pick(rng: &mut Rng, n: usize) -> usize {
        (rng.next_u64() % n as u64) as usize
    }

    fn value(rng: &mut Rng) -> u128 {
        match pick(rng, 4) {
            0 => pick(rng, 4) as u128,
            1 => u128::from(rng.next_u64()),
            2 => u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64()),
            _ => u128::MAX - pick(rng, 3) as u128,
        }
    }

    /// A field, one wider than 64 bits a quarter of the time.
    fn field(p: &Program, rng: &mut Rng) -> u32 {
        let wide: Vec<u32> = (0..p.fields.len() as u32)
            .filter(|&f| p.fields[f as usize].width > 64)
            .collect();
        if !wide.is_empty() && pick(rng, 4) == 0 {
            wide[pick(rng, wide.len())]
        } else {
            pick(rng, p.fields.len()) as u32
        }
    }

    fn leaf(p: &Program, rng: &mut Rng) -> Expr {
        let f = field(p, rng);
        match pick(rng, 5) {
            0 => Expr::Const(value(rng)),
            1 => Expr::Field(f),
            2 => Expr::SignedField(f, p.fields[f as usize].width),
            3 => Expr::Local(pick(rng, 5) as u16),
            _ => Expr::Valid(pick(rng, p.headers.len()) as u32),
        }
    }

    fn expr(p: &Program, rng: &mut Rng, depth: u32) -> Expr {
        if depth == 0 || pick(rng, 4) == 0 {
            return leaf(p, rng);
        }
        let mut sub = || Box::new(expr(p, rng, depth - 1));
        let (a, b) = (sub(), sub());
        let w = 1 + pick(rng, 128) as u32;
        match pick(rng, 9) {
            0 => Expr::Not(a),
            1 => Expr::BitNot(a),
            2 => Expr::D2B(a),
            3 => Expr::Cond(a, b, Box::new(leaf(p, rng))),
            4 => Expr::TwoCompMod(a, w),
            5 => Expr::SatCast(a, w),
            6 => Expr::USatCast(a, w),
            _ => Expr::Bin(OPS[pick(rng, OPS.len())], a, b),
        }
    }

    /// A chain deeper than the register file, so part of it is evaluated as a tree.
    fn deep(p: &Program, rng: &mut Rng, n: usize) -> Expr {
        (0..n).fold(leaf(p, rng), |acc, _| {
            Expr::Bin(
                OPS[pick(rng, OPS.len())],
                Box::new(leaf(p, rng)),
                Box::new(acc),
            )
        })
    }

    /// A packet with random field values and validity.
    fn random_packet(p: &Program, rng: &mut Rng) -> Packet {
        let mut pkt = Packet::new(p);
        for (f, fi) in p.fields.iter().enumerate() {
            pkt.phv.set(p, f as u32, value(rng) & mask(fi.width));
        }
        for v in pkt.phv.valid.iter_mut() {
            *v = pick(rng, 2) == 1;
        }
        pkt
    }

    /// Adds an action of `prims` to `p` (the test pops it again); its index.
    fn push_action(p: &mut Program, prims: Vec<Prim>) -> u32 {
        p.actions.push(ActionDef {
            name: "test".into(),
            id: 0,
            params: vec![],
            prims,
        });
        (p.actions.len() - 1) as u32
    }

    /// Builds code with `emit` (action data fixed at build time or given per call),
    /// specialised as `build` does, and runs it on a copy of `pkt`.
    fn built_and_run(
        p: &Program,
        st: &mut State,
        pkt: &Packet,
        data: &[u128],
        fixed: bool,
        emit: impl FnOnce(&mut Builder<'_>, Data<'_>),
    ) -> Packet {
        let mut b = Builder::new(p);
        let d = if fixed {
            b.code.data.push(data.to_vec());
            Data::Fixed(data, 0)
        } else {
            Data::Call
        };
        emit(&mut b, d);
        b.code.ops.push(Op::End);
        let code = specialise(b.code);
        let mut got = pkt.clone();
        run(p, st, &mut got, &code, data, 0);
        got
    }

    #[test]
    fn branches_and_store_runs_match_the_tree_interpreter() {
        let mut p = crate::load::load(FORWARD).expect("fixture loads");
        let mut st = State::new(&p, 1);
        let mut rng = Rng::new(11);
        let conds = |p: &Program, rng: &mut Rng| {
            let f = field(p, rng);
            let h = pick(rng, p.headers.len()) as u32;
            let k = Box::new(Expr::Const(value(rng) & mask(p.fields[f as usize].width)));
            let op = OPS[pick(rng, OPS.len())];
            match pick(rng, 6) {
                0 => Expr::D2B(Box::new(Expr::Valid(h))),
                1 => Expr::Not(Box::new(Expr::D2B(Box::new(Expr::Valid(h))))),
                2 => Expr::Bin(op, Box::new(Expr::Field(f)), k),
                3 => Expr::Bin(op, Box::new(expr(p, rng, 3)), k),
                4 => Expr::Not(Box::new(expr(p, rng, 3))),
                _ => Expr::D2B(Box::new(expr(p, rng, 4))),
            }
        };
        for _ in 0..3000 {
            let pkt = random_packet(&p, &mut rng);
            let data: Vec<u128> = (0..3).map(|_| value(&mut rng)).collect();
            let c = conds(&p, &mut rng);
            let f: Vec<u32> = (0..8)
                .map(|_| pick(&mut rng, p.fields.len()) as u32)
                .collect();
            let k: Vec<u128> = (0..6).map(|_| value(&mut rng)).collect();
            let assign = |f: u32, e: Expr| Prim::Assign(LValue::Field(f), e);
            let prims = vec![
                Prim::JumpIfZero(c.clone(), 3),
                assign(f[0], Expr::Const(k[0])),
                Prim::Jump(4),
                assign(f[0], Expr::Const(k[1])),
                assign(f[1], Expr::Local(0)),
                assign(f[2], Expr::Local(2)),
                assign(f[3], Expr::Const(k[2])),
                assign(f[4], Expr::Const(k[3])),
                assign(f[5], Expr::Field(f[1])),
                Prim::JumpIfZero(c.clone(), 11),
                assign(f[6], Expr::Const(k[4])),
                // A jump target right after a constant store: not merged into it.
                assign(f[7], Expr::Const(k[5])),
            ];
            let mut want = pkt.clone();
            let m = |f: u32| mask(p.fields[f as usize].width);
            let taken = eval(&p, &st, &pkt, &data, &c) != 0;
            let mut put = |f: u32, v: u128| want.phv.set(&p, f, v & m(f));
            put(f[0], if taken { k[0] } else { k[1] });
            put(f[1], data[0]);
            put(f[2], data[2]);
            put(f[3], k[2]);
            put(f[4], k[3]);
            let v = want.phv.get(&p, f[1]);
            want.phv.set(&p, f[5], v & m(f[5]));
            // The second test sees the fields as the first half left them.
            if eval(&p, &st, &want, &data, &c) != 0 {
                want.phv.set(&p, f[6], k[4] & m(f[6]));
            }
            want.phv.set(&p, f[7], k[5] & m(f[7]));
            let a = push_action(&mut p, prims);
            for fixed in [false, true] {
                let got = built_and_run(&p, &mut st, &pkt, &data, fixed, |b, d| b.action(a, d));
                assert_eq!(got.phv, want.phv, "{c:?} (data fixed: {fixed})");
            }
            p.actions.pop();
        }
    }

    #[test]
    fn specialised_operator_ops_match_the_tree_interpreter() {
        let mut p = crate::load::load(FORWARD).expect("fixture loads");
        let mut st = State::new(&p, 1);
        let mut rng = Rng::new(5);
        let narrow: Vec<u32> = (0..p.fields.len() as u32)
            .filter(|&f| (8..=64).contains(&p.fields[f as usize].width))
            .collect();
        let field = |rng: &mut Rng| Box::new(Expr::Field(narrow[pick(rng, narrow.len())]));
        let bin = |op, a, b| Box::new(Expr::Bin(op, a, b));
        for _ in 0..2000 {
            let pkt = random_packet(&p, &mut rng);
            let k = |rng: &mut Rng| Box::new(Expr::Const(value(rng) & 0xff));
            // ((a + b) - c) & k: AddF, SubF, AndK; (d == k): FieldEqK.
            let sum = bin(
                BinOp::BitAnd,
                bin(
                    BinOp::Sub,
                    bin(BinOp::Add, field(&mut rng), field(&mut rng)),
                    field(&mut rng),
                ),
                k(&mut rng),
            );
            let eq = bin(BinOp::Eq, field(&mut rng), k(&mut rng));
            let (t1, t2) = (field(&mut rng), field(&mut rng));
            // The tested field sometimes equals the constant, so both branches run.
            let c = Expr::Const(if pick(&mut rng, 2) == 0 {
                pkt.phv.get(&p, narrow[0])
            } else {
                3
            });
            let is = Expr::Bin(
                BinOp::Eq,
                Box::new(Expr::Field(narrow[0])),
                Box::new(c.clone()),
            );
            let isnt = Expr::Bin(BinOp::Ne, Box::new(Expr::Field(narrow[0])), Box::new(c));
            let (f1, f2, f3, f4) = (narrow[1], narrow[2], narrow[3], narrow[4]);
            let assign = |f: u32, e: Expr| Prim::Assign(LValue::Field(f), e);
            let prims = vec![
                assign(f1, *sum.clone()),
                assign(f2, *eq.clone()),
                Prim::JumpIfZero(is.clone(), 4),
                assign(f3, *t1.clone()),
                Prim::JumpIfZero(isnt.clone(), 6),
                assign(f4, *t2.clone()),
            ];
            let mut want = pkt.clone();
            let m = |f: u32| mask(p.fields[f as usize].width);
            let v = eval(&p, &st, &want, &[], &sum);
            want.phv.set(&p, f1, v & m(f1));
            let v = eval(&p, &st, &want, &[], &eq);
            want.phv.set(&p, f2, v & m(f2));
            if eval(&p, &st, &want, &[], &is) != 0 {
                let v = eval(&p, &st, &want, &[], &t1);
                want.phv.set(&p, f3, v & m(f3));
            }
            if eval(&p, &st, &want, &[], &isnt) != 0 {
                let v = eval(&p, &st, &want, &[], &t2);
                want.phv.set(&p, f4, v & m(f4));
            }
            let a = push_action(&mut p, prims);
            let got = built_and_run(&p, &mut st, &pkt, &[], false, |b, d| b.action(a, d));
            assert_eq!(got.phv, want.phv);
            p.actions.pop();
        }
        let mut b = Builder::new(&p);
        b.assign(
            narrow[1],
            &Expr::Bin(
                BinOp::Eq,
                Box::new(Expr::Field(narrow[0])),
                Box::new(Expr::Const(1)),
            ),
            Data::Call,
        );
        let code = specialise(b.code);
        assert!(matches!(code.ops[0], Op::FieldEqK { .. }), "{:?}", code.ops);
    }

    #[test]
    fn assignments_match_the_tree_interpreter() {
        let p = crate::load::load(FORWARD).expect("fixture loads");
        let mut st = State::new(&p, 1);
        let mut rng = Rng::new(7);
        for round in 0..4000 {
            let pkt = random_packet(&p, &mut rng);
            let data: Vec<u128> = (0..3).map(|_| value(&mut rng)).collect();
            let e = if round % 10 == 0 {
                deep(&p, &mut rng, 3 * REGS)
            } else {
                expr(&p, &mut rng, 6)
            };
            let f = field(&p, &mut rng);
            let want = eval(&p, &st, &pkt, &data, &e) & mask(p.fields[f as usize].width);
            for fixed in [false, true] {
                let got = built_and_run(&p, &mut st, &pkt, &data, fixed, |b, d| b.assign(f, &e, d));
                assert_eq!(
                    got.phv.get(&p, f),
                    want,
                    "{e:?} into field {f} (data fixed: {fixed})"
                );
            }
        }
    }
}
