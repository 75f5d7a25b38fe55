//! The fixtures the JIT's tests load: the engine's and the simulator's
//! test programs, each a BMv2 JSON.

pub(super) const L3: &str = include_str!("../../../tests/engine/fixtures/l3.json");
pub(super) const TABLES: &str = include_str!("../../../tests/engine/fixtures/tables.json");
pub(super) const META: &str = include_str!("../../../tests/engine/fixtures/meta.json");
pub(super) const PARSER: &str = include_str!("../../../tests/engine/fixtures/parser.json");
pub(super) const WIDE: &str = include_str!("../../../tests/engine/fixtures/wide_field.json");
pub(super) const FEEDBACK: &str = include_str!("../../../sim/tests/fixtures/feedback_maker.json");
pub(super) const IN_PLACE: &str =
    include_str!("../../../tests/engine/fixtures/in_place_tables.json");
