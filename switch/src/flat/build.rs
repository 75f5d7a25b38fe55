//! Building the straight-line form: actions, controls (tables inlined or
//! called, conditions as jumps) and the specialised operator ops.

use super::{Code, Condition, DataRef, Flat, Op, REGS};
use crate::bits::mask;
use crate::program::{BinOp, Expr, LValue, Node, Prim, Program, TableType};

/// Action data of a call site: known at load time (an inlined default) or not.
#[derive(Clone, Copy)]
pub(super) enum Data<'a> {
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

pub(super) struct Builder<'p> {
    p: &'p Program,
    pub(super) code: Code,
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

impl<'p> Builder<'p> {
    pub(super) fn new(p: &'p Program) -> Self {
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
            Expr::D2B(x) if x.is_boolean() => return self.expr(x, d, data),
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
            Expr::Bin(op, a, b) if e.is_boolean() && !matches!(op, BinOp::And | BinOp::Or) => {
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
    pub(super) fn action(&mut self, a: u32, data: Data) {
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
                Prim::Random {
                    dest: LValue::Field(f),
                    lo,
                    hi,
                } if self.narrow(*f) => {
                    self.expr(lo, 0, data);
                    self.expr(hi, 1, data);
                    self.code.ops.push(Op::Random { f: *f, a: 0 });
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
    pub(super) fn assign(&mut self, f: u32, e: &Expr, data: Data) {
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
pub(super) fn specialise(mut code: Code) -> Code {
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

/// Builds the straight-line forms of `p`'s actions, controls and checksum conditions.
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
    let conditions = p
        .checksums
        .iter()
        .map(|c| match &c.cond {
            None => Condition::Always,
            Some(e) => match validity_bit(e) {
                Some(h) => Condition::Valid(h),
                None => Condition::Block(Box::new(condition(p, e))),
            },
        })
        .collect();
    Flat {
        actions,
        ingress: control(p.ingress.init),
        egress: control(p.egress.init),
        ghost: control(p.ghost.init),
        conditions,
    }
}

/// The header whose validity bit `e` is, if it is only that.
fn validity_bit(e: &Expr) -> Option<u32> {
    match e {
        Expr::Valid(h) => Some(*h),
        Expr::D2B(x) => validity_bit(x),
        _ => None,
    }
}

/// Condition `e` as a block run from op 0: `Exit` when it holds, `End` when not.
fn condition(p: &Program, e: &Expr) -> Code {
    let mut b = Builder::new(p);
    let unless = b.jump_unless(e, Data::Call);
    b.code.ops.push(Op::Exit);
    let end = b.at();
    if let Some(t) = jump_target(&mut b.code.ops[unless]) {
        *t = end;
    }
    b.code.ops.push(Op::End);
    specialise(b.code)
}
