//! What pipelines refer to: header stacks and unions, aliases, error codes, standard
//! metadata, stateful arrays, calculations and field lists.

use super::*;

impl Loader {
    /// Loads header stacks, header unions and union stacks.
    pub(super) fn stacks_and_unions(&mut self, root: &Value) -> R<()> {
        for (i, s) in arr(root, "header_stacks").iter().enumerate() {
            let ctx = obj_ctx("header_stacks", i, s);
            let name = get_str(s, "name", &ctx)?.to_string();
            let headers = self.header_ids(s, "header_ids", &ctx)?;
            if headers.is_empty() {
                return err(&ctx, "stack without elements");
            }
            self.stack_by_name
                .insert(name.clone(), self.p.stacks.len() as u32);
            self.p.stacks.push(StackInfo { name, headers });
        }
        for (i, u) in arr(root, "header_unions").iter().enumerate() {
            let ctx = obj_ctx("header_unions", i, u);
            let name = get_str(u, "name", &ctx)?.to_string();
            let headers = self.header_ids(u, "header_ids", &ctx)?;
            let uid = self.p.unions.len() as u32;
            for &h in &headers {
                self.p.headers[h as usize].union = Some(uid);
            }
            if let Some(id) = u.get("id").and_then(Value::as_u64) {
                self.union_json_ids.insert(id, uid);
            }
            self.union_by_name.insert(name.clone(), uid);
            self.p.unions.push(UnionInfo { name, headers });
        }
        for (i, us) in arr(root, "header_union_stacks").iter().enumerate() {
            let ctx = obj_ctx("header_union_stacks", i, us);
            let name = get_str(us, "name", &ctx)?.to_string();
            let unions = arr(us, "header_union_ids")
                .iter()
                .map(|id| {
                    id.as_u64()
                        .and_then(|id| self.union_json_ids.get(&id).copied())
                        .map_or_else(|| err(&ctx, format!("unknown union id {id}")), Ok)
                })
                .collect::<R<Vec<u32>>>()?;
            self.ustack_by_name
                .insert(name.clone(), self.p.union_stacks.len() as u32);
            self.p.union_stacks.push(UnionStackInfo { name, unions });
        }
        Ok(())
    }

    /// Loads `field_aliases` (simple_switch's names for intrinsic metadata).
    pub(super) fn aliases(&mut self, root: &Value) -> R<()> {
        for (i, a) in arr(root, "field_aliases").iter().enumerate() {
            let ctx = format!("field_aliases[{i}]");
            let (Some(alias), Some(target)) = (
                a.get(0).and_then(Value::as_str),
                a.get(1).and_then(Value::as_array),
            ) else {
                return err(&ctx, "expected [alias, [header, field]]");
            };
            let h = target.first().and_then(Value::as_str).unwrap_or("");
            let f = target.get(1).and_then(Value::as_str).unwrap_or("");
            let Some(fid) = self.p.field(&format!("{h}.{f}")) else {
                return err(
                    &ctx,
                    format!("alias '{alias}' targets unknown field '{h}.{f}'"),
                );
            };
            self.p.field_by_name.insert(alias.to_string(), fid);
        }
        Ok(())
    }

    /// Loads the `errors` section (error codes by name).
    pub(super) fn errors(&mut self, root: &Value) -> R<()> {
        for (i, e) in arr(root, "errors").iter().enumerate() {
            let ctx = format!("errors[{i}]");
            let (Some(name), Some(v)) = (
                e.get(0).and_then(Value::as_str),
                e.get(1).and_then(Value::as_u64),
            ) else {
                return err(&ctx, "expected [name, value]");
            };
            self.p.errors.push((name.to_string(), v as u32));
        }
        let code = |p: &Program, n: &str, d: u32| {
            p.errors.iter().find(|(e, _)| e == n).map_or(d, |(_, v)| *v)
        };
        self.p.error_codes = ErrorCodes {
            packet_too_short: code(&self.p, "PacketTooShort", 1),
            stack_out_of_bounds: code(&self.p, "StackOutOfBounds", 3),
            header_too_short: code(&self.p, "HeaderTooShort", 4),
            parser_invalid_argument: code(&self.p, "ParserInvalidArgument", 6),
        };
        Ok(())
    }

    /// Checks and records the standard-metadata fields the engine itself reads and writes.
    pub(super) fn std_meta(&mut self) -> R<()> {
        let req = |p: &Program, n: &str| {
            p.field(&format!("standard_metadata.{n}")).map_or_else(
                || {
                    err(
                        "standard_metadata",
                        format!("required field '{n}' is missing"),
                    )
                },
                Ok,
            )
        };
        let opt = |p: &Program, names: &[&str]| names.iter().find_map(|n| p.field(n));
        let p = &self.p;
        let ingress_port = req(p, "ingress_port")?;
        self.p.std = StdMeta {
            header: p.fields[ingress_port as usize].header,
            ingress_port,
            egress_spec: req(p, "egress_spec")?,
            egress_port: req(p, "egress_port")?,
            instance_type: req(p, "instance_type")?,
            packet_length: req(p, "packet_length")?,
            enq_timestamp: opt(
                p,
                &[
                    "queueing_metadata.enq_timestamp",
                    "standard_metadata.enq_timestamp",
                ],
            ),
            enq_qdepth: opt(
                p,
                &[
                    "queueing_metadata.enq_qdepth",
                    "standard_metadata.enq_qdepth",
                ],
            ),
            deq_timedelta: opt(
                p,
                &[
                    "queueing_metadata.deq_timedelta",
                    "standard_metadata.deq_timedelta",
                ],
            ),
            deq_qdepth: opt(
                p,
                &[
                    "queueing_metadata.deq_qdepth",
                    "standard_metadata.deq_qdepth",
                ],
            ),
            ingress_global_timestamp: opt(
                p,
                &[
                    "intrinsic_metadata.ingress_global_timestamp",
                    "standard_metadata.ingress_global_timestamp",
                ],
            ),
            egress_global_timestamp: opt(
                p,
                &[
                    "intrinsic_metadata.egress_global_timestamp",
                    "standard_metadata.egress_global_timestamp",
                ],
            ),
            mcast_grp: opt(
                p,
                &[
                    "intrinsic_metadata.mcast_grp",
                    "standard_metadata.mcast_grp",
                ],
            ),
            egress_rid: opt(
                p,
                &[
                    "intrinsic_metadata.egress_rid",
                    "standard_metadata.egress_rid",
                ],
            ),
            checksum_error: opt(p, &["standard_metadata.checksum_error"]),
            parser_error: opt(p, &["standard_metadata.parser_error"]),
            priority: opt(
                p,
                &["intrinsic_metadata.priority", "standard_metadata.priority"],
            ),
            qid: opt(p, &["queueing_metadata.qid"]),
        };
        // The engine writes these fields per packet straight into their
        // 64-bit slots (`Phv::put`).
        let s = self.p.std;
        let required = [
            s.ingress_port,
            s.egress_spec,
            s.egress_port,
            s.instance_type,
            s.packet_length,
        ];
        let optional = [
            s.enq_timestamp,
            s.enq_qdepth,
            s.deq_timedelta,
            s.deq_qdepth,
            s.ingress_global_timestamp,
            s.egress_global_timestamp,
            s.mcast_grp,
            s.egress_rid,
            s.checksum_error,
            s.parser_error,
            s.priority,
            s.qid,
        ];
        for f in required.into_iter().chain(optional.into_iter().flatten()) {
            let info = &self.p.fields[f as usize];
            if info.width > 64 {
                return err(
                    "standard_metadata",
                    format!(
                        "field '{}' is {} bits wide; the engine's standard metadata fields are at most 64 bits",
                        info.name, info.width
                    ),
                );
            }
        }
        self.p.std_slots = StdSlots::of(&self.p);
        Ok(())
    }

    /// Loads register, counter and meter arrays.
    pub(super) fn stateful(&mut self, root: &Value) -> R<()> {
        for (i, r) in arr(root, "register_arrays").iter().enumerate() {
            let ctx = obj_ctx("register_arrays", i, r);
            let name = get_str(r, "name", &ctx)?.to_string();
            let size = array_size(get_u64(r, "size", &ctx)?, &ctx)?;
            let width = get_u64(r, "bitwidth", &ctx)? as u32;
            if width > 128 {
                return err(&ctx, "registers wider than 128 bits are not supported");
            }
            self.register_by_name
                .insert(name.clone(), self.p.registers.len() as u32);
            let initial = match r.get("initial_value") {
                Some(v) => hex_value(v, &ctx)? & mask(width),
                None => 0,
            };
            self.p.registers.push(RegisterDef {
                name,
                size,
                width,
                initial,
            });
        }
        for (i, c) in arr(root, "counter_arrays").iter().enumerate() {
            let ctx = obj_ctx("counter_arrays", i, c);
            let name = get_str(c, "name", &ctx)?.to_string();
            let direct = c.get("is_direct").and_then(Value::as_bool).unwrap_or(false);
            let size = if direct {
                0
            } else {
                array_size(get_u64(c, "size", &ctx)?, &ctx)?
            };
            self.counter_by_name
                .insert(name.clone(), self.p.counters.len() as u32);
            self.p.counters.push(CounterDef {
                name,
                size,
                direct_table: None,
            });
        }
        for (i, m) in arr(root, "meter_arrays").iter().enumerate() {
            let ctx = obj_ctx("meter_arrays", i, m);
            let name = get_str(m, "name", &ctx)?.to_string();
            let bytes = match m.get("type").and_then(Value::as_str) {
                Some("bytes") => true,
                Some("packets") => false,
                _ => {
                    let given = m.get("type").map_or("nothing".into(), Value::to_string);
                    return err(
                        &ctx,
                        format!("meter type {given} is neither \"bytes\" nor \"packets\""),
                    );
                }
            };
            let rate_count = m.get("rate_count").and_then(Value::as_u64).unwrap_or(2) as usize;
            if rate_count != 2 {
                return err(
                    &ctx,
                    format!("rate_count {rate_count} is not supported (v1model meters have 2)"),
                );
            }
            let size = array_size(m.get("size").and_then(Value::as_u64).unwrap_or(0), &ctx)?;
            self.meter_by_name
                .insert(name.clone(), self.p.meters.len() as u32);
            self.p.meters.push(MeterDef {
                name,
                size,
                bytes,
                rate_count,
                direct_table: None,
            });
        }
        Ok(())
    }

    /// Resolves the inputs of a calculation or checksum.
    pub(super) fn calc_inputs(&self, inputs: &[Value], ctx: &str) -> R<Vec<CalcInput>> {
        inputs
            .iter()
            .enumerate()
            .map(|(j, inp)| {
                let ictx = format!("{ctx} input {j}");
                match inp.get("type").and_then(Value::as_str) {
                    Some("field") => {
                        let (h, f) = self.field_pair(inp.get("value"), &ictx)?;
                        if f == "$valid$" {
                            return err(&ictx, "validity bits cannot be hashed");
                        }
                        Ok(CalcInput::Field(self.field_id(&h, &f, &ictx)?))
                    }
                    Some("hexstr") => {
                        let v = hex_value(inp.get("value").unwrap_or(&Value::Null), &ictx)?;
                        let w = inp.get("bitwidth").and_then(Value::as_u64).map_or_else(
                            || {
                                let s = inp.get("value").and_then(Value::as_str).unwrap_or("");
                                crate::bits::hexstr_nbytes(s) as u32 * 8
                            },
                            |w| w as u32,
                        );
                        Ok(CalcInput::Const(v & mask(w), w))
                    }
                    Some("header") => {
                        let h = inp.get("value").and_then(Value::as_str).unwrap_or("");
                        Ok(CalcInput::Header(self.header(h, &ictx)?))
                    }
                    Some("payload") => Ok(CalcInput::Payload),
                    other => err(
                        &ictx,
                        format!("unsupported calculation input type {other:?}"),
                    ),
                }
            })
            .collect()
    }

    /// The hash algorithm named `name`.
    pub(super) fn algo(name: &str, ctx: &str) -> R<HashAlgo> {
        Ok(match name {
            "crc16" => HashAlgo::Crc16,
            "crc32" => HashAlgo::Crc32,
            "crc16_custom" => HashAlgo::Crc16Custom,
            "crc32_custom" => HashAlgo::Crc32Custom,
            "csum16" | "cksum16" => HashAlgo::Csum16,
            "xor16" => HashAlgo::Xor16,
            "identity" => HashAlgo::Identity,
            "random" => HashAlgo::Random,
            "crcCCITT" => HashAlgo::CrcCcitt,
            "xor32" => HashAlgo::Xor32,
            "round_robin" => HashAlgo::RoundRobin,
            _ => return err(ctx, format!("unsupported hash algorithm '{name}'")),
        })
    }

    /// Loads `calculations` (hashes and checksums).
    pub(super) fn calculations(&mut self, root: &Value) -> R<()> {
        for (i, c) in arr(root, "calculations").iter().enumerate() {
            let ctx = obj_ctx("calculations", i, c);
            let name = get_str(c, "name", &ctx)?.to_string();
            let algo = match get_str(c, "algo", &ctx)? {
                "crc" if self.p.kind != ProgramKind::V1model => self.tofino_crc(c, &ctx)?,
                // TNA's XOR8, which BMv2 does not have.
                "xor8" if self.p.kind != ProgramKind::V1model => HashAlgo::Xor8,
                name => Self::algo(name, &ctx)?,
            };
            let inputs = self.calc_inputs(arr(c, "input"), &ctx)?;
            self.calc_by_name
                .insert(name.clone(), self.p.calculations.len() as u32);
            let mut calc = Calculation::new(&self.p, name, algo, inputs);
            if self.p.kind != ProgramKind::V1model {
                calc.symmetric = self.symmetric_pairs(c, &calc.inputs, &ctx)?;
                if !calc.symmetric.is_empty() {
                    calc.packed = None;
                }
            }
            self.p.calculations.push(calc);
        }
        Ok(())
    }

    /// Loads `field_lists` and `learn_lists`.
    pub(super) fn field_lists(&mut self, root: &Value) -> R<()> {
        for (section, learn) in [("field_lists", false), ("learn_lists", true)] {
            for (i, fl) in arr(root, section).iter().enumerate() {
                let ctx = obj_ctx(section, i, fl);
                let id = get_u64(fl, "id", &ctx)? as u32;
                let name = fl
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let mut fields = vec![];
                for (j, e) in arr(fl, "elements").iter().enumerate() {
                    let ectx = format!("{ctx} element {j}");
                    if e.get("type").and_then(Value::as_str) != Some("field") {
                        return err(&ectx, "only field elements are supported");
                    }
                    let (h, f) = self.field_pair(e.get("value"), &ectx)?;
                    let fid = self.field_id(&h, &f, &ectx)?;
                    fields.push(self.narrow_field(fid, "a field list", &ectx)?);
                }
                let list = FieldList { name, fields };
                if learn {
                    self.p.learn_lists.insert(id, list);
                } else {
                    self.p.field_lists.insert(id, list);
                }
            }
        }
        Ok(())
    }

    /// A `[header, field]` pair of names.
    pub(super) fn field_pair(&self, v: Option<&Value>, ctx: &str) -> R<(String, String)> {
        let a = v.and_then(Value::as_array);
        match a.map(|a| {
            (
                a.first().and_then(Value::as_str),
                a.get(1).and_then(Value::as_str),
            )
        }) {
            Some((Some(h), Some(f))) => Ok((h.to_string(), f.to_string())),
            _ => err(ctx, "expected a field reference [header, field]"),
        }
    }

    /// The field `h.f`.
    pub(super) fn field_id(&self, h: &str, f: &str, ctx: &str) -> R<FieldId> {
        let full = format!("{h}.{f}");
        self.p
            .field(&full)
            .map_or_else(|| err(ctx, format!("unknown field '{full}'")), Ok)
    }

    /// The header stack named `name`.
    pub(super) fn stack(&self, name: &str, ctx: &str) -> R<u32> {
        self.stack_by_name
            .get(name)
            .copied()
            .map_or_else(|| err(ctx, format!("unknown header stack '{name}'")), Ok)
    }

    /// A field's offset in a stack's element type, its width and signedness.
    pub(super) fn stack_field_offset(&self, stack: u32, f: &str, ctx: &str) -> R<(u32, u32, bool)> {
        let h0 = &self.p.headers[self.p.stacks[stack as usize].headers[0] as usize];
        for k in 0..h0.num_fields {
            let fi = &self.p.fields[(h0.first_field + k) as usize];
            if fi.name.len() == h0.name.len() + 1 + f.len() && fi.name.ends_with(f) {
                return Ok((k, fi.width, fi.signed));
            }
        }
        err(
            ctx,
            format!(
                "stack '{}' has no field '{f}'",
                self.p.stacks[stack as usize].name
            ),
        )
    }
}
