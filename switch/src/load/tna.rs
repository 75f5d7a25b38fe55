//! What a TNA/T2NA gress adds to BMv2 JSON (compiler/README.md "TNA JSON"): the
//! intrinsic metadata the engine writes and reads, Tofino's CRC parameters,
//! extern instances, register actions, and the `_<Extern>_<method>` primitives.

use super::*;
use crate::externs::{ExternPrim, FilterDef, MathOp, MathUnitDef, RegisterActionDef, RegisterCell};
use crate::hash::Crc;

/// The CRC a `polynomial` object describes (compiler/README.md "TNA JSON",
/// `calculations`): `coeff` without its top term (with `msb` it may carry it),
/// `reversed` reflecting input bytes and result, `init` and final `xor`.
pub(super) fn crc_from_polynomial(poly: &Value, ctx: &str) -> R<Crc> {
    let width = get_u64(poly, "width", ctx)? as u32;
    if !(8..=64).contains(&width) {
        return err(
            ctx,
            format!("CRC width {width} is not supported (the engine's CRCs are 8 to 64 bits)"),
        );
    }
    let hex = |k: &str| -> R<u64> {
        Ok(hex_value(
            poly.get(k).unwrap_or(&Value::Null),
            &format!("{ctx} polynomial.{k}"),
        )? as u64)
    };
    let flag = |k: &str| poly.get(k).and_then(Value::as_bool).unwrap_or(false);
    if flag("extended") {
        return err(ctx, "extended CRC polynomials are not supported");
    }
    let wmask = mask(width) as u64;
    // With `msb` the coefficient spells the polynomial's top term too; the table
    // wants it without.
    let coeff = hex("coeff")? & wmask;
    let reversed = flag("reversed");
    Ok(Crc::new(
        width,
        coeff,
        hex("init")? & wmask,
        hex("xor")? & wmask,
        reversed,
        reversed,
    ))
}

/// An extern instance's attribute `name` as a number (None when absent).
fn attribute(x: &Value, name: &str, ctx: &str) -> R<Option<u128>> {
    match arr(x, "attribute_values")
        .iter()
        .find(|a| a.get("name").and_then(Value::as_str) == Some(name))
    {
        Some(a) => Ok(Some(hex_value(
            a.get("value").unwrap_or(&Value::Null),
            &format!("{ctx} attribute {name}"),
        )?)),
        None => Ok(None),
    }
}

/// An extern instance's attribute `name` as a string.
fn attribute_str<'a>(x: &'a Value, name: &str) -> Option<&'a str> {
    arr(x, "attribute_values")
        .iter()
        .find(|a| a.get("name").and_then(Value::as_str) == Some(name))
        .and_then(|a| a.get("value"))
        .and_then(Value::as_str)
}

/// The number the engine gives table `name`: its place in the gress's tables in
/// document order (as `pipelines` numbers them, later).
fn table_index(root: &Value, name: &str) -> Option<u32> {
    arr(root, "pipelines")
        .iter()
        .flat_map(|p| arr(p, "tables"))
        .position(|t| t.get("name").and_then(Value::as_str) == Some(name))
        .map(|i| i as u32)
}

/// A direct extern's `binding` (None: indexed, or no table names it).
fn binding(root: &Value, x: &Value, ctx: &str) -> R<Option<u32>> {
    match x.get("binding").and_then(Value::as_str) {
        None => Ok(None),
        Some(t) => table_index(root, t)
            .map(Some)
            .map_or_else(|| err(ctx, format!("binding: unknown table '{t}'")), Ok),
    }
}

impl Loader {
    /// Resolves the intrinsic-metadata fields the engine writes before a block and
    /// reads after it, from the gress's `intrinsic_metadata` list.
    pub(super) fn tna_meta(&mut self, root: &Value) -> R<()> {
        let mut by_role: HashMap<&str, &str> = HashMap::new();
        for (i, m) in arr(root, "intrinsic_metadata").iter().enumerate() {
            let ctx = obj_ctx("intrinsic_metadata", i, m);
            let name = get_str(m, "name", &ctx)?;
            let role = get_str(m, "role", &ctx)?;
            self.header(name, &ctx)?;
            by_role.insert(role, name);
        }
        let prepended_role = match self.p.kind {
            ProgramKind::TnaEgress => "egress",
            _ => "ingress",
        };
        let Some(&prepended) = by_role.get(prepended_role) else {
            return err(
                "intrinsic_metadata",
                format!("no '{prepended_role}' header (the metadata the target prepends)"),
            );
        };
        let f = |role: &str, field: &str| {
            by_role
                .get(role)
                .and_then(|h| self.p.field(&format!("{h}.{field}")))
        };
        let mut prepended_fields = [None; Prepended::ALL.len()];
        for (slot, field) in prepended_fields.iter_mut().zip(Prepended::ALL) {
            *slot = self.p.field(&format!("{prepended}.{}", field.name()));
        }
        self.p.tna = TnaMeta {
            prepended: Some(self.header(prepended, "intrinsic_metadata")?),
            prepended_fields,
            ucast_egress_port: f("to_tm", "ucast_egress_port"),
            qid: f("to_tm", "qid"),
            ingress_cos: f("to_tm", "ingress_cos"),
            bypass_egress: f("to_tm", "bypass_egress"),
            mcast_grp_a: f("to_tm", "mcast_grp_a"),
            mcast_grp_b: f("to_tm", "mcast_grp_b"),
            rid: f("to_tm", "rid"),
            deflect_on_drop: f("to_tm", "deflect_on_drop"),
            copy_to_cpu: f("to_tm", "copy_to_cpu"),
            packet_color: f("to_tm", "packet_color"),
            global_tstamp: f("from_parser", "global_tstamp"),
            parser_err: f("from_parser", "parser_err"),
            drop_ctl: f("to_deparser", "drop_ctl"),
            ghost_qid: f("ghost", "qid"),
            ghost_qlength: f("ghost", "qlength"),
            ghost_pipe_id: f("ghost", "pipe_id"),
            ghost_ping_pong: f("ghost", "ping_pong"),
            digest_type: f("to_deparser", "digest_type"),
            resubmit_type: f("to_deparser", "resubmit_type"),
            mirror_type: f("to_deparser", "mirror_type"),
        };
        Ok(())
    }

    /// A `crc` calculation's CRC, from its `polynomial` object.
    pub(super) fn tofino_crc(&mut self, c: &Value, ctx: &str) -> R<HashAlgo> {
        let Some(poly) = c.get("polynomial") else {
            return err(ctx, "a 'crc' calculation needs its 'polynomial'");
        };
        self.p.crcs.push(crc_from_polynomial(poly, ctx)?);
        Ok(HashAlgo::Crc(self.p.crcs.len() as u32 - 1))
    }

    /// A TNA calculation's `symmetric` pairs: positions of two field inputs of one
    /// width (a flow's two addresses or ports).
    pub(super) fn symmetric_pairs(
        &self,
        c: &Value,
        inputs: &[CalcInput],
        ctx: &str,
    ) -> R<Vec<(u16, u16)>> {
        let width = |k: u64| match inputs.get(k as usize) {
            Some(CalcInput::Field(f)) => Some(self.p.fields[*f as usize].width),
            _ => None,
        };
        arr(c, "symmetric")
            .iter()
            .map(|pair| {
                let ks: Vec<u64> = pair
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_u64).collect())
                    .unwrap_or_default();
                match ks[..] {
                    [a, b] if a != b && width(a).is_some() && width(a) == width(b) => {
                        Ok((a as u16, b as u16))
                    }
                    _ => err(
                        ctx,
                        format!("symmetric pair {pair} is not two field inputs of one width"),
                    ),
                }
            })
            .collect()
    }

    /// The bits of an ActionSelector's hash that choose a member: the low
    /// `output_width` bits of a TNA `Hash<W>`, all of them without it.
    pub(super) fn selector_mask(s: &Value, ctx: &str) -> R<u64> {
        match s.get("output_width") {
            None => Ok(u64::MAX),
            Some(_) => {
                let w = get_u64(s, "output_width", ctx)?;
                if !(1..=64).contains(&w) {
                    return err(ctx, format!("output_width {w} is outside 1..=64"));
                }
                Ok(mask(w as u32) as u64)
            }
        }
    }

    /// Loads one `Lpf`/`Wred` (or direct) instance.
    fn filter_def(&self, root: &Value, x: &Value, name: String, ctx: &str) -> R<FilterDef> {
        let direct = x
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.starts_with("Direct"));
        let width = attribute(x, "bitwidth", ctx)?.unwrap_or(32) as u32;
        if !(1..=128).contains(&width) {
            return err(ctx, format!("bitwidth {width} is outside 1..=128"));
        }
        let size = match attribute(x, "size", ctx)? {
            Some(n) => usize::try_from(n)
                .ok()
                .filter(|n| *n <= 1 << 24)
                .map_or_else(
                    || {
                        err(
                            ctx,
                            format!("size {n} is more than the engine keeps (2^24)"),
                        )
                    },
                    Ok,
                )?,
            None if direct => 0,
            None => return err(ctx, "an indexed instance needs its 'size'"),
        };
        let drop_values = (
            attribute(x, "drop_value", ctx)?.unwrap_or(1) as u8,
            attribute(x, "no_drop_value", ctx)?.unwrap_or(0) as u8,
        );
        // A direct instance no table names (run from an apply block) has one cell.
        let binding = if direct { binding(root, x, ctx)? } else { None };
        Ok(FilterDef {
            name,
            size: if direct && binding.is_none() { 1 } else { size },
            width,
            direct,
            binding,
            drop_values,
        })
    }

    /// Loads a `MathUnit` from its constructor arguments (`arg0` the operation,
    /// `arg1` the factor, or `arg1`/`arg2` as A/B).
    fn math_unit(x: &Value, name: String, ctx: &str) -> R<MathUnitDef> {
        let op = attribute_str(x, "arg0")
            .and_then(MathOp::from_name)
            .map_or_else(
                || {
                    err(
                        ctx,
                        "arg0 is not a MathOp_t (MUL, SQR, SQRT, DIV, RSQR, RSQRT)",
                    )
                },
                Ok,
            )?;
        let Some(a) = attribute(x, "arg1", ctx)? else {
            return err(ctx, "a MathUnit needs its factor (arg1)");
        };
        let factor = match attribute(x, "arg2", ctx)? {
            Some(0) => return err(ctx, "the factor's divisor (arg2) is 0"),
            Some(b) => a as f64 / b as f64,
            None => a as f64,
        };
        MathUnitDef::new(name, op, factor).map_or_else(|m| err(ctx, m), Ok)
    }

    /// Loads the gress's extern instances the engine keeps state for, and its register
    /// actions (after the registers and headers, before the actions that call them).
    pub(super) fn tna_externs(&mut self, root: &Value) -> R<()> {
        for (i, x) in arr(root, "extern_instances").iter().enumerate() {
            let ctx = obj_ctx("extern_instances", i, x);
            let name = get_str(x, "name", &ctx)?.to_string();
            match get_str(x, "type", &ctx)? {
                "Checksum" => self.p.externs.checksums.push(name),
                "ParserCounter" => self.p.externs.parser_counters.push(name),
                "Resubmit" => self.p.externs.resubmits = true,
                "Mirror" => self.p.externs.mirrors = true,
                "Lpf" | "DirectLpf" => {
                    let def = self.filter_def(root, x, name, &ctx)?;
                    self.p.externs.lpfs.push(def);
                }
                "Wred" | "DirectWred" => {
                    let def = self.filter_def(root, x, name, &ctx)?;
                    self.p.externs.wreds.push(def);
                }
                "MathUnit" => {
                    let def = Self::math_unit(x, name, &ctx)?;
                    self.p.externs.math_units.push(def);
                }
                "RegisterParam" => {
                    // A one-cell register: the register API reads and writes it at
                    // index 0, as BF Runtime's one-entry RegisterParam table does.
                    let width = attribute(x, "bitwidth", &ctx)?.unwrap_or(32) as u32;
                    if !(1..=128).contains(&width) {
                        return err(&ctx, format!("bitwidth {width} is outside 1..=128"));
                    }
                    let initial = attribute(x, "initial_value", &ctx)?.unwrap_or(0) & mask(width);
                    self.register_by_name
                        .insert(name.clone(), self.p.registers.len() as u32);
                    self.p.registers.push(RegisterDef {
                        name,
                        size: 1,
                        width,
                        initial,
                    });
                }
                _ => {}
            }
        }
        let mut direct_tables = vec![None; self.p.registers.len()];
        for (i, r) in arr(root, "register_arrays").iter().enumerate() {
            let ctx = obj_ctx("register_arrays", i, r);
            if r.get("is_direct").and_then(Value::as_bool) == Some(true) {
                let reg = self.register(get_str(r, "name", &ctx)?, &ctx)?;
                direct_tables[reg as usize] = binding(root, r, &ctx)?;
            }
        }
        self.p.externs.direct_register_tables = direct_tables;
        let mut defs = vec![];
        for (i, ra) in arr(root, "register_actions").iter().enumerate() {
            let ctx = obj_ctx("register_actions", i, ra);
            let name = get_str(ra, "name", &ctx)?.to_string();
            let kind = get_str(ra, "type", &ctx)?;
            if !matches!(
                kind,
                "RegisterAction" | "DirectRegisterAction" | "MinMaxAction"
            ) {
                return err(
                    &ctx,
                    format!(
                        "{kind} is not supported by the engine yet \
                         (RegisterAction, DirectRegisterAction and MinMaxAction are)"
                    ),
                );
            }
            let register = self.register(get_str(ra, "register", &ctx)?, &ctx)?;
            let binding = self.p.externs.direct_register_tables[register as usize];
            let value = arr(ra, "value")
                .iter()
                .map(|v| {
                    let (h, f) = self.field_pair(Some(v), &ctx)?;
                    let fid = self.field_id(&h, &f, &ctx)?;
                    Ok((fid, self.p.fields[fid as usize].width))
                })
                .collect::<R<Vec<_>>>()?;
            let cell: u32 = value.iter().map(|(_, w)| w).sum();
            if cell != self.p.registers[register as usize].width {
                return err(
                    &ctx,
                    format!(
                        "its value fields are {cell} bits, the register's cells {}",
                        self.p.registers[register as usize].width
                    ),
                );
            }
            let results = arr(ra, "results")
                .iter()
                .map(|v| {
                    let (h, f) = self.field_pair(Some(v), &ctx)?;
                    self.field_id(&h, &f, &ctx)
                })
                .collect::<R<Vec<_>>>()?;
            defs.push(RegisterActionDef {
                name,
                register,
                value,
                results,
                prims: vec![],
                overflow: None,
                underflow: None,
                binding,
            });
        }
        // Bodies may name register actions (`this.predicate` names its own), so every
        // name is known before any body loads.
        self.p.externs.register_actions = defs;
        for (i, ra) in arr(root, "register_actions").iter().enumerate() {
            let ctx = obj_ctx("register_actions", i, ra);
            let body = |key: &str| -> R<Option<Vec<Prim>>> {
                let Some(list) = ra.get(key).filter(|v| !v.is_null()) else {
                    return Ok(None);
                };
                let Some(list) = list.as_array() else {
                    return err(&ctx, format!("'{key}' is not a list of primitives"));
                };
                list.iter()
                    .enumerate()
                    .map(|(j, pr)| self.primitive(pr, &format!("{ctx} {key} {j}")))
                    .collect::<R<Vec<_>>>()
                    .map(Some)
            };
            let prims = body("primitives")?.unwrap_or_default();
            let overflow = body("overflow")?;
            let underflow = body("underflow")?;
            let def = &mut self.p.externs.register_actions[i];
            def.prims = prims;
            def.overflow = overflow;
            def.underflow = underflow;
        }
        Ok(())
    }

    fn extern_index(&self, v: &Value, names: &[String], what: &str, ctx: &str) -> R<u32> {
        if v.get("type").and_then(Value::as_str) != Some("extern") {
            return err(ctx, format!("expected the {what} instance operand"));
        }
        let name = v.get("value").and_then(Value::as_str).unwrap_or("");
        names
            .iter()
            .position(|n| n == name)
            .map(|i| i as u32)
            .map_or_else(|| err(ctx, format!("unknown {what} '{name}'")), Ok)
    }

    fn register_action_index(&self, v: &Value, ctx: &str) -> R<u32> {
        let name = v.get("value").and_then(Value::as_str).unwrap_or("");
        self.p
            .externs
            .register_actions
            .iter()
            .position(|r| r.name == name)
            .map(|i| i as u32)
            .map_or_else(|| err(ctx, format!("unknown register action '{name}'")), Ok)
    }

    fn field_operands(&self, params: &[Value], ctx: &str) -> R<Vec<FieldId>> {
        params
            .iter()
            .map(|v| {
                let (h, f) = self.field_pair(v.get("value"), ctx)?;
                self.field_id(&h, &f, ctx)
            })
            .collect()
    }

    /// A destination operand; a hexstr 0 means "unused" (the compiler's placeholder).
    fn optional_dest(&self, v: &Value, ctx: &str) -> R<Option<LValue>> {
        if v.get("type").and_then(Value::as_str) == Some("hexstr") {
            return Ok(None);
        }
        Ok(Some(self.lvalue(v, ctx)?))
    }

    /// Compiles a `_<Extern>_<method>` primitive of a TNA gress.
    pub(super) fn tna_primitive(&self, op: &str, params: &[Value], ctx: &str) -> R<Prim> {
        let p = |i: usize| -> R<&Value> {
            params
                .get(i)
                .map_or_else(|| err(ctx, format!("missing parameter {i}")), Ok)
        };
        let e = |i: usize| -> R<Expr> { Ok(self.expr(p(i)?, ctx)?.0) };
        let last = || -> R<LValue> { self.lvalue(p(params.len().max(1) - 1)?, ctx) };
        let checksum = || self.extern_index(p(0)?, &self.p.externs.checksums, "checksum", ctx);
        let counter = || {
            self.extern_index(
                p(0)?,
                &self.p.externs.parser_counters,
                "parser counter",
                ctx,
            )
        };
        let data = |from: usize, to: usize| -> R<Calculation> {
            let inputs = self.calc_inputs(params.get(from..to).unwrap_or(&[]), ctx)?;
            Ok(Calculation::new(
                &self.p,
                format!("{ctx} data"),
                HashAlgo::Csum16,
                inputs,
            ))
        };
        let x = match op {
            "_Checksum_add" | "_Checksum_subtract" => ExternPrim::ChecksumAdd {
                inst: checksum()?,
                data: data(1, params.len())?,
                negate: op == "_Checksum_subtract",
            },
            "_Checksum_verify" => ExternPrim::ChecksumVerify {
                inst: checksum()?,
                dest: last()?,
            },
            "_Checksum_get" => ExternPrim::ChecksumGet {
                inst: checksum()?,
                dest: last()?,
            },
            "_Checksum_subtract_all_and_deposit" => ExternPrim::ChecksumDeposit {
                inst: checksum()?,
                dest: last()?,
            },
            "_Checksum_update" => {
                if params.len() < 3 {
                    return err(
                        ctx,
                        "expects the instance, zeros_as_ones, fields and a destination",
                    );
                }
                ExternPrim::ChecksumUpdate {
                    data: data(2, params.len() - 1)?,
                    zeros_as_ones: hex_value(p(1)?, ctx)? != 0,
                    dest: last()?,
                }
            }
            "_RegisterAction_execute"
            | "_RegisterAction_execute_log"
            | "_DirectRegisterAction_execute"
            | "_RegisterAction_enqueue"
            | "_RegisterAction_dequeue"
            | "_RegisterAction_push"
            | "_RegisterAction_pop" => {
                let action = self.register_action_index(p(0)?, ctx)?;
                let at = match op {
                    "_RegisterAction_execute" => RegisterCell::Index(e(1)?),
                    "_RegisterAction_execute_log" => RegisterCell::Log,
                    "_RegisterAction_enqueue" => RegisterCell::Enqueue,
                    "_RegisterAction_dequeue" => RegisterCell::Dequeue,
                    "_RegisterAction_push" => RegisterCell::Push,
                    "_RegisterAction_pop" => RegisterCell::Pop,
                    _ => RegisterCell::Direct,
                };
                let first_dest = if matches!(at, RegisterCell::Index(_)) {
                    2
                } else {
                    1
                };
                let dests = params
                    .get(first_dest..)
                    .unwrap_or(&[])
                    .iter()
                    .map(|v| self.optional_dest(v, ctx))
                    .collect::<R<Vec<_>>>()?;
                ExternPrim::RegisterAction { action, at, dests }
            }
            "_Lpf_execute" | "_DirectLpf_execute" | "_Wred_execute" | "_DirectWred_execute" => {
                let lpf = op.ends_with("Lpf_execute");
                let defs = if lpf {
                    &self.p.externs.lpfs
                } else {
                    &self.p.externs.wreds
                };
                let names: Vec<String> = defs.iter().map(|d| d.name.clone()).collect();
                let inst =
                    self.extern_index(p(0)?, &names, if lpf { "Lpf" } else { "Wred" }, ctx)?;
                let direct = op.starts_with("_Direct");
                if direct != defs[inst as usize].direct {
                    let kind = op.trim_start_matches('_').trim_end_matches("_execute");
                    return err(
                        ctx,
                        format!("'{}' is not a {kind} instance", names[inst as usize]),
                    );
                }
                let (value, index) = if direct {
                    (e(1)?, None)
                } else {
                    (e(1)?, Some(e(2)?))
                };
                let dest = last()?;
                if lpf {
                    ExternPrim::Lpf {
                        inst,
                        value,
                        index,
                        dest,
                    }
                } else {
                    ExternPrim::Wred {
                        inst,
                        value,
                        index,
                        dest,
                    }
                }
            }
            "_MathUnit_execute" => {
                let names: Vec<String> = self
                    .p
                    .externs
                    .math_units
                    .iter()
                    .map(|m| m.name.clone())
                    .collect();
                ExternPrim::MathUnit {
                    unit: self.extern_index(p(0)?, &names, "MathUnit", ctx)?,
                    value: e(1)?,
                    dest: last()?,
                }
            }
            "_RegisterParam_read" => {
                let name = p(0)?.get("value").and_then(Value::as_str).unwrap_or("");
                return Ok(Prim::RegisterRead {
                    dest: last()?,
                    array: self.register(name, ctx)?,
                    index: Expr::Const(0),
                });
            }
            "_RegisterAction_address" => ExternPrim::Address(last()?),
            "_RegisterAction_min8"
            | "_RegisterAction_max8"
            | "_RegisterAction_min16"
            | "_RegisterAction_max16" => {
                if !(4..=5).contains(&params.len()) {
                    return err(
                        ctx,
                        "expects the instance, a value, a mask, a destination and an index",
                    );
                }
                ExternPrim::MinMax {
                    value: e(1)?,
                    mask: e(2)?,
                    lane: if op.ends_with("16") { 16 } else { 8 },
                    max: op.contains("_max"),
                    dest: self.lvalue(p(3)?, ctx)?,
                    index: match params.get(4) {
                        Some(v) => self.optional_dest(v, ctx)?,
                        None => None,
                    },
                }
            }
            "_RegisterAction_predicate" => {
                if params.len() < 3 {
                    return err(
                        ctx,
                        "expects the instance, 1 to 4 conditions and a destination",
                    );
                }
                ExternPrim::Predicate {
                    conds: (1..params.len() - 1).map(e).collect::<R<Vec<_>>>()?,
                    dest: last()?,
                }
            }
            "_ParserCounter_set" => ExternPrim::ParserCounterSet {
                inst: counter()?,
                value: e(1)?,
                shape: if params.len() >= 6 {
                    let k = |i: usize| -> R<u8> { Ok(hex_value(p(i)?, ctx)? as u8) };
                    Some(crate::externs::CounterShape {
                        max: k(2)?,
                        rotate: k(3)?,
                        mask: k(4)?,
                        add: k(5)?,
                    })
                } else {
                    None
                },
            },
            "_ParserCounter_push" => {
                // value[, update_with_top] or value, max, rotate, mask, add[, update_with_top]
                let shaped = params.len() >= 6;
                let shape = if shaped {
                    let k = |i: usize| -> R<u8> { Ok(hex_value(p(i)?, ctx)? as u8) };
                    Some(crate::externs::CounterShape {
                        max: k(2)?,
                        rotate: k(3)?,
                        mask: k(4)?,
                        add: k(5)?,
                    })
                } else {
                    None
                };
                let flag_at = if shaped { 6 } else { 2 };
                if params.len() > flag_at + 1 {
                    return err(ctx, "too many parameters for ParserCounter.push");
                }
                ExternPrim::ParserCounterPush {
                    inst: counter()?,
                    value: e(1)?,
                    shape,
                    update_with_top: if params.len() > flag_at {
                        Some(e(flag_at)?)
                    } else {
                        None
                    },
                }
            }
            "_ParserCounter_pop" => ExternPrim::ParserCounterPop(counter()?),
            "_ParserCounter_increment" | "_ParserCounter_decrement" => {
                ExternPrim::ParserCounterAdd {
                    inst: counter()?,
                    by: e(1)?,
                    negate: op == "_ParserCounter_decrement",
                }
            }
            "_ParserCounter_is_zero" | "_ParserCounter_is_negative" => {
                ExternPrim::ParserCounterTest {
                    inst: counter()?,
                    negative: op == "_ParserCounter_is_negative",
                    dest: last()?,
                }
            }
            "_ParserPriority_set" => ExternPrim::ParserPrioritySet(e(1)?),
            "_port_metadata_unpack" => {
                let bits = hex_value(p(0)?, ctx)? as u32;
                if !bits.is_multiple_of(8) {
                    return err(ctx, format!("{bits} bits is not whole bytes"));
                }
                let fields = self
                    .field_operands(params.get(1..).unwrap_or(&[]), ctx)?
                    .into_iter()
                    .map(|f| (f, self.p.fields[f as usize].width))
                    .collect();
                ExternPrim::PortMetadataUnpack { bits, fields }
            }
            "_invalidate" => ExternPrim::Invalidate(self.lvalue(p(0)?, ctx)?),
            "_Mirror_emit" => ExternPrim::MirrorEmit {
                session: e(1)?,
                header: self.field_operands(params.get(2..).unwrap_or(&[]), ctx)?,
            },
            "_Resubmit_emit" => ExternPrim::ResubmitEmit {
                header: self.field_operands(params.get(1..).unwrap_or(&[]), ctx)?,
            },
            "_Digest_pack" => ExternPrim::DigestPack(hex_value(p(1)?, ctx)? as u32),
            other => {
                return err(
                    ctx,
                    format!(
                        "the engine does not run '{other}' yet (switch/README.md, \"Externs\")"
                    ),
                )
            }
        };
        Ok(Prim::Extern(Box::new(x)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A `polynomial` object as the compiler writes it.
    fn poly(width: u32, coeff: &str, reversed: bool, init: &str, xor: &str) -> Value {
        json!({"width": width, "coeff": coeff, "reversed": reversed, "msb": false,
               "extended": false, "init": init, "xor": xor})
    }

    fn check(p: &Value) -> u64 {
        crc_from_polynomial(p, "test")
            .expect("loads")
            .compute(b"123456789")
    }

    #[test]
    fn tofinos_predefined_crcs_give_the_catalogue_check_values() {
        // compiler/README.md's CRC8/16/32/64 parameters; check values of "123456789"
        // from the CRC catalogue (CRC-8/SMBUS, CRC-16/ARC, CRC-32/ISO-HDLC,
        // CRC-64/ECMA-182).
        assert_eq!(check(&poly(8, "0x07", false, "0x00", "0x00")), 0xf4);
        assert_eq!(check(&poly(16, "0x8005", true, "0x0000", "0x0000")), 0xbb3d);
        assert_eq!(
            check(&poly(32, "0x04c11db7", true, "0xffffffff", "0xffffffff")),
            0xcbf4_3926
        );
        assert_eq!(
            check(&poly(64, "0x42f0e1eba9ea3693", false, "0x0", "0x0")),
            0x6c40_df5f_0b49_7347
        );
    }

    #[test]
    fn custom_polynomials_give_the_catalogue_check_values() {
        // CRC-32C (Castagnoli), the program hash_ecmp.p4's CRCPolynomial.
        assert_eq!(
            check(&poly(32, "0x1edc6f41", true, "0xffffffff", "0xffffffff")),
            0xe306_9283
        );
        // CRC-32/MPEG-2 (not reflected), CRC-16/DNP (reflected, final xor),
        // CRC-8/MAXIM-DOW (reflected), CRC-64/XZ (reflected, all ones).
        assert_eq!(
            check(&poly(32, "0x04c11db7", false, "0xffffffff", "0x0")),
            0x0376_e6e7
        );
        assert_eq!(check(&poly(16, "0x3d65", true, "0x0", "0xffff")), 0xea82);
        assert_eq!(check(&poly(8, "0x31", true, "0x0", "0x0")), 0xa1);
        assert_eq!(
            check(&poly(
                64,
                "0x42f0e1eba9ea3693",
                true,
                "0xffffffffffffffff",
                "0xffffffffffffffff"
            )),
            0x995d_c9bb_df19_39fa
        );
    }

    #[test]
    fn a_coefficient_with_its_top_term_is_the_same_crc() {
        let mut p = poly(32, "0x11edc6f41", true, "0xffffffff", "0xffffffff");
        p["msb"] = json!(true);
        assert_eq!(check(&p), 0xe306_9283);
    }

    #[test]
    fn unsupported_polynomials_are_refused() {
        let mut p = poly(32, "0x04c11db7", true, "0x0", "0x0");
        p["extended"] = json!(true);
        assert!(crc_from_polynomial(&p, "c").is_err());
        let p = poly(4, "0x3", false, "0x0", "0x0");
        let e = crc_from_polynomial(&p, "c").unwrap_err();
        assert!(format!("{e:?}").contains("8 to 64"), "{e:?}");
    }

    #[test]
    fn xor8_is_the_xor_of_the_bytes() {
        assert_eq!(crate::hash::xor8(b"123456789"), 0x31);
        assert_eq!(crate::hash::xor8(&[0xf0, 0x0f, 0xff]), 0);
    }
}
