//! Values wider than 128 bits at load time: the operations the engine runs
//! on them (`==`, `!=`, assignment from a field or constant; extract, emit
//! and exact, ternary and optional table keys elsewhere) compile to [`WideOperand`]s, and every other
//! use is refused here with the operation and the width, since evaluating
//! it on a `u128` would silently truncate.

use super::*;

/// A type-value object with its `{"type": "expression", "value": …}` wrappers removed.
fn unwrap_expr(v: &Value) -> &Value {
    let mut v = v;
    while v.get("type").and_then(Value::as_str) == Some("expression") {
        match v.get("value") {
            Some(inner) if inner.get("type").is_some() => v = inner,
            _ => break,
        }
    }
    v
}

impl Loader {
    /// The field a `field` operand names, if it is wider than 128 bits.
    fn wide_field(&self, v: &Value) -> Option<FieldId> {
        let v = unwrap_expr(v);
        if v.get("type").and_then(Value::as_str) != Some("field") {
            return None;
        }
        let (h, f) = self.field_pair(v.get("value"), "").ok()?;
        let fid = self.p.field(&format!("{h}.{f}"))?;
        self.p.fields[fid as usize].wide.map(|_| fid)
    }

    /// Name and width of an operand wider than 128 bits (a field or a constant).
    pub(super) fn wide_desc(&self, v: &Value) -> Option<(String, u32)> {
        if let Some(f) = self.wide_field(v) {
            let fi = &self.p.fields[f as usize];
            return Some((format!("'{}'", fi.name), fi.width));
        }
        let v = unwrap_expr(v);
        if v.get("type").and_then(Value::as_str) != Some("hexstr") {
            return None;
        }
        let s = v.get("value").and_then(Value::as_str)?;
        let digits = s.trim_start_matches("0x").trim_start_matches('0');
        let bits = (digits.len() as u32) * 4;
        (parse_hexstr(s).is_none() && bits > 128).then(|| (format!("constant {s}"), bits))
    }

    /// Refuses operator `op` of expression node `v` if an operand is wider than 128 bits.
    pub(super) fn refuse_wide_operands(&self, v: &Value, op: &str, ctx: &str) -> R<()> {
        for key in ["left", "right", "cond"] {
            if let Some((what, w)) = v.get(key).and_then(|x| self.wide_desc(x)) {
                return err(
                    ctx,
                    format!(
                        "operation '{op}' on {what} ({w} bits) is not supported: \
                         the engine computes on values up to 128 bits"
                    ),
                );
            }
        }
        Ok(())
    }

    /// The error for a wide field used where only values up to 128 bits work.
    pub(super) fn wide_use_error<T>(&self, f: FieldId, what: &str, ctx: &str) -> R<T> {
        let fi = &self.p.fields[f as usize];
        err(
            ctx,
            format!(
                "'{}' is {} bits wide; {what} is not supported on values wider than 128 bits \
                 (only ==, !=, assignment, exact, ternary and optional table keys, extract \
                 and emit are)",
                fi.name, fi.width
            ),
        )
    }

    /// `f`, refused if it is wider than 128 bits (`what` names its use).
    pub(super) fn narrow_field(&self, f: FieldId, what: &str, ctx: &str) -> R<FieldId> {
        match self.p.fields[f as usize].wide {
            Some(_) => self.wide_use_error(f, what, ctx),
            None => Ok(f),
        }
    }

    /// An operand of a wide operation; constants are `nbytes` long and must fit `width` bits.
    fn wide_operand(&self, v: &Value, width: u32, ctx: &str) -> R<WideOperand> {
        if let Some(f) = self.wide_field(v) {
            let fi = &self.p.fields[f as usize];
            let at = fi.wide.unwrap_or(0);
            return Ok(WideOperand::Field {
                at,
                len: fi.width.div_ceil(8),
            });
        }
        let u = unwrap_expr(v);
        if u.get("type").and_then(Value::as_str) == Some("hexstr") {
            let s = u.get("value").and_then(Value::as_str).unwrap_or("");
            if s.starts_with('-') {
                return err(ctx, format!("negative constant {s} wider than 128 bits"));
            }
            let bytes = hex_bytes(s, width.div_ceil(8) as usize, ctx)?;
            let spare = 8 * bytes.len() as u32 - width;
            if bytes
                .first()
                .is_some_and(|&b| u32::from(b) >> (8 - spare) != 0)
            {
                return err(ctx, format!("constant {s} does not fit in {width} bits"));
            }
            return Ok(WideOperand::Const(bytes.into_boxed_slice()));
        }
        Ok(WideOperand::Narrow(self.expr(v, ctx)?.0))
    }

    /// `l == r` (or `!=`) when an operand is wider than 128 bits, else `None`.
    pub(super) fn wide_eq(&self, l: &Value, r: &Value, ne: bool, ctx: &str) -> R<Option<Expr>> {
        let width = match (self.wide_desc(l), self.wide_desc(r)) {
            (Some((_, a)), Some((_, b))) => a.max(b),
            (Some((_, w)), None) | (None, Some((_, w))) => w,
            (None, None) => return Ok(None),
        };
        let ops = (
            self.wide_operand(l, width, ctx)?,
            self.wide_operand(r, width, ctx)?,
        );
        let eq = Expr::WideEq(Box::new(ops));
        Ok(Some(if ne { Expr::Not(Box::new(eq)) } else { eq }))
    }

    /// `dst = src` when `dst` is a field wider than 128 bits, else `None`.
    pub(super) fn wide_assign(&self, dst: &Value, src: &Value, ctx: &str) -> R<Option<Prim>> {
        let Some(d) = self.wide_field(dst) else {
            return Ok(None);
        };
        let fi = &self.p.fields[d as usize];
        let (at, width) = (fi.wide.unwrap_or(0), fi.width);
        if let Some(s) = self.wide_field(src) {
            let sw = self.p.fields[s as usize].width;
            if sw != width {
                return err(
                    ctx,
                    format!(
                        "assignment of a {sw}-bit field to the {width}-bit '{}' \
                         (values wider than 128 bits are copied between equal widths only)",
                        fi.name
                    ),
                );
            }
        }
        Ok(Some(Prim::AssignWide(WideAssign {
            at,
            len: width.div_ceil(8),
            width,
            src: self.wide_operand(src, width, ctx)?,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // Compiled by bufferlab-p4c from tests/p4/wide_field.p4.
    const WIDE: &str = include_str!("../../../tests/engine/fixtures/wide_field.json");

    /// Index of `I.set_big` (`a.big = <336-bit constant>`) in the fixture's actions.
    const SET_BIG: usize = 1;

    /// The fixture changed by `edit` (mostly action `SET_BIG`), loaded; returns the error message.
    fn load_error(edit: impl FnOnce(&mut Value)) -> String {
        let mut v: Value = serde_json::from_str(WIDE).unwrap();
        edit(&mut v);
        match load(&v.to_string()) {
            Ok(_) => panic!("the edited program loaded"),
            Err(e) => e.0,
        }
    }

    fn field(f: &str) -> Value {
        let (h, f) = f.split_once('.').unwrap();
        json!({"type": "field", "value": [h, f]})
    }

    fn op(o: &str, l: Value, r: Value) -> Value {
        json!({"type": "expression", "value": {"op": o, "left": l, "right": r}})
    }

    /// Makes `I.set_big` assign `src` to `dst`; an operator operand is wrapped once more,
    /// as BMv2 takes expressions among a primitive's parameters.
    fn set_source(v: &mut Value, dst: Value, src: Value) {
        let src = if src["type"] == "expression" {
            json!({"type": "expression", "value": src})
        } else {
            src
        };
        v["actions"][SET_BIG]["primitives"][0]["parameters"] = json!([dst, src]);
    }

    #[test]
    fn wide_fields_load_with_their_bytes() {
        let p = load(WIDE).unwrap();
        let big = &p.fields[p.field("a.big").unwrap() as usize];
        assert_eq!((big.width, big.wide), (336, Some(42)));
        let a = &p.headers[p.header_by_name["a"] as usize];
        assert_eq!((a.wide_range, a.fixed_bits), ((42, 42), 344));
        // scalars (meta.saved), a and b: 42 bytes each.
        assert_eq!(p.wide_bytes, 126);
    }

    #[test]
    fn arithmetic_shifts_and_slices_on_wide_values_are_refused() {
        for o in ["+", ">>", "&", "<"] {
            let e = load_error(|v| {
                let src = op(
                    o,
                    field("a.big"),
                    json!({"type": "hexstr", "value": "0x08"}),
                );
                set_source(v, field("a.big"), src);
            });
            assert!(
                e.contains(&format!("operation '{o}' on 'a.big' (336 bits)")),
                "{e}"
            );
            assert!(e.starts_with("actions[1] 'I.set_big' primitive 0"), "{e}");
        }
    }

    #[test]
    fn wide_values_as_narrow_operands_are_refused() {
        let e = load_error(|v| set_source(v, field("a.x"), field("a.big")));
        assert!(e.contains("'a.big' is 336 bits wide; this use"), "{e}");
        let e = load_error(|v| {
            let k = "0x0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20";
            set_source(v, field("a.x"), json!({"type": "hexstr", "value": k}));
        });
        assert!(e.contains("is wider than 128 bits"), "{e}");
        let e = load_error(|v| {
            set_source(v, field("b.big"), field("scalars.userMetadata.saved"));
            v["header_types"][0]["fields"][0][1] = json!(200);
        });
        assert!(
            e.contains("assignment of a 200-bit field to the 336-bit 'b.big'"),
            "{e}"
        );
    }

    #[test]
    fn wide_keys_parameters_and_constants_that_overflow_are_refused() {
        let e = load_error(|v| {
            let t = &mut v["pipelines"][0]["tables"][0];
            t["key"] = json!([{"match_type": "lpm", "name": "k", "target": ["a", "big"]}]);
        });
        assert!(
            e.contains("'a.big' is 336 bits wide; an lpm table key"),
            "{e}"
        );
        let e = load_error(|v| {
            let t = &mut v["pipelines"][0]["tables"][0];
            let k =
                json!({"match_type": "exact", "name": "k", "target": ["a", "big"], "mask": "0x01"});
            t["key"] = json!([k]);
        });
        assert!(
            e.contains("'a.big' is 336 bits wide; a masked table key"),
            "{e}"
        );
        let e = load_error(|v| {
            v["actions"][SET_BIG]["runtime_data"] = json!([{"name": "p", "bitwidth": 336}]);
        });
        assert!(e.contains("parameter 'p' is 336 bits wide"), "{e}");
        let e = load_error(|v| {
            let k = format!("0x01{}", "00".repeat(42));
            set_source(v, field("a.big"), json!({"type": "hexstr", "value": k}));
        });
        assert!(e.contains("does not fit in 42 bytes"), "{e}");
    }
}
