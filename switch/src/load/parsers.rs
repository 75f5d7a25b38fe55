//! Parser states, transitions and value sets, and the deparser's header order.

use super::*;

impl Loader {
    fn extract_target(&self, v: &Value, ctx: &str) -> R<ExtractTarget> {
        let val = v.get("value").unwrap_or(&Value::Null);
        match v.get("type").and_then(Value::as_str) {
            Some("regular") => Ok(ExtractTarget::Header(
                self.header(val.as_str().unwrap_or(""), ctx)?,
            )),
            Some("stack") => Ok(ExtractTarget::Stack(
                self.stack(val.as_str().unwrap_or(""), ctx)?,
            )),
            Some("union_stack") => {
                let (us, member) = self.field_pair(Some(val), ctx)?;
                let Some(&usid) = self.ustack_by_name.get(&us) else {
                    return err(ctx, format!("unknown union stack '{us}'"));
                };
                let u0 = &self.p.unions[self.p.union_stacks[usid as usize].unions[0] as usize];
                let idx = u0
                    .headers
                    .iter()
                    .position(|&h| {
                        self.p.headers[h as usize]
                            .name
                            .ends_with(&format!(".{member}"))
                    })
                    .map_or_else(
                        || err(ctx, format!("union stack '{us}' has no member '{member}'")),
                        Ok,
                    )?;
                Ok(ExtractTarget::UnionStack(usid, idx as u32))
            }
            other => err(ctx, format!("unsupported extract target {other:?}")),
        }
    }

    /// Loads the parser: states, extracts, transitions and value sets.
    pub(super) fn parser(&mut self, root: &Value) -> R<()> {
        for (i, vs) in arr(root, "parse_vsets").iter().enumerate() {
            let ctx = obj_ctx("parse_vsets", i, vs);
            let name = get_str(vs, "name", &ctx)?.to_string();
            let width = get_u64(vs, "compressed_bitwidth", &ctx)? as u32;
            let max_size = vs
                .get("max_size")
                .and_then(Value::as_u64)
                .unwrap_or(u64::from(u32::MAX)) as usize;
            self.vset_by_name
                .insert(name.clone(), self.p.value_sets.len() as u32);
            self.p.value_sets.push(ValueSet {
                name,
                width,
                max_size,
            });
        }
        let parsers = arr(root, "parsers");
        let Some(parser) = parsers
            .iter()
            .find(|p| p.get("name").and_then(Value::as_str) == Some("parser"))
        else {
            if parsers.is_empty() {
                return Ok(());
            }
            return err("parsers", "no parser named 'parser'");
        };
        self.p.trace_names.parser = "parser".into();
        self.p.init_state = self.parse_graph(parser)?;
        if self.p.kind == ProgramKind::TnaIngress {
            // MultiParserSwitch: the other ingress parsers (`parser_1`, ...), which the
            // control plane assigns to ports.
            for other in parsers
                .iter()
                .filter(|p| p.get("name").and_then(Value::as_str) != Some("parser"))
            {
                let init = self.parse_graph(other)?;
                self.p.other_parsers.push(init);
            }
        }
        Ok(())
    }

    /// Loads one parser's states after those already loaded; its initial state.
    fn parse_graph(&mut self, parser: &Value) -> R<Option<u32>> {
        let base = self.p.parse_states.len() as u32;
        self.state_by_name.clear();
        let states = arr(parser, "parse_states");
        for (i, s) in states.iter().enumerate() {
            let ctx = obj_ctx("parse_states", i, s);
            self.state_by_name
                .insert(get_str(s, "name", &ctx)?.to_string(), base + i as u32);
        }
        let state = |name: Option<&str>, ctx: &str| -> R<Option<u32>> {
            match name {
                None => Ok(None),
                Some(n) => self.state_by_name.get(n).map_or_else(
                    || err(ctx, format!("unknown parse state '{n}'")),
                    |s| Ok(Some(*s)),
                ),
            }
        };
        let init = state(
            parser.get("init_state").and_then(Value::as_str),
            &format!(
                "parser '{}'",
                parser.get("name").and_then(Value::as_str).unwrap_or("?")
            ),
        )?;
        let mut out = vec![];
        for (i, s) in states.iter().enumerate() {
            let ctx = obj_ctx("parse_states", i, s);
            let mut ops = vec![];
            for (j, op) in arr(s, "parser_ops").iter().enumerate() {
                let octx = format!("{ctx} parser_op {j}");
                let params = arr(op, "parameters");
                let p = |k: usize| -> R<&Value> {
                    params
                        .get(k)
                        .map_or_else(|| err(&octx, format!("missing parameter {k}")), Ok)
                };
                ops.push(match op.get("op").and_then(Value::as_str) {
                    Some("extract") => ParserOp::Extract(self.extract_target(p(0)?, &octx)?),
                    Some("extract_VL") => ParserOp::ExtractVl(
                        self.extract_target(p(0)?, &octx)?,
                        self.expr(p(1)?, &octx)?.0,
                    ),
                    Some("set") => match self.wide_assign(p(0)?, p(1)?, &octx)? {
                        Some(wide) => ParserOp::Primitive(wide),
                        None => {
                            ParserOp::Set(self.lvalue(p(0)?, &octx)?, self.expr(p(1)?, &octx)?.0)
                        }
                    },
                    Some("verify") => {
                        ParserOp::Verify(self.expr(p(0)?, &octx)?.0, self.expr(p(1)?, &octx)?.0)
                    }
                    Some("shift") => {
                        let bytes = hex_value(p(0)?.get("value").unwrap_or(p(0)?), &octx)?;
                        ParserOp::Advance(Expr::Const(bytes * 8))
                    }
                    Some("advance") => ParserOp::Advance(self.expr(p(0)?, &octx)?.0),
                    Some("primitive") => ParserOp::Primitive(self.primitive(p(0)?, &octx)?),
                    other => return err(&octx, format!("unsupported parser op {other:?}")),
                });
            }
            let mut key = vec![];
            for (j, k) in arr(s, "transition_key").iter().enumerate() {
                let kctx = format!("{ctx} transition_key {j}");
                let (expr, _) = self.expr(k, &kctx)?;
                let width = match &expr {
                    Expr::Field(f) | Expr::SignedField(f, _) => self.p.fields[*f as usize].width,
                    Expr::Valid(_) => 1,
                    Expr::Lookahead { width, .. }
                    | Expr::StackLast { width, .. }
                    | Expr::UnionStackLast { width, .. } => *width,
                    _ => return err(&kctx, "unsupported transition key element"),
                };
                // Signed keys compare as their raw bits.
                let expr = match expr {
                    Expr::SignedField(f, _) => Expr::Field(f),
                    e => e,
                };
                key.push(KeyComponent { expr, width });
            }
            let mut transitions = vec![];
            for (j, t) in arr(s, "transitions").iter().enumerate() {
                let tctx = format!("{ctx} transition {j}");
                let next = state(t.get("next_state").and_then(Value::as_str), &tctx)?;
                let ty = t.get("type").and_then(Value::as_str).unwrap_or("hexstr");
                let value = t.get("value").unwrap_or(&Value::Null);
                let on = match ty {
                    "default" => TransitionMatch::Default,
                    "hexstr" if value.as_str() == Some("default") => TransitionMatch::Default,
                    "hexstr" => {
                        let vals = self.split_key(value.as_str().unwrap_or(""), &key, &tctx)?;
                        let masks = match t.get("mask").and_then(Value::as_str) {
                            Some(m) => self.split_key(m, &key, &tctx)?,
                            None => key.iter().map(|k| mask(k.width)).collect(),
                        };
                        TransitionMatch::Value(
                            vals.into_iter()
                                .zip(masks)
                                .map(|(v, m)| (v & m, m))
                                .collect(),
                        )
                    }
                    "parse_vset" => {
                        let n = value.as_str().unwrap_or("");
                        let Some(&id) = self.vset_by_name.get(n) else {
                            return err(&tctx, format!("unknown parse_vset '{n}'"));
                        };
                        let vmask = match t.get("mask").and_then(Value::as_str) {
                            Some(m) => {
                                let parts = self.split_key(m, &key, &tctx)?;
                                Some(concat_components(&parts, &key))
                            }
                            None => None,
                        };
                        TransitionMatch::ValueSet(id, vmask)
                    }
                    other => return err(&tctx, format!("unsupported transition type '{other}'")),
                };
                transitions.push(Transition { on, next });
            }
            // BMv2 tries a state's value and value-set cases in order and takes its default
            // (the last one given) only when none of them matches, wherever the default
            // stands in the list.
            if let Some(at) = transitions
                .iter()
                .rposition(|t| matches!(t.on, TransitionMatch::Default))
            {
                let default = transitions.remove(at);
                transitions.retain(|t| !matches!(t.on, TransitionMatch::Default));
                transitions.push(default);
            }
            let key_lookahead = key
                .iter()
                .map(|k| crate::exec::lookahead_need(&k.expr))
                .max()
                .unwrap_or(0);
            out.push(ParseState {
                name: get_str(s, "name", &ctx)?.to_string(),
                ops,
                key,
                transitions,
                key_lookahead,
                // BMv2 has no reject state (its parser accepts at a null next state);
                // only a TNA gress's `$reject` ends the parse with a drop.
                reject: self.p.kind != ProgramKind::V1model
                    && s.get("reject").and_then(Value::as_bool) == Some(true),
            });
        }
        self.p.parse_states.extend(out);
        Ok(init)
    }

    /// Splits a transition value (components padded to whole bytes) per key element.
    pub(super) fn split_key(&self, hex: &str, key: &[KeyComponent], ctx: &str) -> R<Vec<u128>> {
        let sizes: Vec<usize> = key.iter().map(|k| k.width.div_ceil(8) as usize).collect();
        let total: usize = sizes.iter().sum();
        let bytes = hex_bytes(hex, total, ctx)?;
        let mut out = vec![];
        let mut at = 0;
        for (k, n) in key.iter().zip(sizes) {
            out.push(crate::bits::bytes_to_u128(&bytes[at..at + n]) & mask(k.width));
            at += n;
        }
        Ok(out)
    }

    /// Loads the deparser's header order and primitives.
    pub(super) fn deparser(&mut self, root: &Value) -> R<()> {
        let Some(d) = arr(root, "deparsers").first() else {
            return Ok(());
        };
        let ctx = obj_ctx("deparsers", 0, d);
        self.p.trace_names.deparser = get_str(d, "name", &ctx)?.to_string();
        for h in arr(d, "order") {
            let name = h.as_str().unwrap_or("");
            let hid = self.header(name, &ctx)?;
            self.p.deparse_order.push(hid);
        }
        for (j, pr) in arr(d, "primitives").iter().enumerate() {
            let prim = self.primitive(pr, &format!("{ctx} primitive {j}"))?;
            // A TNA deparser's `if`s (which mirror or digest to emit) are jumps.
            if self.p.kind == ProgramKind::V1model
                && matches!(prim, Prim::Jump(_) | Prim::JumpIfZero(..) | Prim::Exit)
            {
                return err(
                    &ctx,
                    format!("primitive {j}: control flow is not allowed in the deparser"),
                );
            }
            self.p.deparser_prims.push(prim);
        }
        Ok(())
    }
}
