//! Expressions and l-values: BMv2's type-value objects compiled into [`Expr`] and
//! [`LValue`] with every name resolved.

use super::*;

impl Loader {
    /// Compiles a type–value object into an expression; the bool says "signed".
    pub(super) fn expr(&self, v: &Value, ctx: &str) -> R<(Expr, bool)> {
        let ty = v.get("type").and_then(Value::as_str);
        let val = v.get("value").unwrap_or(&Value::Null);
        match ty {
            Some("field") => {
                let (h, f) = self.field_pair(Some(val), ctx)?;
                if f == "$valid$" {
                    return Ok((Expr::Valid(self.header(&h, ctx)?), false));
                }
                let fid = self.field_id(&h, &f, ctx)?;
                let fi = &self.p.fields[fid as usize];
                if fi.wide.is_some() {
                    return self.wide_use_error(fid, "this use", ctx);
                }
                Ok(if fi.signed {
                    (Expr::SignedField(fid, fi.width), true)
                } else {
                    (Expr::Field(fid), false)
                })
            }
            Some("hexstr") => match parse_hexstr(val.as_str().unwrap_or("")) {
                Some(c) => Ok((Expr::Const(c), false)),
                None if self.wide_desc(v).is_some() => err(
                    ctx,
                    format!(
                        "constant {val} is wider than 128 bits; only ==, != and assignment \
                         to a field as wide take it"
                    ),
                ),
                None => Ok((Expr::Const(hex_value(val, ctx)?), false)),
            },
            Some("bool") => Ok((
                Expr::Const(u128::from(val.as_bool().unwrap_or(false))),
                false,
            )),
            Some("runtime_data") | Some("local") => match val.as_u64() {
                Some(i) => Ok((Expr::Local(i as u16), false)),
                None => err(ctx, "action parameter index is not an integer"),
            },
            Some("lookahead") => {
                let a = val.as_array();
                let off = a.and_then(|a| a.first()).and_then(Value::as_u64);
                let w = a.and_then(|a| a.get(1)).and_then(Value::as_u64);
                match (off, w) {
                    (Some(o), Some(w)) if w <= 128 => Ok((
                        Expr::Lookahead {
                            offset: o as u32,
                            width: w as u32,
                        },
                        false,
                    )),
                    _ => err(ctx, "lookahead needs [offset, width <= 128]"),
                }
            }
            Some("register") => {
                let a = val.as_array();
                let name = a
                    .and_then(|a| a.first())
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let array = self.register(name, ctx)?;
                let idx = a
                    .and_then(|a| a.get(1))
                    .map_or_else(|| err(ctx, "register without index"), Ok)?;
                let (index, _) = self.expr(idx, ctx)?;
                Ok((
                    Expr::Register {
                        array,
                        index: Box::new(index),
                    },
                    false,
                ))
            }
            Some("stack_field") => {
                let (s, f) = self.field_pair(Some(val), ctx)?;
                let stack = self.stack(&s, ctx)?;
                let (offset, width, signed) = self.stack_field_offset(stack, &f, ctx)?;
                self.narrow_stack_field(stack, offset, ctx)?;
                Ok((
                    Expr::StackLast {
                        stack,
                        offset,
                        width,
                        signed,
                    },
                    signed,
                ))
            }
            Some("union_stack_field") => {
                let a = val.as_array();
                let part = |i: usize| {
                    a.and_then(|a| a.get(i))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                };
                let (us, member, field) = (part(0), part(1), part(2));
                let Some(&ustack) = self.ustack_by_name.get(us) else {
                    return err(ctx, format!("unknown header union stack '{us}'"));
                };
                let u0 = &self.p.unions[self.p.union_stacks[ustack as usize].unions[0] as usize];
                let Some(m) = u0.headers.iter().position(|&h| {
                    self.p.headers[h as usize]
                        .name
                        .ends_with(&format!(".{member}"))
                }) else {
                    return err(ctx, format!("union stack '{us}' has no member '{member}'"));
                };
                let h = &self.p.headers[u0.headers[m] as usize];
                let full = format!("{}.{field}", h.name);
                let Some(k) = (0..h.num_fields)
                    .find(|k| self.p.fields[(h.first_field + k) as usize].name == full)
                else {
                    return err(
                        ctx,
                        format!("union stack '{us}' member '{member}' has no field '{field}'"),
                    );
                };
                self.narrow_field(h.first_field + k, "a union stack access", ctx)?;
                let fi = &self.p.fields[(h.first_field + k) as usize];
                let (width, signed) = (fi.width, fi.signed);
                Ok((
                    Expr::UnionStackLast {
                        ustack,
                        member: m as u32,
                        offset: k,
                        width,
                        signed,
                    },
                    signed,
                ))
            }
            Some("expression") => {
                if val.get("type").is_some() {
                    return self.expr(val, ctx);
                }
                self.op_expr(val, ctx)
            }
            other => err(ctx, format!("unsupported operand type {other:?}")),
        }
    }

    fn sub(&self, v: &Value, key: &str, ctx: &str) -> R<(Expr, bool)> {
        match v.get(key) {
            Some(x) if !x.is_null() => self.expr(x, ctx),
            _ => err(ctx, format!("operator without '{key}' operand")),
        }
    }

    fn width_operand(&self, v: &Value, ctx: &str) -> R<u32> {
        match v.get("right") {
            Some(r) => Ok(hex_value(r.get("value").unwrap_or(r), ctx)? as u32),
            None => err(ctx, "missing width operand"),
        }
    }

    fn stack_operand(&self, v: &Value, key: &str, ctx: &str) -> R<u32> {
        let name = v
            .get(key)
            .and_then(|x| x.get("value"))
            .and_then(Value::as_str)
            .unwrap_or("");
        self.stack(name, ctx)
    }

    /// A `dereference_header_stack` node as (stack, index expression).
    fn deref(&self, v: &Value, ctx: &str) -> R<(u32, Expr)> {
        let node = if v.get("type").is_some() {
            v.get("value").unwrap_or(&Value::Null)
        } else {
            v
        };
        let node = if node.get("type").and_then(Value::as_str) == Some("expression") {
            node.get("value").unwrap_or(&Value::Null)
        } else {
            node
        };
        match node.get("op").and_then(Value::as_str) {
            Some("dereference_header_stack") | Some("dereference_stack") => {
                let stack = self.stack_operand(node, "left", ctx)?;
                let (index, _) = self.sub(node, "right", ctx)?;
                Ok((stack, index))
            }
            other => err(
                ctx,
                format!("expected a header stack dereference, got {other:?}"),
            ),
        }
    }

    /// Whether `f` is its header's varbit field.
    fn is_varbit(&self, f: FieldId) -> bool {
        let header = &self.p.headers[self.p.fields[f as usize].header as usize];
        header
            .varbit
            .is_some_and(|(k, _)| header.first_field + k == f)
    }

    fn op_expr(&self, v: &Value, ctx: &str) -> R<(Expr, bool)> {
        let Some(op) = v.get("op").and_then(Value::as_str) else {
            return err(ctx, "expression without 'op'");
        };
        if op != "==" && op != "!=" {
            self.refuse_wide_operands(v, op, ctx)?;
        }
        let unary = v.get("left").is_none_or(Value::is_null);
        let bin = |b: BinOp, sb: Option<BinOp>| -> R<(Expr, bool)> {
            let (l, ls) = self.sub(v, "left", ctx)?;
            let (r, rs) = self.sub(v, "right", ctx)?;
            let signed = ls || rs;
            let b = match sb {
                Some(s) if signed => s,
                _ => b,
            };
            Ok((
                Expr::Bin(b, Box::new(l), Box::new(r)),
                signed && !is_compare(b),
            ))
        };
        match op {
            "+" => bin(BinOp::Add, None),
            "-" if unary => {
                let (r, rs) = self.sub(v, "right", ctx)?;
                Ok((
                    Expr::Bin(BinOp::Sub, Box::new(Expr::Const(0)), Box::new(r)),
                    rs,
                ))
            }
            "-" => bin(BinOp::Sub, None),
            "*" => bin(BinOp::Mul, None),
            "/" => bin(BinOp::Div, None),
            "%" => bin(BinOp::Mod, None),
            "<<" => bin(BinOp::Shl, None),
            ">>" => bin(BinOp::Shr, Some(BinOp::Sar)),
            "==" | "!=" => {
                let null = Value::Null;
                let (lv, rv) = (
                    v.get("left").unwrap_or(&null),
                    v.get("right").unwrap_or(&null),
                );
                if let Some(e) = self.wide_eq(lv, rv, op == "!=", ctx)? {
                    return Ok((e, false));
                }
                let (l, _) = self.sub(v, "left", ctx)?;
                let (r, _) = self.sub(v, "right", ctx)?;
                let ne = op == "!=";
                let e = match (l, r) {
                    (Expr::Field(a), Expr::Field(b)) if self.is_varbit(a) && self.is_varbit(b) => {
                        let eq = Expr::VarbitEq(a, b);
                        if ne {
                            Expr::Not(Box::new(eq))
                        } else {
                            eq
                        }
                    }
                    (l, r) => {
                        let b = if ne { BinOp::Ne } else { BinOp::Eq };
                        Expr::Bin(b, Box::new(l), Box::new(r))
                    }
                };
                Ok((e, false))
            }
            "<" => bin(BinOp::Lt, Some(BinOp::SLt)),
            "<=" => bin(BinOp::Le, Some(BinOp::SLe)),
            ">" => bin(BinOp::Gt, Some(BinOp::SGt)),
            ">=" => bin(BinOp::Ge, Some(BinOp::SGe)),
            "and" => bin(BinOp::And, None),
            "or" => bin(BinOp::Or, None),
            "&" => bin(BinOp::BitAnd, None),
            "|" => bin(BinOp::BitOr, None),
            "^" => bin(BinOp::BitXor, None),
            "not" => Ok((Expr::Not(Box::new(self.sub(v, "right", ctx)?.0)), false)),
            "~" => {
                let (r, rs) = self.sub(v, "right", ctx)?;
                Ok((Expr::BitNot(Box::new(r)), rs))
            }
            "d2b" => {
                // Validity and comparisons are 0 or 1 already: no node to walk at run time
                // (a checksum's `d2b(valid(h))` is evaluated for every packet).
                let x = self.sub(v, "right", ctx)?.0;
                let e = if x.is_boolean() {
                    x
                } else {
                    Expr::D2B(Box::new(x))
                };
                Ok((e, false))
            }
            "b2d" => Ok((self.sub(v, "right", ctx)?.0, false)),
            "?" => {
                let (c, _) = self.sub(v, "cond", ctx)?;
                let (l, ls) = self.sub(v, "left", ctx)?;
                let (r, rs) = self.sub(v, "right", ctx)?;
                Ok((Expr::Cond(Box::new(c), Box::new(l), Box::new(r)), ls && rs))
            }
            "two_comp_mod" => {
                let (l, _) = self.sub(v, "left", ctx)?;
                Ok((
                    Expr::TwoCompMod(Box::new(l), self.width_operand(v, ctx)?),
                    true,
                ))
            }
            "sat_cast" => {
                let (l, _) = self.sub(v, "left", ctx)?;
                Ok((
                    Expr::SatCast(Box::new(l), self.width_operand(v, ctx)?),
                    true,
                ))
            }
            "usat_cast" => {
                let (l, _) = self.sub(v, "left", ctx)?;
                Ok((
                    Expr::USatCast(Box::new(l), self.width_operand(v, ctx)?),
                    false,
                ))
            }
            "valid" => {
                let r = v.get("right").unwrap_or(&Value::Null);
                match r.get("type").and_then(Value::as_str) {
                    Some("header") => {
                        let h = r.get("value").and_then(Value::as_str).unwrap_or("");
                        Ok((Expr::Valid(self.header(h, ctx)?), false))
                    }
                    Some("expression") => {
                        let (stack, index) = self.deref(r, ctx)?;
                        Ok((
                            Expr::StackIndexValid {
                                stack,
                                index: Box::new(index),
                            },
                            false,
                        ))
                    }
                    other => err(ctx, format!("'valid' of unsupported operand {other:?}")),
                }
            }
            "valid_union" => {
                let name = v
                    .get("right")
                    .and_then(|r| r.get("value"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                match self.union_by_name.get(name) {
                    Some(u) => Ok((Expr::ValidUnion(*u), false)),
                    None => err(ctx, format!("unknown header union '{name}'")),
                }
            }
            "access_field" => {
                let (stack, index) = self.deref(v.get("left").unwrap_or(&Value::Null), ctx)?;
                let offset = v
                    .get("right")
                    .and_then(Value::as_u64)
                    .map_or_else(|| err(ctx, "access_field offset"), Ok)?
                    as u32;
                let h0 = &self.p.headers[self.p.stacks[stack as usize].headers[0] as usize];
                if offset >= h0.num_fields {
                    return err(
                        ctx,
                        format!("access_field offset {offset} beyond the header's fields"),
                    );
                }
                self.narrow_stack_field(stack, offset, ctx)?;
                let fi = &self.p.fields[(h0.first_field + offset) as usize];
                let (width, signed) = (fi.width, fi.signed);
                Ok((
                    Expr::StackIndex {
                        stack,
                        index: Box::new(index),
                        offset,
                        width,
                        signed,
                    },
                    signed,
                ))
            }
            "last_stack_index" => Ok((
                Expr::LastStackIndex(self.stack_operand(v, "right", ctx)?),
                false,
            )),
            "size_stack" => Ok((Expr::SizeStack(self.stack_operand(v, "right", ctx)?), false)),
            other => err(ctx, format!("unsupported expression operator '{other}'")),
        }
    }

    /// Compiles a field reference into an l-value.
    pub(super) fn lvalue(&self, v: &Value, ctx: &str) -> R<LValue> {
        match v.get("type").and_then(Value::as_str) {
            Some("field") => {
                let (h, f) = self.field_pair(v.get("value"), ctx)?;
                if f == "$valid$" {
                    return err(ctx, "the validity bit is read-only");
                }
                let fid = self.field_id(&h, &f, ctx)?;
                Ok(LValue::Field(self.narrow_field(
                    fid,
                    "writing it here",
                    ctx,
                )?))
            }
            Some("stack_field") => {
                let (s, f) = self.field_pair(v.get("value"), ctx)?;
                let stack = self.stack(&s, ctx)?;
                let offset = self.stack_field_offset(stack, &f, ctx)?.0;
                self.narrow_stack_field(stack, offset, ctx)?;
                Ok(LValue::StackLast { stack, offset })
            }
            Some("expression") => match self.expr(v, ctx)?.0 {
                Expr::StackIndex {
                    stack,
                    index,
                    offset,
                    ..
                } => Ok(LValue::StackIndex {
                    stack,
                    index: *index,
                    offset,
                }),
                Expr::StackLast { stack, offset, .. } => Ok(LValue::StackLast { stack, offset }),
                Expr::Field(f) | Expr::SignedField(f, _) => Ok(LValue::Field(f)),
                _ => err(ctx, "expression is not assignable"),
            },
            other => err(ctx, format!("{other:?} is not assignable")),
        }
    }

    /// Compiles a header operand (instance, stack element or union member).
    pub(super) fn header_ref(&self, v: &Value, ctx: &str) -> R<HeaderRef> {
        match v.get("type").and_then(Value::as_str) {
            Some("header") => {
                let h = v.get("value").and_then(Value::as_str).unwrap_or("");
                Ok(HeaderRef::Fixed(self.header(h, ctx)?))
            }
            Some("expression") => {
                let (stack, index) = self.deref(v, ctx)?;
                Ok(HeaderRef::StackIndex { stack, index })
            }
            Some("stack_field") | Some("header_stack") => {
                err(ctx, "expected a header, got a stack")
            }
            other => err(ctx, format!("expected a header, got {other:?}")),
        }
    }

    /// Refuses a stack element's field wider than 128 bits (stack accesses read `u128` slots).
    fn narrow_stack_field(&self, stack: u32, offset: u32, ctx: &str) -> R<()> {
        let h0 = &self.p.headers[self.p.stacks[stack as usize].headers[0] as usize];
        self.narrow_field(h0.first_field + offset, "a header stack access", ctx)
            .map(|_| ())
    }

    pub(super) fn register(&self, name: &str, ctx: &str) -> R<u32> {
        self.register_by_name
            .get(name)
            .copied()
            .map_or_else(|| err(ctx, format!("unknown register '{name}'")), Ok)
    }

    /// The index of the object a JSON string names in `map`.
    pub(super) fn named(map: &HashMap<String, u32>, v: &Value, what: &str, ctx: &str) -> R<u32> {
        let name = v.get("value").and_then(Value::as_str).unwrap_or("");
        map.get(name)
            .copied()
            .map_or_else(|| err(ctx, format!("unknown {what} '{name}'")), Ok)
    }
}

/// Concatenates per-component values at their unpadded widths (value-set layout).
pub fn concat_components(values: &[u128], key: &[KeyComponent]) -> u128 {
    values.iter().zip(key).fold(0u128, |cat, (v, k)| {
        if k.width >= 128 {
            *v
        } else {
            (cat << k.width) | v
        }
    })
}

fn is_compare(b: BinOp) -> bool {
    use BinOp::*;
    matches!(
        b,
        Eq | Ne | Lt | Le | Gt | Ge | SLt | SLe | SGt | SGe | And | Or
    )
}
