//! BMv2 JSON loader: turns p4c's JSON (format 2.x) into a [`Program`] with
//! every name resolved. Errors name the JSON object and the reason.

use std::collections::HashMap;

use serde_json::Value;

use crate::bits::{mask, parse_hexstr};
use crate::error::LoadError;
use crate::program::*;
use crate::tables::MatchValue;

mod actions;
mod bmv2_forms;
mod declarations;
mod expressions;
mod headers;
mod parsers;
mod pipelines;
mod tna;
mod wide;

pub use expressions::concat_components;

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

/// An object's `source_info` as the trace quotes it; None when absent or incomplete.
fn source_ref(v: &Value) -> Option<SourceRef> {
    let si = v.get("source_info")?;
    let file = si.get("filename")?.as_str()?;
    let line = si.get("line")?.as_u64()?;
    let fragment = si.get("source_fragment")?.as_str()?;
    Some(SourceRef {
        at: format!("{file}({line})"),
        fragment: fragment.to_string(),
    })
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
        return err(ctx, format!("value '{s}' does not fit in {nbytes} bytes"));
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
    load_value(&parse(text)?, ProgramKind::V1model)
}

/// Parses a JSON document whose top level is an object.
pub fn parse(text: &str) -> R<Value> {
    let root: Value =
        serde_json::from_str(text).map_err(|e| LoadError(format!("JSON syntax: {e}")))?;
    if !root.is_object() {
        return err("document", "top level is not a JSON object");
    }
    Ok(root)
}

/// Loads a BMv2 JSON document already parsed: a v1model program, or one gress of a
/// TNA pipe (which has intrinsic metadata instead of `standard_metadata`, Tofino's
/// externs and register actions, and jumps in its deparser).
pub fn load_value(root: &Value, kind: ProgramKind) -> R<Program> {
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
    check_section_types(root)?;
    if kind == ProgramKind::V1model {
        // simple_switch runs v1model JSON; TNA gresses are the engine's alone.
        bmv2_forms::check(root)?;
    }
    let mut l = Loader::empty();
    l.p.kind = kind;
    l.header_types(root)?;
    l.headers(root)?;
    l.stacks_and_unions(root)?;
    l.aliases(root)?;
    l.errors(root)?;
    if kind == ProgramKind::V1model {
        l.std_meta()?;
    } else {
        l.tna_meta(root)?;
    }
    l.stateful(root)?;
    l.calculations(root)?;
    l.field_lists(root)?;
    if kind != ProgramKind::V1model {
        l.tna_externs(root)?;
    }
    l.actions(root)?;
    l.parser(root)?;
    l.deparser(root)?;
    l.pipelines(root)?;
    l.bindings(root)?;
    l.checksums(root)?;
    l.p.reset_validity = l.p.headers.iter().map(|h| h.metadata).collect();
    l.p.flat = crate::flat::build(&l.p);
    Ok(l.p)
}

impl Loader {
    /// A loader with nothing loaded yet.
    fn empty() -> Loader {
        Loader {
            p: Program {
                fields: vec![],
                wire: vec![],
                headers: vec![],
                reset_validity: vec![],
                stacks: vec![],
                unions: vec![],
                union_stacks: vec![],
                num_varbits: 0,
                wide_bytes: 0,
                num_high: 0,
                parse_states: vec![],
                init_state: None,
                other_parsers: vec![],
                native_parser: None,
                native_deparser: None,
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
                ghost: Pipeline {
                    name: "ghost".into(),
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
                kind: ProgramKind::V1model,
                tna: TnaMeta::default(),
                externs: Default::default(),
                crcs: vec![],
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
                std_slots: StdSlots::default(),
                field_by_name: HashMap::new(),
                header_by_name: HashMap::new(),
                flat: Default::default(),
                trace_names: Default::default(),
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
    fn exact_and_lpm_keys_of_plain_fields_pack_from_the_phv() {
        let p = load(include_str!("../../../tests/engine/fixtures/tables.json"))
            .expect("fixture loads");
        let table = |name: &str| {
            p.tables
                .iter()
                .find(|t| t.name == name)
                .unwrap_or_else(|| panic!("{name} is in the fixture"))
        };
        let dst = p
            .fields
            .iter()
            .position(|f| f.name == "ipv4.dstAddr")
            .expect("ipv4.dstAddr is a field") as FieldId;
        let protocol = p
            .fields
            .iter()
            .position(|f| f.name == "ipv4.protocol")
            .expect("ipv4.protocol is a field") as FieldId;
        assert_eq!(
            table("MyIngress.t_const").field_key.as_deref(),
            Some(&[(dst, 32)][..])
        );
        assert_eq!(
            table("MyIngress.t_lpm").field_key.as_deref(),
            Some(&[(dst, 32), (protocol, 8)][..])
        );
        // A masked component and 73 bits in all; ternary; no key at all.
        for name in ["MyIngress.t_exact_multi", "MyIngress.t_ternary", "tbl_hit"] {
            assert_eq!(table(name).field_key, None, "{name}");
        }
    }

    #[test]
    fn d2b_of_a_value_already_0_or_1_loads_as_the_value() {
        let p =
            load(include_str!("../../../tests/engine/fixtures/l3.json")).expect("fixture loads");
        // Both checksums' conditions are `d2b(ipv4.$valid$)`: a validity read, no node above.
        assert!(!p.checksums.is_empty());
        for c in &p.checksums {
            assert!(matches!(c.cond, Some(Expr::Valid(_))), "{:?}", c.cond);
        }
        let l = Loader::empty();
        let d2b = |right: &str| {
            let v = format!(
                r#"{{"type": "expression", "value": {{"op": "d2b", "left": null, "right": {right}}}}}"#
            );
            let v: Value = serde_json::from_str(&v).expect("JSON");
            l.expr(&v, "test").expect("loads").0
        };
        let five = r#"{"type": "hexstr", "value": "0x05"}"#;
        assert!(matches!(d2b(five), Expr::D2B(_)));
        let eq = format!(
            r#"{{"type": "expression", "value": {{"op": "==", "left": {five}, "right": {five}}}}}"#
        );
        assert!(matches!(d2b(&eq), Expr::Bin(BinOp::Eq, ..)));
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
