//! Loading a JSON document as the engine's target: v1model, or TNA/T2NA
//! with its gresses and packet generators.

use crate::arch::tna::TnaTarget;
use crate::error::LoadError;
use crate::externs::pktgen::{Generation, PacketGenerator};
use crate::gress::Gress;
use crate::program::ProgramKind;

/// A packet generator per pipe of a TNA program.
pub(super) fn generators(tna: Option<&TnaTarget>) -> Vec<PacketGenerator> {
    let Some(tna) = tna else {
        return vec![];
    };
    let generation = match tna.info.name.as_str() {
        "tofino2" => Generation::Tofino2,
        _ => Generation::Tofino1,
    };
    (0..tna.pipe_names().count() as u8)
        .map(|pipe| PacketGenerator::new(generation, pipe))
        .collect()
}

/// The program a JSON document holds: a v1model program, or a TNA/T2NA program's
/// gresses (the first apart) and its target.
pub(super) type Loaded = (Gress, Vec<Gress>, Option<Box<TnaTarget>>);

/// Loads a BMv2 JSON document for v1model, or a TNA JSON document (compiler/README.md
/// "TNA JSON", told apart by its `arch`).
pub(super) fn load_target(json: &str, seed: u64) -> Result<Loaded, LoadError> {
    let root = crate::load::parse(json)?;
    match root.get("arch").and_then(serde_json::Value::as_str) {
        Some("tna" | "t2na") => {
            let (mut gresses, target) = TnaTarget::load(&root, seed)?;
            let main = gresses.remove(0);
            Ok((main, gresses, Some(Box::new(target))))
        }
        Some(other) if other != "v1model" => Err(LoadError(format!(
            "arch: '{other}' is not an architecture the engine runs (v1model, tna, t2na)"
        ))),
        _ => Ok((
            Gress::load(&root, ProgramKind::V1model, seed)?,
            vec![],
            None,
        )),
    }
}
