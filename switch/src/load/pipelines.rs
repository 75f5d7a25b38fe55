//! Pipelines (tables, conditionals, action profiles and selectors), the architecture's
//! bindings and checksums.

use super::*;
use crate::exact::ExactIndex;
use crate::keys::Bytes;

/// Lookup components of a `width`-bit key on the wide field at byte `at`,
/// most significant first.
fn wide_key_parts(name: &str, kind: MatchKind, at: u32, width: u32) -> Vec<TableKey> {
    let n = width.div_ceil(128);
    let mut start = at;
    crate::keys::part_lens(width, n)
        .enumerate()
        .map(|(i, len)| {
            let expr = Expr::WidePart {
                at: start,
                len: len as u32,
            };
            start += len as u32;
            TableKey {
                name: name.to_string(),
                kind,
                expr,
                // Every part but the first holds 128 bits.
                width: if i == 0 { width - 128 * (n - 1) } else { 128 },
                mask: None,
            }
        })
        .collect()
}

impl Loader {
    fn node(&self, v: Option<&Value>, ctx: &str) -> R<Option<Node>> {
        match v.and_then(Value::as_str) {
            None => Ok(None),
            Some(n) => self.node_by_name.get(n).map_or_else(
                || err(ctx, format!("unknown next node '{n}'")),
                |x| Ok(Some(*x)),
            ),
        }
    }

    fn action_data(&self, v: &Value, action: u32, ctx: &str) -> R<Vec<u128>> {
        let data = arr(v, "action_data")
            .iter()
            .map(|d| hex_value(d, ctx))
            .collect::<R<Vec<_>>>()?;
        let want = self.p.actions[action as usize].params.len();
        if data.len() != want {
            return err(
                ctx,
                format!(
                    "{} action data values for an action with {want} parameters",
                    data.len()
                ),
            );
        }
        Ok(data)
    }

    fn action_of(&self, v: &Value, ctx: &str) -> R<u32> {
        let id = get_u64(v, "action_id", ctx)?;
        self.action_by_id
            .get(&id)
            .copied()
            .map_or_else(|| err(ctx, format!("unknown action id {id}")), Ok)
    }

    /// Loads `pipelines`: tables, conditionals and action profiles.
    pub(super) fn pipelines(&mut self, root: &Value) -> R<()> {
        let pipes = arr(root, "pipelines");
        let mut ntables = 0u32;
        let mut nconds = 0u32;
        for p in pipes {
            for t in arr(p, "tables") {
                if let Some(n) = t.get("name").and_then(Value::as_str) {
                    self.node_by_name
                        .insert(n.to_string(), Node::Table(ntables));
                }
                ntables += 1;
            }
            for c in arr(p, "conditionals") {
                if let Some(n) = c.get("name").and_then(Value::as_str) {
                    self.node_by_name.insert(n.to_string(), Node::Cond(nconds));
                }
                nconds += 1;
            }
        }
        for (pi, p) in pipes.iter().enumerate() {
            let pctx = obj_ctx("pipelines", pi, p);
            let pname = get_str(p, "name", &pctx)?.to_string();
            for (i, ap) in arr(p, "action_profiles").iter().enumerate() {
                let ctx = format!("{pctx} {}", obj_ctx("action_profiles", i, ap));
                let name = get_str(ap, "name", &ctx)?.to_string();
                let (selector, selector_mask) = match ap.get("selector") {
                    Some(s) if !s.is_null() => {
                        let algo = match get_str(s, "algo", &ctx)? {
                            // A TNA ActionSelector's Hash: Tofino's CRC, spelled out.
                            "crc" if self.p.kind != ProgramKind::V1model => {
                                self.tofino_crc(s, &ctx)?
                            }
                            name => Self::algo(name, &ctx)?,
                        };
                        let calc = Calculation::new(
                            &self.p,
                            name.clone(),
                            algo,
                            self.calc_inputs(arr(s, "input"), &ctx)?,
                        );
                        (Some(calc), Self::selector_mask(s, &ctx)?)
                    }
                    _ => (None, u64::MAX),
                };
                let max_size = ap.get("max_size").and_then(Value::as_u64).unwrap_or(1024) as usize;
                self.profile_by_name
                    .insert(name.clone(), self.p.profiles.len() as u32);
                self.p.profiles.push(ProfileDef {
                    name,
                    max_size,
                    selector,
                    selector_mask,
                });
            }
            for (i, t) in arr(p, "tables").iter().enumerate() {
                let ctx = format!("{pctx} {}", obj_ctx("tables", i, t));
                let def = self.table(t, &ctx)?;
                self.p.tables.push(def);
            }
            for (i, c) in arr(p, "conditionals").iter().enumerate() {
                let ctx = format!("{pctx} {}", obj_ctx("conditionals", i, c));
                let expr = match c.get("expression") {
                    Some(e) => self.expr(e, &ctx)?.0,
                    None => return err(&ctx, "conditional without 'expression'"),
                };
                self.p.trace_names.conditionals.push(source_ref(c));
                self.p.conditionals.push(Conditional {
                    name: get_str(c, "name", &ctx)?.to_string(),
                    expr,
                    true_next: self.node(c.get("true_next"), &ctx)?,
                    false_next: self.node(c.get("false_next"), &ctx)?,
                });
            }
            let init = self.node(p.get("init_table"), &pctx)?;
            match pname.as_str() {
                "ingress" => self.p.ingress.init = init,
                "egress" => self.p.egress.init = init,
                "ghost" if self.p.kind == ProgramKind::TnaIngress => self.p.ghost.init = init,
                _ => {}
            }
        }
        Ok(())
    }

    fn table(&self, t: &Value, ctx: &str) -> R<TableDef> {
        let name = get_str(t, "name", ctx)?.to_string();
        let mut keys = vec![];
        let mut fields = vec![];
        for (j, k) in arr(t, "key").iter().enumerate() {
            let kctx = format!("{ctx} key {j}");
            self.table_key(k, &kctx, &mut keys, &mut fields)?;
        }
        let lookup = if keys.iter().any(|k| {
            matches!(
                k.kind,
                MatchKind::Ternary | MatchKind::Range | MatchKind::Optional
            )
        }) {
            LookupKind::Ordered
        } else if keys.iter().filter(|k| k.kind == MatchKind::Lpm).count() == 1 {
            LookupKind::Lpm
        } else if keys.iter().any(|k| k.kind == MatchKind::Lpm) {
            return err(ctx, "more than one lpm key");
        } else {
            LookupKind::Exact
        };
        let ty = match t.get("type").and_then(Value::as_str).unwrap_or("simple") {
            "simple" => TableType::Simple,
            "indirect" => TableType::Indirect,
            "indirect_ws" => TableType::IndirectWs,
            other => return err(ctx, format!("unsupported table type '{other}'")),
        };
        let profile = match t.get("action_profile").and_then(Value::as_str) {
            Some(n) => Some(
                self.profile_by_name
                    .get(n)
                    .copied()
                    .map_or_else(|| err(ctx, format!("unknown action profile '{n}'")), Ok)?,
            ),
            None if ty != TableType::Simple => {
                return err(ctx, "indirect table without 'action_profile'")
            }
            None => None,
        };
        let mut actions = vec![];
        if t.get("action_ids").is_some() {
            for id in arr(t, "action_ids") {
                let id = id.as_u64().unwrap_or(u64::MAX);
                match self.action_by_id.get(&id) {
                    Some(a) => actions.push(*a),
                    None => return err(ctx, format!("unknown action id {id}")),
                }
            }
        } else {
            // Older (p4c-bm) JSON lists the table's actions by name only.
            for n in arr(t, "actions") {
                let n = n.as_str().unwrap_or("");
                match self.p.actions.iter().position(|a| a.name == n) {
                    Some(a) => actions.push(a as u32),
                    None => return err(ctx, format!("unknown action '{n}'")),
                }
            }
        }
        let base_default_next = self.node(t.get("base_default_next"), ctx)?;
        let mut next_by_action = vec![base_default_next; self.p.actions.len()];
        let mut hit = None;
        let mut miss = None;
        if let Some(nt) = t.get("next_tables").and_then(Value::as_object) {
            for (k, v) in nt {
                let n = self.node(Some(v), ctx)?;
                match k.as_str() {
                    "__HIT__" => hit = Some(n),
                    "__MISS__" => miss = Some(n),
                    aname => {
                        let a = actions
                            .iter()
                            .copied()
                            .find(|&a| self.p.actions[a as usize].name == aname)
                            .map_or_else(|| err(ctx, format!("next_tables names action '{aname}' the table does not have")), Ok)?;
                        next_by_action[a as usize] = n;
                    }
                }
            }
        }
        let hit_miss = match (hit, miss) {
            (Some(h), Some(m)) => Some((h, m)),
            (None, None) => None,
            _ => return err(ctx, "next_tables needs both __HIT__ and __MISS__"),
        };
        let default_entry = match t.get("default_entry") {
            Some(d) if !d.is_null() => {
                let dctx = format!("{ctx} default_entry");
                let a = self.action_of(d, &dctx)?;
                let data = self.action_data(d, a, &dctx)?;
                Some((
                    a,
                    data,
                    d.get("action_const")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                ))
            }
            _ => None,
        };
        let mut const_entries = vec![];
        for (j, e) in arr(t, "entries").iter().enumerate() {
            let ectx = format!("{ctx} entries[{j}]");
            let mut mv = vec![];
            for (m, f) in arr(e, "match_key").iter().zip(&fields) {
                if f.parts.1 == 1 {
                    mv.push(self.const_match(m, f.kind, &ectx)?);
                } else {
                    let v = self.wide_const_match(m, f, &ectx)?;
                    let parts = crate::keys::split_field(&name, &keys, f, v)
                        .or_else(|e| err(&ectx, e.to_string()))?;
                    mv.extend(parts);
                }
            }
            if mv.len() != keys.len() {
                return err(&ectx, "match_key length differs from the table key");
            }
            let ae = e.get("action_entry").unwrap_or(&Value::Null);
            let a = self.action_of(ae, &ectx)?;
            let data = self.action_data(ae, a, &ectx)?;
            let prio = e
                .get("priority")
                .and_then(Value::as_i64)
                .unwrap_or(j as i64 + 1) as i32;
            const_entries.push((mv, a, data, prio));
        }
        let max_size = t
            .get("max_size")
            .and_then(Value::as_u64)
            .unwrap_or(1024)
            .max(const_entries.len() as u64) as usize;
        let field_key = field_key(lookup, &keys);
        Ok(TableDef {
            name,
            keys,
            fields,
            lookup,
            field_key,
            ty,
            profile,
            max_size,
            with_counters: t
                .get("with_counters")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            direct_meter: None,
            actions,
            next_by_action,
            hit_miss,
            base_default_next,
            default_entry,
            const_entries,
        })
    }

    /// Appends key `k`'s lookup components to `keys` and its match field to `fields`.
    fn table_key(
        &self,
        k: &Value,
        kctx: &str,
        keys: &mut Vec<TableKey>,
        fields: &mut Vec<MatchField>,
    ) -> R<()> {
        let kind = match k.get("match_type").and_then(Value::as_str) {
            Some("exact") | Some("valid") => MatchKind::Exact,
            Some("lpm") => MatchKind::Lpm,
            Some("ternary") => MatchKind::Ternary,
            Some("range") => MatchKind::Range,
            Some("optional") => MatchKind::Optional,
            other => return err(kctx, format!("unsupported match_type {other:?}")),
        };
        let (h, f) = self.field_pair(k.get("target"), kctx)?;
        let name = k
            .get("name")
            .and_then(Value::as_str)
            .map_or_else(|| format!("{h}.{f}"), str::to_string);
        let mask = match k.get("mask") {
            Some(m) if !m.is_null() => Some(m),
            _ => None,
        };
        let first = keys.len() as u32;
        let (expr, width) = if f == "$valid$" {
            (Expr::Valid(self.header(&h, kctx)?), 1)
        } else {
            let fid = self.field_id(&h, &f, kctx)?;
            let fi = &self.p.fields[fid as usize];
            if let Some(at) = fi.wide {
                let what = match (kind, mask) {
                    (_, Some(_)) => Some("a masked table key"),
                    (MatchKind::Lpm, _) => Some("an lpm table key"),
                    (MatchKind::Range, _) => Some("a range table key"),
                    _ => None,
                };
                if let Some(what) = what {
                    return self.wide_use_error(fid, what, kctx);
                }
                keys.extend(wide_key_parts(&name, kind, at, fi.width));
                fields.push(MatchField {
                    name,
                    kind,
                    width: fi.width,
                    parts: (first, keys.len() as u32 - first),
                });
                return Ok(());
            }
            (Expr::Field(fid), fi.width)
        };
        // p4c writes a key on a slice, `f[22:18]`, as `f` with a mask. BMv2 matches the
        // masked field in place, `f & mask`, against the entry's value as given (not shifted
        // down to the slice), so a slice above bit 0 matches only entries written in the
        // field's position; the engine does the same.
        let mask = mask.map(|m| hex_value(m, kctx)).transpose()?;
        fields.push(MatchField {
            name: name.clone(),
            kind,
            width,
            parts: (first, 1),
        });
        keys.push(TableKey {
            name,
            kind,
            expr,
            width,
            mask,
        });
        Ok(())
    }

    /// A const entry's match value for a key of at most 128 bits.
    fn const_match(&self, m: &Value, kind: MatchKind, ectx: &str) -> R<MatchValue> {
        let g = |key: &str| hex_value(m.get(key).unwrap_or(&Value::Null), ectx);
        Ok(
            match m
                .get("match_type")
                .and_then(Value::as_str)
                .unwrap_or("exact")
            {
                "exact" | "valid" => MatchValue::Exact(g("key")?),
                "lpm" => MatchValue::Lpm(g("key")?, get_u64(m, "prefix_length", ectx)? as u32),
                "ternary" if kind == MatchKind::Optional => {
                    let mk = g("mask")?;
                    MatchValue::Optional((mk != 0).then_some(g("key")?))
                }
                "ternary" => MatchValue::Ternary(g("key")?, g("mask")?),
                "optional" => MatchValue::Optional(Some(g("key")?)),
                "range" => MatchValue::Range(g("start")?, g("end")?),
                other => return err(ectx, format!("unsupported match_type '{other}'")),
            },
        )
    }

    /// A const entry's match value for match field `f` wider than 128 bits, as bytes.
    fn wide_const_match(&self, m: &Value, f: &MatchField, ectx: &str) -> R<MatchValue<Bytes>> {
        let nbytes = f.width.div_ceil(8) as usize;
        let g = |key: &str| {
            let v = m.get(key).unwrap_or(&Value::Null);
            let s = v.get("value").unwrap_or(v).as_str().unwrap_or("");
            hex_bytes(s, nbytes, ectx)
        };
        Ok(
            match m
                .get("match_type")
                .and_then(Value::as_str)
                .unwrap_or("exact")
            {
                "exact" => MatchValue::Exact(g("key")?),
                "ternary" if f.kind == MatchKind::Optional => {
                    let mk = g("mask")?;
                    MatchValue::Optional(mk.iter().any(|&b| b != 0).then(|| g("key")).transpose()?)
                }
                "ternary" => MatchValue::Ternary(g("key")?, g("mask")?),
                "optional" => MatchValue::Optional(Some(g("key")?)),
                other => return err(ectx, format!("unsupported match_type '{other}'")),
            },
        )
    }

    /// Binds direct counters and meters to their tables.
    pub(super) fn bindings(&mut self, root: &Value) -> R<()> {
        for (i, c) in arr(root, "counter_arrays").iter().enumerate() {
            if let Some(tname) = c.get("binding").and_then(Value::as_str) {
                let ctx = obj_ctx("counter_arrays", i, c);
                let t = self.p.table_id(tname).map_or_else(
                    || err(&ctx, format!("binding to unknown table '{tname}'")),
                    Ok,
                )?;
                self.p.counters[i].direct_table = Some(t);
                self.p.tables[t as usize].with_counters = true;
            }
        }
        for (i, m) in arr(root, "meter_arrays").iter().enumerate() {
            if let Some(tname) = m.get("binding").and_then(Value::as_str) {
                let ctx = obj_ctx("meter_arrays", i, m);
                let t = self.p.table_id(tname).map_or_else(
                    || err(&ctx, format!("binding to unknown table '{tname}'")),
                    Ok,
                )?;
                let target = match m.get("result_target") {
                    Some(rt) if !rt.is_null() => {
                        let (h, f) = self.field_pair(Some(rt), &ctx)?;
                        let fid = self.field_id(&h, &f, &ctx)?;
                        Some(self.narrow_field(fid, "a meter result", &ctx)?)
                    }
                    _ => None,
                };
                self.p.meters[i].direct_table = Some(t);
                self.p.tables[t as usize].direct_meter = Some((i as u32, target));
            }
        }
        Ok(())
    }

    /// Loads the `checksums` section.
    pub(super) fn checksums(&mut self, root: &Value) -> R<()> {
        for (i, c) in arr(root, "checksums").iter().enumerate() {
            let ctx = obj_ctx("checksums", i, c);
            let (h, f) = self.field_pair(c.get("target"), &ctx)?;
            let fid = self.field_id(&h, &f, &ctx)?;
            let target = self.narrow_field(fid, "a checksum target", &ctx)?;
            let cname = get_str(c, "calculation", &ctx)?;
            let Some(&calc) = self.calc_by_name.get(cname) else {
                return err(&ctx, format!("unknown calculation '{cname}'"));
            };
            let cond = match c.get("if_cond") {
                Some(e) if !e.is_null() => Some(self.expr(e, &ctx)?.0),
                _ => None,
            };
            self.p.checksums.push(Checksum {
                name: get_str(c, "name", &ctx)?.to_string(),
                target,
                calc,
                verify: c.get("verify").and_then(Value::as_bool).unwrap_or(true),
                update: c.get("update").and_then(Value::as_bool).unwrap_or(true),
                cond,
            });
        }
        Ok(())
    }
}

/// An exact or LPM table's key as plain fields of at most 64 bits together
/// (see [`TableDef::field_key`]), if it is one.
fn field_key(lookup: LookupKind, keys: &[TableKey]) -> Option<Box<[(FieldId, u32)]>> {
    if lookup == LookupKind::Ordered
        || keys.is_empty()
        || keys.iter().map(|k| k.width).sum::<u32>() > ExactIndex::PACKED_BITS
    {
        return None;
    }
    keys.iter()
        .map(|k| match (&k.expr, k.mask) {
            (Expr::Field(f), None) if k.width >= 1 => Some((*f, k.width)),
            _ => None,
        })
        .collect()
}
