//! What a TNA/T2NA gress adds to BMv2 JSON (compiler/README.md "TNA JSON"): the
//! intrinsic metadata the engine writes and reads, Tofino's CRC parameters,
//! extern instances, register actions, and the `_<Extern>_<method>` primitives.

use super::*;
use crate::externs::{ExternPrim, RegisterActionDef};

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
        let crc = crate::hash::Crc::new(
            width,
            coeff,
            hex("init")? & wmask,
            hex("xor")? & wmask,
            reversed,
            reversed,
        );
        self.p.crcs.push(crc);
        Ok(HashAlgo::Crc(self.p.crcs.len() as u32 - 1))
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
                _ => {}
            }
        }
        let mut defs = vec![];
        for (i, ra) in arr(root, "register_actions").iter().enumerate() {
            let ctx = obj_ctx("register_actions", i, ra);
            let name = get_str(ra, "name", &ctx)?.to_string();
            let kind = get_str(ra, "type", &ctx)?;
            if kind != "RegisterAction" {
                return err(
                    &ctx,
                    format!("{kind} is not supported by the engine yet (RegisterAction is)"),
                );
            }
            let register = self.register(get_str(ra, "register", &ctx)?, &ctx)?;
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
            });
        }
        // Bodies may name register actions (`this.predicate` names its own), so every
        // name is known before any body loads.
        self.p.externs.register_actions = defs;
        for (i, ra) in arr(root, "register_actions").iter().enumerate() {
            let ctx = obj_ctx("register_actions", i, ra);
            let prims = arr(ra, "primitives")
                .iter()
                .enumerate()
                .map(|(j, pr)| self.primitive(pr, &format!("{ctx} primitive {j}")))
                .collect::<R<Vec<_>>>()?;
            self.p.externs.register_actions[i].prims = prims;
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
            "_RegisterAction_execute" | "_RegisterAction_execute_log" => {
                let action = self.register_action_index(p(0)?, ctx)?;
                let logged = op == "_RegisterAction_execute_log";
                let index = if logged { None } else { Some(e(1)?) };
                let first_dest = if logged { 1 } else { 2 };
                let dests = params
                    .get(first_dest..)
                    .unwrap_or(&[])
                    .iter()
                    .map(|v| self.optional_dest(v, ctx))
                    .collect::<R<Vec<_>>>()?;
                ExternPrim::RegisterAction {
                    action,
                    index,
                    dests,
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
                    format!("the engine does not run '{other}' yet (see switch/README.md, TNA)"),
                )
            }
        };
        Ok(Prim::Extern(Box::new(x)))
    }
}
