//! BMv2 JSON loader: turns p4c's JSON (format 2.x) into a [`Program`] with
//! every name resolved. Errors name the JSON object and the reason.

use std::collections::HashMap;

use serde_json::Value;

use crate::bits::{mask, parse_hexstr};
use crate::error::LoadError;
use crate::program::*;
use crate::tables::MatchValue;

type R<T> = Result<T, LoadError>;

fn err<T>(ctx: &str, msg: impl AsRef<str>) -> R<T> {
    Err(LoadError(format!("{ctx}: {}", msg.as_ref())))
}

fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The format's array sections, in the order BMv2's docs list them.
const ARRAY_SECTIONS: [&str; 23] = [
    "header_types",
    "headers",
    "header_stacks",
    "header_union_types",
    "header_unions",
    "header_union_stacks",
    "field_lists",
    "errors",
    "enums",
    "parsers",
    "parse_vsets",
    "deparsers",
    "meter_arrays",
    "counter_arrays",
    "register_arrays",
    "calculations",
    "learn_lists",
    "actions",
    "pipelines",
    "checksums",
    "force_arith",
    "extern_instances",
    "field_aliases",
];

/// Refuses a section of the wrong JSON type: `arr` would read it as empty, and a program
/// missing its tables or counters must not load as if it had none.
fn check_section_types(root: &Value) -> R<()> {
    for key in ARRAY_SECTIONS {
        match root.get(key) {
            None | Some(Value::Array(_)) => {}
            Some(v) => return err(key, format!("expected an array, not {}", json_kind(v))),
        }
    }
    if let Some(v) = root.get("__meta__") {
        if !v.is_object() {
            return err(
                "__meta__",
                format!("expected an object, not {}", json_kind(v)),
            );
        }
    }
    Ok(())
}

/// A JSON value's kind, for error messages.
fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn get_str<'a>(v: &'a Value, key: &str, ctx: &str) -> R<&'a str> {
    match v.get(key).and_then(Value::as_str) {
        Some(s) => Ok(s),
        None => err(ctx, format!("missing string '{key}'")),
    }
}

fn get_u64(v: &Value, key: &str, ctx: &str) -> R<u64> {
    match v.get(key).and_then(Value::as_u64) {
        Some(s) => Ok(s),
        None => err(ctx, format!("missing non-negative integer '{key}'")),
    }
}

/// Most cells a register, counter or meter array may have: the engine allocates every
/// cell when it loads the program, and a corrupt size must be an error, not an abort.
const MAX_ARRAY_CELLS: u64 = 1 << 24;

/// An array's `size`, refused above [`MAX_ARRAY_CELLS`].
fn array_size(size: u64, ctx: &str) -> R<usize> {
    if size > MAX_ARRAY_CELLS {
        return err(
            ctx,
            format!("size {size} is above the engine's limit of {MAX_ARRAY_CELLS} cells"),
        );
    }
    Ok(size as usize)
}

fn obj_ctx(section: &str, i: usize, v: &Value) -> String {
    match v.get("name").and_then(Value::as_str) {
        Some(n) => format!("{section}[{i}] '{n}'"),
        None => format!("{section}[{i}]"),
    }
}

fn hex_value(v: &Value, ctx: &str) -> R<u128> {
    match v {
        Value::String(s) => {
            parse_hexstr(s).map_or_else(|| err(ctx, format!("bad hexstr '{s}'")), Ok)
        }
        Value::Number(n) => n
            .as_u64()
            .map(u128::from)
            .map_or_else(|| err(ctx, "bad number"), Ok),
        Value::Bool(b) => Ok(u128::from(*b)),
        Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("hexstr") => {
            hex_value(o.get("value").unwrap_or(&Value::Null), ctx)
        }
        _ => err(ctx, format!("expected a hexstr, got {v}")),
    }
}

/// Hex string to bytes, left-padded to `nbytes`.
fn hex_bytes(s: &str, nbytes: usize, ctx: &str) -> R<Vec<u8>> {
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    let digits = digits.trim_start_matches('0');
    if digits.len() > nbytes * 2 {
        return err(
            ctx,
            format!("value '{s}' is wider than the {nbytes}-byte key"),
        );
    }
    let padded = format!("{digits:0>width$}", width = nbytes * 2);
    (0..nbytes)
        .map(|i| u8::from_str_radix(&padded[2 * i..2 * i + 2], 16))
        .collect::<Result<Vec<u8>, _>>()
        .or_else(|_| err(ctx, format!("bad hex value '{s}'")))
}

struct HeaderType {
    fields: Vec<(String, Option<u32>, bool)>,
    max_length: Option<u32>,
}

struct Loader {
    p: Program,
    header_types: HashMap<String, HeaderType>,
    stack_by_name: HashMap<String, u32>,
    union_by_name: HashMap<String, u32>,
    ustack_by_name: HashMap<String, u32>,
    calc_by_name: HashMap<String, u32>,
    register_by_name: HashMap<String, u32>,
    counter_by_name: HashMap<String, u32>,
    meter_by_name: HashMap<String, u32>,
    action_by_id: HashMap<u64, u32>,
    node_by_name: HashMap<String, Node>,
    state_by_name: HashMap<String, u32>,
    vset_by_name: HashMap<String, u32>,
    profile_by_name: HashMap<String, u32>,
    header_json_ids: HashMap<u64, HeaderId>,
    union_json_ids: HashMap<u64, u32>,
}

/// Loads a BMv2 JSON document.
pub fn load(text: &str) -> R<Program> {
    let root: Value =
        serde_json::from_str(text).map_err(|e| LoadError(format!("JSON syntax: {e}")))?;
    if !root.is_object() {
        return err("document", "top level is not a JSON object");
    }
    if let Some(ver) = root
        .get("__meta__")
        .and_then(|m| m.get("version"))
        .and_then(Value::as_array)
    {
        let major = ver.first().and_then(Value::as_u64);
        let minor = ver.get(1).and_then(Value::as_u64).unwrap_or(0);
        if major != Some(2) || minor > 24 {
            return err(
                "__meta__.version",
                format!(
                    "format {} is not supported (need 2.0 to 2.24)",
                    Value::from(ver.clone())
                ),
            );
        }
    }
    check_section_types(&root)?;
    let mut l = Loader::empty();
    l.header_types(&root)?;
    l.headers(&root)?;
    l.stacks_and_unions(&root)?;
    l.aliases(&root)?;
    l.errors(&root)?;
    l.std_meta()?;
    l.stateful(&root)?;
    l.calculations(&root)?;
    l.field_lists(&root)?;
    l.actions(&root)?;
    l.parser(&root)?;
    l.deparser(&root)?;
    l.pipelines(&root)?;
    l.bindings(&root)?;
    l.checksums(&root)?;
    Ok(l.p)
}

impl Loader {
    /// A loader with nothing loaded yet.
    fn empty() -> Loader {
        Loader {
            p: Program {
                fields: vec![],
                headers: vec![],
                stacks: vec![],
                unions: vec![],
                union_stacks: vec![],
                num_varbits: 0,
                parse_states: vec![],
                init_state: None,
                value_sets: vec![],
                deparse_order: vec![],
                deparser_prims: vec![],
                actions: vec![],
                tables: vec![],
                conditionals: vec![],
                profiles: vec![],
                ingress: Pipeline {
                    name: "ingress".into(),
                    init: None,
                },
                egress: Pipeline {
                    name: "egress".into(),
                    init: None,
                },
                calculations: vec![],
                checksums: vec![],
                counters: vec![],
                meters: vec![],
                registers: vec![],
                field_lists: HashMap::new(),
                learn_lists: HashMap::new(),
                errors: vec![],
                error_codes: ErrorCodes {
                    packet_too_short: 1,
                    stack_out_of_bounds: 3,
                    header_too_short: 4,
                    parser_invalid_argument: 6,
                },
                std: StdMeta {
                    header: 0,
                    ingress_port: 0,
                    egress_spec: 0,
                    egress_port: 0,
                    instance_type: 0,
                    packet_length: 0,
                    enq_timestamp: None,
                    enq_qdepth: None,
                    deq_timedelta: None,
                    deq_qdepth: None,
                    ingress_global_timestamp: None,
                    egress_global_timestamp: None,
                    mcast_grp: None,
                    egress_rid: None,
                    checksum_error: None,
                    parser_error: None,
                    priority: None,
                    qid: None,
                },
                field_by_name: HashMap::new(),
                header_by_name: HashMap::new(),
            },
            header_types: HashMap::new(),
            stack_by_name: HashMap::new(),
            union_by_name: HashMap::new(),
            ustack_by_name: HashMap::new(),
            calc_by_name: HashMap::new(),
            register_by_name: HashMap::new(),
            counter_by_name: HashMap::new(),
            meter_by_name: HashMap::new(),
            action_by_id: HashMap::new(),
            node_by_name: HashMap::new(),
            state_by_name: HashMap::new(),
            vset_by_name: HashMap::new(),
            profile_by_name: HashMap::new(),
            header_json_ids: HashMap::new(),
            union_json_ids: HashMap::new(),
        }
    }

    fn header_types(&mut self, root: &Value) -> R<()> {
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
                    Some(Value::Number(n)) => match n.as_u64() {
                        Some(w) if w <= 128 => Some(w as u32),
                        Some(w) => {
                            return err(
                                &fctx,
                                format!(
                                    "'{fname}' is {w} bits wide; the engine supports up to 128"
                                ),
                            )
                        }
                        None => return err(&fctx, "bad width"),
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

    fn headers(&mut self, root: &Value) -> R<()> {
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
            for (j, (fname, width, signed)) in ht.fields.iter().enumerate() {
                let w = match width {
                    Some(w) => *w,
                    None => {
                        varbit = Some((j as u32, self.p.num_varbits));
                        self.p.num_varbits += 1;
                        ht.max_length.unwrap_or(0) * 8
                    }
                };
                let full = format!("{name}.{fname}");
                self.p.field_by_name.insert(full.clone(), first + j as u32);
                self.p.fields.push(FieldInfo {
                    name: full,
                    width: if width.is_some() { w } else { 32 },
                    signed: *signed,
                    bit_offset: off,
                    header: hid,
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
            });
        }
        Ok(())
    }

    fn header(&self, name: &str, ctx: &str) -> R<HeaderId> {
        self.p
            .header_by_name
            .get(name)
            .copied()
            .map_or_else(|| err(ctx, format!("unknown header '{name}'")), Ok)
    }

    fn header_ids(&self, v: &Value, key: &str, ctx: &str) -> R<Vec<HeaderId>> {
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

impl Loader {
    fn stacks_and_unions(&mut self, root: &Value) -> R<()> {
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

    fn aliases(&mut self, root: &Value) -> R<()> {
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

    fn errors(&mut self, root: &Value) -> R<()> {
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

    fn std_meta(&mut self) -> R<()> {
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
        Ok(())
    }

    fn stateful(&mut self, root: &Value) -> R<()> {
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
            self.p.registers.push(RegisterDef { name, size, width });
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

    fn calc_inputs(&self, inputs: &[Value], ctx: &str) -> R<Vec<CalcInput>> {
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

    fn algo(name: &str, ctx: &str) -> R<HashAlgo> {
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

    fn calculations(&mut self, root: &Value) -> R<()> {
        for (i, c) in arr(root, "calculations").iter().enumerate() {
            let ctx = obj_ctx("calculations", i, c);
            let name = get_str(c, "name", &ctx)?.to_string();
            let algo = Self::algo(get_str(c, "algo", &ctx)?, &ctx)?;
            let inputs = self.calc_inputs(arr(c, "input"), &ctx)?;
            self.calc_by_name
                .insert(name.clone(), self.p.calculations.len() as u32);
            self.p.calculations.push(Calculation { name, algo, inputs });
        }
        Ok(())
    }

    fn field_lists(&mut self, root: &Value) -> R<()> {
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
                    fields.push(self.field_id(&h, &f, &ectx)?);
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

    fn field_pair(&self, v: Option<&Value>, ctx: &str) -> R<(String, String)> {
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

    fn field_id(&self, h: &str, f: &str, ctx: &str) -> R<FieldId> {
        let full = format!("{h}.{f}");
        self.p
            .field(&full)
            .map_or_else(|| err(ctx, format!("unknown field '{full}'")), Ok)
    }

    fn stack(&self, name: &str, ctx: &str) -> R<u32> {
        self.stack_by_name
            .get(name)
            .copied()
            .map_or_else(|| err(ctx, format!("unknown header stack '{name}'")), Ok)
    }

    fn stack_field_offset(&self, stack: u32, f: &str, ctx: &str) -> R<(u32, u32, bool)> {
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

impl Loader {
    /// Compiles a type–value object into an expression; the bool says "signed".
    fn expr(&self, v: &Value, ctx: &str) -> R<(Expr, bool)> {
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
                Ok(if fi.signed {
                    (Expr::SignedField(fid, fi.width), true)
                } else {
                    (Expr::Field(fid), false)
                })
            }
            Some("hexstr") => Ok((Expr::Const(hex_value(val, ctx)?), false)),
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

    fn op_expr(&self, v: &Value, ctx: &str) -> R<(Expr, bool)> {
        let Some(op) = v.get("op").and_then(Value::as_str) else {
            return err(ctx, "expression without 'op'");
        };
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
            "==" => bin(BinOp::Eq, None),
            "!=" => bin(BinOp::Ne, None),
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
            "d2b" => Ok((Expr::D2B(Box::new(self.sub(v, "right", ctx)?.0)), false)),
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

    fn lvalue(&self, v: &Value, ctx: &str) -> R<LValue> {
        match v.get("type").and_then(Value::as_str) {
            Some("field") => {
                let (h, f) = self.field_pair(v.get("value"), ctx)?;
                if f == "$valid$" {
                    return err(ctx, "the validity bit is read-only");
                }
                Ok(LValue::Field(self.field_id(&h, &f, ctx)?))
            }
            Some("stack_field") => {
                let (s, f) = self.field_pair(v.get("value"), ctx)?;
                let stack = self.stack(&s, ctx)?;
                Ok(LValue::StackLast {
                    stack,
                    offset: self.stack_field_offset(stack, &f, ctx)?.0,
                })
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

    fn header_ref(&self, v: &Value, ctx: &str) -> R<HeaderRef> {
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

    fn register(&self, name: &str, ctx: &str) -> R<u32> {
        self.register_by_name
            .get(name)
            .copied()
            .map_or_else(|| err(ctx, format!("unknown register '{name}'")), Ok)
    }

    fn named(map: &HashMap<String, u32>, v: &Value, what: &str, ctx: &str) -> R<u32> {
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

impl Loader {
    fn primitive(&self, prim: &Value, ctx: &str) -> R<Prim> {
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
            "assign" | "modify_field" => Prim::Assign(self.lvalue(p(0)?, ctx)?, e(1)?),
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

    fn actions(&mut self, root: &Value) -> R<()> {
        for (i, a) in arr(root, "actions").iter().enumerate() {
            let ctx = obj_ctx("actions", i, a);
            let name = get_str(a, "name", &ctx)?.to_string();
            let id = get_u64(a, "id", &ctx)?;
            let params = arr(a, "runtime_data")
                .iter()
                .map(|r| {
                    Ok((
                        get_str(r, "name", &ctx)?.to_string(),
                        get_u64(r, "bitwidth", &ctx)? as u32,
                    ))
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

    fn parser(&mut self, root: &Value) -> R<()> {
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
        let states = arr(parser, "parse_states");
        for (i, s) in states.iter().enumerate() {
            let ctx = obj_ctx("parse_states", i, s);
            self.state_by_name
                .insert(get_str(s, "name", &ctx)?.to_string(), i as u32);
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
            "parser 'parser'",
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
                    Some("set") => {
                        ParserOp::Set(self.lvalue(p(0)?, &octx)?, self.expr(p(1)?, &octx)?.0)
                    }
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
            out.push(ParseState {
                name: get_str(s, "name", &ctx)?.to_string(),
                ops,
                key,
                transitions,
            });
        }
        self.p.parse_states = out;
        self.p.init_state = init;
        Ok(())
    }

    /// Splits a transition value (components padded to whole bytes) per key element.
    fn split_key(&self, hex: &str, key: &[KeyComponent], ctx: &str) -> R<Vec<u128>> {
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

    fn deparser(&mut self, root: &Value) -> R<()> {
        let Some(d) = arr(root, "deparsers").first() else {
            return Ok(());
        };
        let ctx = obj_ctx("deparsers", 0, d);
        get_str(d, "name", &ctx)?;
        for h in arr(d, "order") {
            let name = h.as_str().unwrap_or("");
            let hid = self.header(name, &ctx)?;
            self.p.deparse_order.push(hid);
        }
        for (j, pr) in arr(d, "primitives").iter().enumerate() {
            let prim = self.primitive(pr, &format!("{ctx} primitive {j}"))?;
            if matches!(prim, Prim::Jump(_) | Prim::JumpIfZero(..) | Prim::Exit) {
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

    fn pipelines(&mut self, root: &Value) -> R<()> {
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
                let selector = match ap.get("selector") {
                    Some(s) if !s.is_null() => Some(Calculation {
                        name: name.clone(),
                        algo: Self::algo(get_str(s, "algo", &ctx)?, &ctx)?,
                        inputs: self.calc_inputs(arr(s, "input"), &ctx)?,
                    }),
                    _ => None,
                };
                let max_size = ap.get("max_size").and_then(Value::as_u64).unwrap_or(1024) as usize;
                self.profile_by_name
                    .insert(name.clone(), self.p.profiles.len() as u32);
                self.p.profiles.push(ProfileDef {
                    name,
                    max_size,
                    selector,
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
                _ => {}
            }
        }
        Ok(())
    }

    fn table(&self, t: &Value, ctx: &str) -> R<TableDef> {
        let name = get_str(t, "name", ctx)?.to_string();
        let mut keys = vec![];
        for (j, k) in arr(t, "key").iter().enumerate() {
            let kctx = format!("{ctx} key {j}");
            let kind = match k.get("match_type").and_then(Value::as_str) {
                Some("exact") | Some("valid") => MatchKind::Exact,
                Some("lpm") => MatchKind::Lpm,
                Some("ternary") => MatchKind::Ternary,
                Some("range") => MatchKind::Range,
                Some("optional") => MatchKind::Optional,
                other => return err(&kctx, format!("unsupported match_type {other:?}")),
            };
            let (h, f) = self.field_pair(k.get("target"), &kctx)?;
            let (expr, width) = if f == "$valid$" {
                (Expr::Valid(self.header(&h, &kctx)?), 1)
            } else {
                let fid = self.field_id(&h, &f, &kctx)?;
                (Expr::Field(fid), self.p.fields[fid as usize].width)
            };
            let kmask = match k.get("mask") {
                Some(m) if !m.is_null() => Some(hex_value(m, &kctx)?),
                _ => None,
            };
            let kname = k
                .get("name")
                .and_then(Value::as_str)
                .map_or_else(|| format!("{h}.{f}"), str::to_string);
            keys.push(TableKey {
                name: kname,
                kind,
                expr,
                width,
                mask: kmask,
            });
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
            for (m, kd) in arr(e, "match_key").iter().zip(&keys) {
                let g = |key: &str| hex_value(m.get(key).unwrap_or(&Value::Null), &ectx);
                mv.push(
                    match m
                        .get("match_type")
                        .and_then(Value::as_str)
                        .unwrap_or("exact")
                    {
                        "exact" | "valid" => MatchValue::Exact(g("key")?),
                        "lpm" => {
                            MatchValue::Lpm(g("key")?, get_u64(m, "prefix_length", &ectx)? as u32)
                        }
                        "ternary" if kd.kind == MatchKind::Optional => {
                            let mk = g("mask")?;
                            MatchValue::Optional((mk != 0).then_some(g("key")?))
                        }
                        "ternary" => MatchValue::Ternary(g("key")?, g("mask")?),
                        "optional" => MatchValue::Optional(Some(g("key")?)),
                        "range" => MatchValue::Range(g("start")?, g("end")?),
                        other => return err(&ectx, format!("unsupported match_type '{other}'")),
                    },
                );
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
        Ok(TableDef {
            name,
            keys,
            lookup,
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

    fn bindings(&mut self, root: &Value) -> R<()> {
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
                        Some(self.field_id(&h, &f, &ctx)?)
                    }
                    _ => None,
                };
                self.p.meters[i].direct_table = Some(t);
                self.p.tables[t as usize].direct_meter = Some((i as u32, target));
            }
        }
        Ok(())
    }

    fn checksums(&mut self, root: &Value) -> R<()> {
        for (i, c) in arr(root, "checksums").iter().enumerate() {
            let ctx = obj_ctx("checksums", i, c);
            let (h, f) = self.field_pair(c.get("target"), &ctx)?;
            let target = self.field_id(&h, &f, &ctx)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn comp(width: u32) -> KeyComponent {
        KeyComponent {
            expr: Expr::Const(0),
            width,
        }
    }

    #[test]
    fn transition_values_split_per_padded_component() {
        let l = Loader::empty();
        // A 12-bit and a 2-bit component: 0xaba and 0x3 are written 0x0aba03.
        assert_eq!(
            l.split_key("0x0aba03", &[comp(12), comp(2)], "t").unwrap(),
            vec![0xaba, 0x3]
        );
        assert!(l
            .split_key("0x01020304", &[comp(12), comp(2)], "t")
            .is_err());
    }

    #[test]
    fn errors_name_the_object() {
        let e = load(r#"{"header_types": [{"name": "h_t", "id": 0, "fields": [["f", "x"]]}]}"#)
            .unwrap_err();
        assert_eq!(e.0, "header_types[0] 'h_t' field 0: 'f' has no width");
        let e = load(r#"{"headers": []}"#).unwrap_err();
        assert_eq!(
            e.0,
            "standard_metadata: required field 'ingress_port' is missing"
        );
    }
}
