//! The operand encodings real BMv2 takes, checked before anything is loaded.
//!
//! simple_switch's loader (`src/bm_sim/P4Objects.cpp` in behavioral-model) dispatches on
//! each operand's `type` and refuses the JSON when a position gets a type it does not
//! handle. The engine's own loader is more forgiving (it reads a bare operator node, a
//! parser `set` from a `stack_field`, an `extract_VL` length that is a plain field), so a
//! compiler emitting those would pass here and fail on BMv2. This pass walks the document
//! the way BMv2 does and refuses every such form with BMv2's own message, prefixed by
//! where in the document it is.
//!
//! The positions and what each takes:
//! - an expression tree (conditionals, `verify`, checksum `if_cond`, `length_exp`, the
//!   value of every `expression` wrapper): `expression` (whose value is an operator node
//!   with `op`), `header`, `field`, `bool`, `hexstr`, `local`, `register`, `header_stack`,
//!   `stack_field`, `header_union`, `header_union_stack`;
//! - a primitive (in actions, parser `primitive` ops and the deparser): one simple_switch
//!   registers, with its number of parameters; each parameter:
//!   `hexstr`, `runtime_data`, `header`, `field`, `calculation`, `meter_array`,
//!   `counter_array`, `register_array`, `header_stack`, `expression`, `register`,
//!   `extern`, `string`, `stack_field`, `header_union`, `header_union_stack`, and
//!   `parameters_vector` holding more of them;
//! - parser `set`: destination `field`; source `field`, `hexstr`, `lookahead`,
//!   `expression`; `extract_VL`'s length: `expression`; `advance`: `field`, `hexstr`,
//!   `expression`; a transition key element: `field`, `stack_field`,
//!   `union_stack_field`, `lookahead`;
//! - a calculation's input: `field`, `hexstr`, `header`, `payload`; a field list's
//!   element: `field`, `hexstr`;
//! - `extern_instances`: none (simple_switch registers no extern type).

use serde_json::Value;

use super::{arr, err, obj_ctx, R};

/// Refuses any operand encoding BMv2's loader refuses.
pub(super) fn check(root: &Value) -> R<()> {
    // simple_switch registers no extern type of its own, so every extern instance (a
    // user-declared extern, p4c-bm2-ss --emit-externs) is refused as BMv2 refuses it.
    if let Some(x) = arr(root, "extern_instances").first() {
        let ty = x.get("type").and_then(Value::as_str).unwrap_or("");
        return err(
            &obj_ctx("extern_instances", 0, x),
            format!("Invalid reference to extern type '{ty}'"),
        );
    }
    for (i, ht) in arr(root, "header_types").iter().enumerate() {
        if let Some(exp) = ht.get("length_exp") {
            expression(exp, &obj_ctx("header_types", i, ht))?;
        }
    }
    for (i, parser) in arr(root, "parsers").iter().enumerate() {
        let ctx = obj_ctx("parsers", i, parser);
        for (j, state) in arr(parser, "parse_states").iter().enumerate() {
            let sctx = format!("{ctx} {}", obj_ctx("parse_states", j, state));
            for (k, op) in arr(state, "parser_ops").iter().enumerate() {
                parser_op(op, &format!("{sctx} parser_op {k}"))?;
            }
            for (k, elem) in arr(state, "transition_key").iter().enumerate() {
                let ty = type_of(elem);
                if !matches!(
                    ty,
                    "field" | "stack_field" | "union_stack_field" | "lookahead"
                ) {
                    return err(
                        &format!("{sctx} transition_key {k}"),
                        "Invalid entry in parse state key",
                    );
                }
            }
        }
    }
    for (i, calc) in arr(root, "calculations").iter().enumerate() {
        let name = calc.get("name").and_then(Value::as_str).unwrap_or("");
        for input in arr(calc, "input") {
            let ty = type_of(input);
            if !matches!(ty, "field" | "hexstr" | "header" | "payload") {
                return err(
                    &obj_ctx("calculations", i, calc),
                    format!("Unsupported input type '{ty}' for calculation '{name}'"),
                );
            }
        }
    }
    for (i, action) in arr(root, "actions").iter().enumerate() {
        let ctx = obj_ctx("actions", i, action);
        let name = action.get("name").and_then(Value::as_str).unwrap_or("");
        let nparams = arr(action, "runtime_data").len();
        for (j, prim) in arr(action, "primitives").iter().enumerate() {
            primitive(prim, name, nparams, &format!("{ctx} primitive {j}"))?;
        }
    }
    for (i, deparser) in arr(root, "deparsers").iter().enumerate() {
        let ctx = obj_ctx("deparsers", i, deparser);
        for (j, prim) in arr(deparser, "primitives").iter().enumerate() {
            primitive(prim, "", 0, &format!("{ctx} primitive {j}"))?;
        }
    }
    for (i, pipeline) in arr(root, "pipelines").iter().enumerate() {
        let ctx = obj_ctx("pipelines", i, pipeline);
        for (j, cond) in arr(pipeline, "conditionals").iter().enumerate() {
            let cctx = format!("{ctx} {}", obj_ctx("conditionals", j, cond));
            expression(cond.get("expression").unwrap_or(&Value::Null), &cctx)?;
        }
    }
    for (i, ck) in arr(root, "checksums").iter().enumerate() {
        if let Some(cond) = ck.get("if_cond") {
            expression(cond, &obj_ctx("checksums", i, ck))?;
        }
    }
    for (i, list) in arr(root, "field_lists").iter().enumerate() {
        for elem in arr(list, "elements") {
            let ty = type_of(elem);
            if !matches!(ty, "field" | "hexstr") {
                return err(
                    &obj_ctx("field_lists", i, list),
                    format!("Invalid entry type '{ty}' in field list"),
                );
            }
        }
    }
    Ok(())
}

/// An operand's `type`, "" when it has none (as BMv2's `asString` of a missing member).
fn type_of(v: &Value) -> &str {
    v.get("type").and_then(Value::as_str).unwrap_or("")
}

/// An operand's `value`, null when it has none.
fn value_of(v: &Value) -> &Value {
    v.get("value").unwrap_or(&Value::Null)
}

/// BMv2's check that `parameters` is an array of `n` elements.
fn tuple_size(op: &Value, n: usize, ctx: &str) -> R<()> {
    match op.get("parameters").and_then(Value::as_array) {
        None => err(ctx, "Expected 'parameters' to be a JSON array"),
        Some(a) if a.len() != n => err(
            ctx,
            format!(
                "Expected 'parameters' to be a JSON array of size {n} but array has size {}",
                a.len()
            ),
        ),
        Some(_) => Ok(()),
    }
}

/// One parser op: its kind, its parameter count and each parameter's encoding.
fn parser_op(op: &Value, ctx: &str) -> R<()> {
    let kind = op.get("op").and_then(Value::as_str).unwrap_or("");
    let params = arr(op, "parameters");
    let param = |i: usize| params.get(i).unwrap_or(&Value::Null);
    match kind {
        "extract" | "extract_VL" => {
            tuple_size(op, if kind == "extract" { 1 } else { 2 }, ctx)?;
            if kind == "extract_VL" {
                let length = param(1);
                if type_of(length) != "expression" {
                    return err(
                        ctx,
                        format!(
                            "Parser 'extract_VL' operation has invalid length type '{}', \
                             expected 'expression'",
                            type_of(length)
                        ),
                    );
                }
                expression(value_of(length), ctx)?;
            }
            let target = type_of(param(0));
            if !matches!(target, "regular" | "stack" | "union_stack") {
                return err(ctx, format!("Extract type '{target}' not supported"));
            }
            Ok(())
        }
        "set" => {
            tuple_size(op, 2, ctx)?;
            let dest = type_of(param(0));
            if dest != "field" {
                return err(
                    ctx,
                    format!(
                        "Parser 'set' operation has invalid destination type '{dest}', \
                         expected 'field'"
                    ),
                );
            }
            match type_of(param(1)) {
                "field" | "hexstr" | "lookahead" => Ok(()),
                "expression" => expression(value_of(param(1)), ctx),
                other => err(
                    ctx,
                    format!("Parser 'set' operation has unsupported source type '{other}'"),
                ),
            }
        }
        "verify" => {
            tuple_size(op, 2, ctx)?;
            expression(param(0), ctx)?;
            if param(1).is_i64() || param(1).is_u64() {
                return Ok(());
            }
            expression(param(1), ctx)
        }
        "primitive" => {
            tuple_size(op, 1, ctx)?;
            primitive(param(0), "", 0, ctx)
        }
        "shift" => {
            if params.len() != 1 {
                return err(
                    ctx,
                    "Parser 'shift' operation has invalid number of arguments, expected 1",
                );
            }
            Ok(())
        }
        "advance" => {
            if params.len() != 1 {
                return err(
                    ctx,
                    "Parser 'advance' operation has invalid number of arguments, expected 1",
                );
            }
            match type_of(param(0)) {
                "field" | "hexstr" => Ok(()),
                "expression" => expression(value_of(param(0)), ctx),
                other => err(
                    ctx,
                    format!("Parser 'advance' operation has unsupported parameter type '{other}'"),
                ),
            }
        }
        // BMv2's message has no space before "not".
        other => err(ctx, format!("Parser op '{other}'not supported")),
    }
}

/// The primitives simple_switch registers (its own and bm_sim's core ones) and how many
/// parameters each takes.
const PRIMITIVES: [(&str, usize); 43] = [
    ("assign", 2),
    ("assign_VL", 2),
    ("assign_header", 2),
    ("assign_union", 2),
    ("assign_header_stack", 2),
    ("assign_union_stack", 2),
    ("push", 2),
    ("pop", 2),
    ("_jump", 1),
    ("_jump_if_zero", 2),
    ("exit", 0),
    ("log_msg", 2),
    ("assert", 1),
    ("assume", 1),
    ("modify_field", 2),
    ("add_to_field", 2),
    ("subtract_from_field", 2),
    ("add", 3),
    ("subtract", 3),
    ("bit_xor", 3),
    ("bit_or", 3),
    ("bit_and", 3),
    ("shift_left", 3),
    ("shift_right", 3),
    ("drop", 0),
    ("mark_to_drop", 1),
    ("generate_digest", 2),
    ("add_header", 1),
    ("add_header_fast", 1),
    ("remove_header", 1),
    ("copy_header", 2),
    ("clone_ingress_pkt_to_egress", 2),
    ("clone_egress_pkt_to_egress", 2),
    ("resubmit", 1),
    ("recirculate", 1),
    ("modify_field_with_hash_based_offset", 4),
    ("no_op", 0),
    ("execute_meter", 3),
    ("count", 2),
    ("register_read", 3),
    ("register_write", 3),
    ("truncate", 1),
    ("modify_field_rng_uniform", 3),
];

/// A primitive call: a primitive simple_switch knows, its parameter count, and each
/// parameter's encoding; in an action (`action` named, `nparams` action data) or in a
/// parser or the deparser (`action` empty: BMv2 wraps it in an action without data).
fn primitive(prim: &Value, action: &str, nparams: usize, ctx: &str) -> R<()> {
    let name = prim.get("op").and_then(Value::as_str).unwrap_or("");
    let Some(&(_, expected)) = PRIMITIVES.iter().find(|(n, _)| *n == name) else {
        return err(ctx, format!("Unknown primitive action: {name}"));
    };
    let given = arr(prim, "parameters").len();
    if given != expected {
        return err(
            ctx,
            format!(
                "Invalid number of parameters for primitive action {name}: expected {expected} \
                 but got {given}"
            ),
        );
    }
    for p in arr(prim, "parameters") {
        parameter(p, name, action, nparams, ctx)?;
    }
    Ok(())
}

/// One primitive parameter; a `parameters_vector` (log_msg's data) holds more of them.
fn parameter(p: &Value, name: &str, action: &str, nparams: usize, ctx: &str) -> R<()> {
    match type_of(p) {
        "parameters_vector" => {
            for inner in value_of(p).as_array().map(Vec::as_slice).unwrap_or(&[]) {
                parameter(inner, name, action, nparams, ctx)?;
            }
            Ok(())
        }
        "hexstr" | "header" | "field" | "calculation" | "meter_array" | "counter_array"
        | "register_array" | "header_stack" | "extern" | "string" | "stack_field"
        | "header_union" | "header_union_stack" => Ok(()),
        "runtime_data" => {
            let offset = value_of(p).as_u64().unwrap_or(0);
            if offset >= nparams as u64 {
                return err(
                    ctx,
                    format!(
                        "Invalid 'runtime_data' parameter reference in action '{action}' when \
                         calling primitive '{name}': trying to use parameter at offset \
                         {offset} but action only has {nparams} parameter(s)"
                    ),
                );
            }
            Ok(())
        }
        "expression" => expression(value_of(p), ctx),
        "register" => register_index(p, ctx),
        other => err(ctx, format!("Parameter type '{other}' not supported")),
    }
}

/// A `register` operand's index: a constant or an expression tree.
fn register_index(v: &Value, ctx: &str) -> R<()> {
    let index = value_of(v)
        .as_array()
        .and_then(|a| a.get(1))
        .unwrap_or(&Value::Null);
    if type_of(index) == "hexstr" {
        return Ok(());
    }
    expression(index, ctx)
}

/// An expression tree as BMv2's `build_expression` reads it: null is no operand (a
/// unary operator's left side); an `expression` node holds an operator object.
fn expression(v: &Value, ctx: &str) -> R<()> {
    if v.is_null() {
        return Ok(());
    }
    match type_of(v) {
        "expression" => {
            let node = value_of(v);
            // BMv2 reads a missing `op` as the empty operator, which it maps to a field
            // load of garbage instead of refusing; the engine refuses it.
            let Some(op) = node.get("op").and_then(Value::as_str) else {
                return err(
                    ctx,
                    "an 'expression' whose value has no 'op' (a typed operand wrapped twice \
                     inside an expression tree)",
                );
            };
            let child = |key: &str| node.get(key).unwrap_or(&Value::Null);
            if op == "?" {
                expression(child("cond"), ctx)?;
            }
            expression(child("left"), ctx)?;
            if op != "access_field" {
                expression(child("right"), ctx)?;
            }
            Ok(())
        }
        "register" => register_index(v, ctx),
        "header" | "field" | "bool" | "hexstr" | "local" | "header_stack" | "stack_field"
        | "header_union" | "header_union_stack" => Ok(()),
        other => err(ctx, format!("Invalid 'type' in expression: '{other}'")),
    }
}
