//! The straight-line form of controls (`bufferlab_engine::flat`) against the
//! table machinery it stands in for: a keyless table with a const default
//! runs inline with its data folded in, and through the table once it has
//! an entry.

use bufferlab_engine::engine::Engine;
use bufferlab_tm::TmConfig;
use serde_json::Value;

const TABLES: &str = include_str!("../../tests/engine/fixtures/tables.json");

/// tables.json with `MyIngress.t_const` made keyless (no key, no const
/// entries; its const default stays `set_res(7)`).
fn keyless_program() -> String {
    let mut j: Value = serde_json::from_str(TABLES).expect("fixture is JSON");
    let tables = j["pipelines"][0]["tables"]
        .as_array_mut()
        .expect("ingress has tables");
    let t = tables
        .iter_mut()
        .find(|t| t["name"] == "MyIngress.t_const")
        .expect("t_const exists");
    t["key"] = Value::Array(vec![]);
    t["match_type"] = Value::from("exact");
    t.as_object_mut()
        .expect("a table is an object")
        .remove("entries");
    assert_eq!(t["default_entry"]["action_const"], Value::Bool(true));
    assert_eq!(t["default_entry"]["action_data"][0], Value::from("0x7"));
    j.to_string()
}

/// An IPv4 frame whose diffserv picks the table tables.json applies (5: t_const).
fn frame(diffserv: u8) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00];
    f.extend_from_slice(&[0x45, diffserv, 0, 20, 0, 0, 0x40, 0, 64, 17, 0, 0]);
    f.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 9]);
    f
}

/// The IPv4 identification of the frame that left (egress copies `res` there).
fn identification(e: &mut Engine, t_ns: u64) -> u16 {
    e.send(1, &frame(5), t_ns).expect("send");
    e.drain();
    let out = e.take_received();
    assert_eq!(out.len(), 1, "one frame out");
    u16::from_be_bytes([out[0].frame[18], out[0].frame[19]])
}

#[test]
fn keyless_const_default_runs_with_its_data_then_through_an_entry() {
    let mut e = Engine::new(&keyless_program(), TmConfig::default(), 1).expect("loads");
    assert_eq!(identification(&mut e, 0), 7);
    e.table_add("MyIngress.t_const", vec![], "MyIngress.set_res", vec![9], 0)
        .expect("a keyless table takes one entry");
    assert_eq!(identification(&mut e, 10_000), 9);
}
