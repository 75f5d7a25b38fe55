//! Actions and their primitives.

use super::*;

impl Loader {
    /// Compiles one primitive call of an action.
    pub(super) fn primitive(&self, prim: &Value, ctx: &str) -> R<Prim> {
        let Some(op) = prim.get("op").and_then(Value::as_str) else {
            return err(ctx, "primitive without 'op'");
        };
        let ctx = &format!("{ctx} ('{op}')");
        let params = arr(prim, "parameters");
        let p = |i: usize| -> R<&Value> {
            params
                .get(i)
                .map_or_else(|| err(ctx, format!("missing parameter {i}")), Ok)
        };
        let e = |i: usize| -> R<Expr> { Ok(self.expr(p(i)?, ctx)?.0) };
        let list_id = |i: usize| -> R<u32> {
            Ok(hex_value(p(i)?.get("value").unwrap_or(&Value::Null), ctx)? as u32)
        };
        Ok(match op {
            "assign" | "modify_field" => match self.wide_assign(p(0)?, p(1)?, ctx)? {
                Some(wide) => wide,
                None => Prim::Assign(self.lvalue(p(0)?, ctx)?, e(1)?),
            },
            "add_to_field" | "subtract_from_field" => {
                let dest = self.lvalue(p(0)?, ctx)?;
                let cur = lvalue_expr(&dest);
                let bop = if op == "add_to_field" {
                    BinOp::Add
                } else {
                    BinOp::Sub
                };
                Prim::Assign(dest, Expr::Bin(bop, Box::new(cur), Box::new(e(1)?)))
            }
            "add" | "subtract" | "bit_xor" | "bit_or" | "bit_and" | "shift_left"
            | "shift_right" => {
                let bop = match op {
                    "add" => BinOp::Add,
                    "subtract" => BinOp::Sub,
                    "bit_xor" => BinOp::BitXor,
                    "bit_or" => BinOp::BitOr,
                    "bit_and" => BinOp::BitAnd,
                    "shift_left" => BinOp::Shl,
                    _ => BinOp::Shr,
                };
                Prim::Assign(
                    self.lvalue(p(0)?, ctx)?,
                    Expr::Bin(bop, Box::new(e(1)?), Box::new(e(2)?)),
                )
            }
            "assign_header" | "copy_header" => {
                Prim::AssignHeader(self.header_ref(p(0)?, ctx)?, self.header_ref(p(1)?, ctx)?)
            }
            "assign_union" => Prim::AssignUnion(
                Self::named(&self.union_by_name, p(0)?, "union", ctx)?,
                Self::named(&self.union_by_name, p(1)?, "union", ctx)?,
            ),
            "assign_header_stack" => Prim::AssignStack(
                Self::named(&self.stack_by_name, p(0)?, "header stack", ctx)?,
                Self::named(&self.stack_by_name, p(1)?, "header stack", ctx)?,
            ),
            "assign_union_stack" => Prim::AssignUnionStack(
                Self::named(&self.ustack_by_name, p(0)?, "header union stack", ctx)?,
                Self::named(&self.ustack_by_name, p(1)?, "header union stack", ctx)?,
            ),
            "assign_VL" => {
                let (Expr::Field(d), Expr::Field(s)) = (e(0)?, e(1)?) else {
                    return err(ctx, "assign_VL needs two varbit fields");
                };
                Prim::AssignVl(d, s)
            }
            "add_header" | "add_header_fast" => Prim::AddHeader(self.header_ref(p(0)?, ctx)?),
            "remove_header" => Prim::RemoveHeader(self.header_ref(p(0)?, ctx)?),
            "push" | "pop" => {
                let stack = Self::named(&self.stack_by_name, p(0)?, "header stack", ctx)?;
                let n = e(1)?;
                if op == "push" {
                    Prim::Push(stack, n)
                } else {
                    Prim::Pop(stack, n)
                }
            }
            "mark_to_drop" | "drop" => Prim::MarkToDrop,
            "clone_ingress_pkt_to_egress" | "clone_egress_pkt_to_egress" => Prim::Clone {
                ingress: op == "clone_ingress_pkt_to_egress",
                session: e(0)?,
                field_list: if params.len() > 1 { list_id(1)? } else { 0 },
            },
            "resubmit" => Prim::Resubmit(if params.is_empty() { 0 } else { list_id(0)? }),
            "recirculate" => Prim::Recirculate(if params.is_empty() { 0 } else { list_id(0)? }),
            "generate_digest" => {
                let id = list_id(1)?;
                if !self.p.learn_lists.contains_key(&id) {
                    return err(ctx, format!("unknown learn list id {id}"));
                }
                Prim::Digest(id)
            }
            "modify_field_with_hash_based_offset" => Prim::HashOffset {
                dest: self.lvalue(p(0)?, ctx)?,
                base: e(1)?,
                calc: Self::named(&self.calc_by_name, p(2)?, "calculation", ctx)?,
                max: e(3)?,
            },
            "modify_field_rng_uniform" => Prim::Random {
                dest: self.lvalue(p(0)?, ctx)?,
                lo: e(1)?,
                hi: e(2)?,
            },
            "truncate" => Prim::Truncate(e(0)?),
            "register_read" => Prim::RegisterRead {
                dest: self.lvalue(p(0)?, ctx)?,
                array: Self::named(&self.register_by_name, p(1)?, "register array", ctx)?,
                index: e(2)?,
            },
            "register_write" => Prim::RegisterWrite {
                array: Self::named(&self.register_by_name, p(0)?, "register array", ctx)?,
                index: e(1)?,
                value: e(2)?,
            },
            "count" => Prim::Count {
                array: Self::named(&self.counter_by_name, p(0)?, "counter array", ctx)?,
                index: e(1)?,
            },
            "execute_meter" => Prim::ExecuteMeter {
                array: Self::named(&self.meter_by_name, p(0)?, "meter array", ctx)?,
                index: e(1)?,
                dest: self.lvalue(p(2)?, ctx)?,
            },
            "log_msg" => {
                let fmt = p(0)?.get("value").and_then(Value::as_str).unwrap_or("");
                let parts = fmt.split("{}").map(str::to_string).collect();
                let args = match params.get(1).and_then(|v| v.get("value")) {
                    Some(Value::Array(a)) => a
                        .iter()
                        .map(|x| self.log_arg(x, ctx))
                        .collect::<R<Vec<_>>>()?,
                    _ => vec![],
                };
                Prim::LogMsg { parts, args }
            }
            "assert" => Prim::Assert(e(0)?),
            "assume" => Prim::Assume(e(0)?),
            "exit" => Prim::Exit,
            "_jump" => Prim::Jump(list_id(0)?),
            "_jump_if_zero" => Prim::JumpIfZero(e(0)?, list_id(1)?),
            "no_op" => Prim::NoOp,
            tna if tna.starts_with('_') && self.p.kind != ProgramKind::V1model => {
                return self.tna_primitive(tna, params, ctx);
            }
            other => return err(ctx, format!("unsupported primitive '{other}'")),
        })
    }

    fn log_arg(&self, v: &Value, ctx: &str) -> R<LogArg> {
        if let Value::Array(a) = v {
            return Ok(LogArg::List(
                a.iter()
                    .map(|x| self.log_arg(x, ctx))
                    .collect::<R<Vec<_>>>()?,
            ));
        }
        if v.get("type").and_then(Value::as_str) == Some("header") {
            let h = v.get("value").and_then(Value::as_str).unwrap_or("");
            return Ok(LogArg::Header(self.header(h, ctx)?));
        }
        let (e, signed) = self.expr(v, ctx)?;
        Ok(LogArg::Value(e, signed))
    }

    /// Loads the `actions` section.
    pub(super) fn actions(&mut self, root: &Value) -> R<()> {
        for (i, a) in arr(root, "actions").iter().enumerate() {
            let ctx = obj_ctx("actions", i, a);
            let name = get_str(a, "name", &ctx)?.to_string();
            let id = get_u64(a, "id", &ctx)?;
            let params = arr(a, "runtime_data")
                .iter()
                .map(|r| {
                    let pname = get_str(r, "name", &ctx)?.to_string();
                    let width = get_u64(r, "bitwidth", &ctx)?;
                    // Action data travels as u128 through the tables and the control plane.
                    if width > 128 {
                        return err(
                            &ctx,
                            format!(
                                "parameter '{pname}' is {width} bits wide; action parameters \
                                 wider than 128 bits are not supported"
                            ),
                        );
                    }
                    Ok((pname, width as u32))
                })
                .collect::<R<Vec<_>>>()?;
            let prims = arr(a, "primitives")
                .iter()
                .enumerate()
                .map(|(j, pr)| self.primitive(pr, &format!("{ctx} primitive {j}")))
                .collect::<R<Vec<_>>>()?;
            let n = prims.len() as u32;
            for (j, pr) in prims.iter().enumerate() {
                if let Prim::Jump(t) | Prim::JumpIfZero(_, t) = pr {
                    if *t > n {
                        return err(
                            &format!("{ctx} primitive {j}"),
                            format!("jump target {t} beyond the action"),
                        );
                    }
                }
            }
            if self
                .action_by_id
                .insert(id, self.p.actions.len() as u32)
                .is_some()
            {
                return err(&ctx, format!("duplicate action id {id}"));
            }
            self.p
                .trace_names
                .primitives
                .push(arr(a, "primitives").iter().map(source_ref).collect());
            self.p.actions.push(ActionDef {
                name,
                id: id as u32,
                params,
                prims,
            });
        }
        Ok(())
    }
}

fn lvalue_expr(l: &LValue) -> Expr {
    match l {
        LValue::Field(f) => Expr::Field(*f),
        LValue::StackLast { stack, offset } => Expr::StackLast {
            stack: *stack,
            offset: *offset,
            width: 128,
            signed: false,
        },
        LValue::StackIndex {
            stack,
            index,
            offset,
        } => Expr::StackIndex {
            stack: *stack,
            index: Box::new(index.clone()),
            offset: *offset,
            width: 128,
            signed: false,
        },
    }
}
