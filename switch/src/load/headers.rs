//! Header types and header instances: field layouts, and lookups by name and JSON id.

use super::*;

impl Loader {
    /// Loads `header_types` (field layouts).
    pub(super) fn header_types(&mut self, root: &Value) -> R<()> {
        for (i, ht) in arr(root, "header_types").iter().enumerate() {
            let ctx = obj_ctx("header_types", i, ht);
            let name = get_str(ht, "name", &ctx)?.to_string();
            let mut fields = vec![];
            let mut varbits = 0;
            for (j, f) in arr(ht, "fields").iter().enumerate() {
                let fctx = format!("{ctx} field {j}");
                let Some(t) = f.as_array() else {
                    return err(&fctx, "field is not [name, width, signed]");
                };
                let fname = t
                    .first()
                    .and_then(Value::as_str)
                    .map_or_else(|| err(&fctx, "field name missing"), Ok)?;
                let width = match t.get(1) {
                    Some(Value::String(s)) if s == "*" => {
                        varbits += 1;
                        None
                    }
                    // Fields wider than 128 bits live as byte strings (see `wide`).
                    Some(Value::Number(n)) => match n.as_u64().map(u32::try_from) {
                        Some(Ok(w)) => Some(w),
                        _ => return err(&fctx, format!("'{fname}' has a bad width")),
                    },
                    _ => return err(&fctx, format!("'{fname}' has no width")),
                };
                let signed = match t.get(2) {
                    Some(Value::Bool(b)) => *b,
                    Some(Value::Number(n)) => n.as_u64() == Some(1),
                    _ => false,
                };
                fields.push((fname.to_string(), width, signed));
            }
            if varbits > 1 {
                return err(&ctx, "more than one variable-length field");
            }
            let max_length = ht
                .get("max_length")
                .and_then(Value::as_u64)
                .map(|v| v as u32);
            if varbits == 1 && max_length.is_none() {
                return err(&ctx, "variable-length field without 'max_length'");
            }
            self.header_types
                .insert(name, HeaderType { fields, max_length });
        }
        Ok(())
    }

    /// Loads header instances and gives every field its slot.
    pub(super) fn headers(&mut self, root: &Value) -> R<()> {
        for (i, h) in arr(root, "headers").iter().enumerate() {
            let ctx = obj_ctx("headers", i, h);
            let name = get_str(h, "name", &ctx)?.to_string();
            let tname = get_str(h, "header_type", &ctx)?;
            let Some(ht) = self.header_types.get(tname) else {
                return err(&ctx, format!("unknown header_type '{tname}'"));
            };
            let metadata = h.get("metadata").and_then(Value::as_bool).unwrap_or(false);
            let hid = self.p.headers.len() as HeaderId;
            let first = self.p.fields.len() as FieldId;
            let mut off = 0;
            let mut varbit = None;
            let wide_start = self.p.wide_bytes;
            for (j, (fname, width, signed)) in ht.fields.iter().enumerate() {
                let w = match width {
                    Some(w) => *w,
                    None => {
                        varbit = Some((j as u32, self.p.num_varbits));
                        self.p.num_varbits += 1;
                        ht.max_length.unwrap_or(0) * 8
                    }
                };
                let wide = (w > 128 && width.is_some()).then(|| {
                    let at = self.p.wide_bytes;
                    self.p.wide_bytes += w.div_ceil(8);
                    at
                });
                let full = format!("{name}.{fname}");
                self.p.field_by_name.insert(full.clone(), first + j as u32);
                self.p.fields.push(FieldInfo {
                    name: full,
                    width: if width.is_some() { w } else { 32 },
                    signed: *signed,
                    bit_offset: off,
                    header: hid,
                    wide,
                });
                if width.is_some() {
                    off += w;
                }
            }
            if let Some(id) = h.get("id").and_then(Value::as_u64) {
                self.header_json_ids.insert(id, hid);
            }
            if self.p.header_by_name.insert(name.clone(), hid).is_some() {
                return err(&ctx, "duplicate header instance name");
            }
            self.p.headers.push(HeaderInfo {
                name,
                first_field: first,
                num_fields: ht.fields.len() as u32,
                metadata,
                fixed_bits: off,
                varbit,
                varbit_max_bytes: ht.max_length.unwrap_or(0),
                union: None,
                wide_range: (wide_start, self.p.wide_bytes - wide_start),
                packed: false,
                native_emit: None,
                native_extract: None,
            });
            self.wire(hid);
        }
        Ok(())
    }

    /// Records header `h`'s fields' wire forms and whether it is packed.
    fn wire(&mut self, h: HeaderId) {
        let hi = &self.p.headers[h as usize];
        let mut packed = hi.fixed_bits.is_multiple_of(8);
        for f in hi.first_field..hi.first_field + hi.num_fields {
            let fi = &self.p.fields[f as usize];
            let kind = match (fi.wide, hi.varbit) {
                (Some(at), _) => WireKind::Wide(at),
                (None, Some((k, slot))) if hi.first_field + k == f => WireKind::Varbit(slot),
                _ => WireKind::Plain,
            };
            packed &= kind == WireKind::Plain && fi.bit_offset % 8 + fi.width <= 128;
            let high = (kind == WireKind::Plain && fi.width > 64).then(|| {
                self.p.num_high += 1;
                self.p.num_high - 1
            });
            self.p.wire.push(WireField {
                offset: fi.bit_offset,
                width: fi.width,
                kind,
                high,
            });
        }
        self.p.headers[h as usize].packed = packed;
    }

    /// The header instance named `name`.
    pub(super) fn header(&self, name: &str, ctx: &str) -> R<HeaderId> {
        self.p
            .header_by_name
            .get(name)
            .copied()
            .map_or_else(|| err(ctx, format!("unknown header '{name}'")), Ok)
    }

    /// Header instances listed by name under `key`.
    pub(super) fn header_ids(&self, v: &Value, key: &str, ctx: &str) -> R<Vec<HeaderId>> {
        arr(v, key)
            .iter()
            .map(|id| {
                let id = id
                    .as_u64()
                    .map_or_else(|| err(ctx, format!("bad id in '{key}'")), Ok)?;
                self.header_by_json_id(id, ctx)
            })
            .collect()
    }

    fn header_by_json_id(&self, id: u64, ctx: &str) -> R<HeaderId> {
        self.header_json_ids
            .get(&id)
            .copied()
            .map_or_else(|| err(ctx, format!("unknown header id {id}")), Ok)
    }
}
