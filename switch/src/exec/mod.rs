//! Pipeline execution with simple_switch's v1model semantics: parser,
//! checksums, match-action controls, primitives and deparser. Everything
//! here works on indices resolved at load time and reuses scratch buffers.

mod calc;
mod deparser;
mod eval;
mod parser;
mod prims;
mod table;
mod walk;

pub use calc::calc_value;
pub(crate) use calc::pack_inputs;
pub use deparser::deparse;
pub(crate) use deparser::emit_header as emit_header_bits;
pub(crate) use eval::binop;
pub use eval::{eval, store};
pub(crate) use parser::lookahead_need;
pub(crate) use parser::MAX_PARSE_STEPS;
pub use parser::{parse, parse_from};
pub(crate) use prims::push_log;
pub use prims::{exec_prim, run_body};
pub use table::apply_table;

use crate::bits::mask;
use crate::hash::{Crc, Rng};
use crate::packet::Packet;
use crate::program::*;
use crate::state::{CounterCell, MeterCell};
use crate::tables::{EntryAction, ProfileState, TableState};

/// Counters of events the pipeline itself records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExecStats {
    /// Failed assert/assume calls.
    pub assert_failures: u64,
    /// Packets whose parser ended with an error.
    pub parser_errors: u64,
    /// Packets with a failed verify checksum.
    pub checksum_errors: u64,
}

/// Mutable run-time state of a loaded program.
#[derive(Debug, Clone)]
pub struct State {
    /// Match tables.
    pub tables: Vec<TableState>,
    /// Action profiles and selectors.
    pub profiles: Vec<ProfileState>,
    /// Indirect counter arrays.
    pub counters: Vec<Vec<CounterCell>>,
    /// Indirect meter arrays.
    pub meters: Vec<Vec<MeterCell>>,
    /// Register arrays.
    pub registers: Vec<Vec<u128>>,
    /// Parser value-set members (value, mask).
    pub vsets: Vec<Vec<(u128, u128)>>,
    /// Configurable CRC-16 for `crc16_custom`.
    pub crc16_custom: Crc,
    /// Configurable CRC-32 for `crc32_custom`.
    pub crc32_custom: Crc,
    crc16: Crc,
    crc32: Crc,
    crc_ccitt: Crc,
    // Counter of the `round_robin` "hash" (BMv2 increments it per call).
    round_robin: u64,
    /// Seeded generator for `random` and random hashes.
    pub rng: Rng,
    /// Port that means "drop" (simple_switch `--drop-port`, default 511).
    pub drop_port: u16,
    /// `log_msg` output.
    pub log: Vec<String>,
    /// The per-packet trace, while tracing is on.
    pub trace: Option<Box<crate::trace::Tracer>>,
    /// Event counters.
    pub stats: ExecStats,
    /// State of Tofino externs (checksum sums, parser counters, log pointers).
    pub externs: crate::externs::ExternState,
    pub(crate) fmask: Vec<u128>,
    key: Vec<u128>,
    key2: Vec<u128>,
    pub(crate) hbuf: Vec<u8>,
    adata: Vec<u128>,
    saved: Vec<u128>,
    /// Register files native code spills to, one taken per call in progress.
    // Boxed so a file taken out moves as one pointer, not 256 bytes.
    #[allow(clippy::vec_box)]
    pub(crate) register_files: Vec<Box<[u128; crate::flat::REGS]>>,
}

impl State {
    /// Fresh state for `p` (tables hold their const entries and default actions).
    pub fn new(p: &Program, seed: u64) -> Self {
        let mut tables = Vec::with_capacity(p.tables.len());
        for def in &p.tables {
            let mut t = TableState::default();
            if let Some((a, data, is_const)) = &def.default_entry {
                t.set_default(Some(EntryAction::Direct {
                    action: *a,
                    data: data.clone(),
                }));
                t.default_const = *is_const;
            }
            for (keys, a, data, prio) in &def.const_entries {
                let e = crate::tables::Entry {
                    keys: keys.clone(),
                    priority: *prio,
                    action: EntryAction::Direct {
                        action: *a,
                        data: data.clone(),
                    },
                    counter: CounterCell::default(),
                    meter: MeterCell::default(),
                    is_const: true,
                };
                // Const entries were validated against the key at load time;
                // a clash (duplicate key) keeps the first, as the first match wins.
                let _ = t.add(def, e);
            }
            t.immutable = !def.const_entries.is_empty();
            tables.push(t);
        }
        State {
            tables,
            profiles: vec![ProfileState::default(); p.profiles.len()],
            counters: p
                .counters
                .iter()
                .map(|c| vec![CounterCell::default(); c.size])
                .collect(),
            meters: p
                .meters
                .iter()
                .map(|m| {
                    vec![MeterCell::default(); if m.direct_table.is_some() { 0 } else { m.size }]
                })
                .collect(),
            registers: p
                .registers
                .iter()
                .map(|r| vec![r.initial; r.size])
                .collect(),
            vsets: vec![vec![]; p.value_sets.len()],
            crc16_custom: Crc::crc16(),
            crc32_custom: Crc::crc32(),
            crc16: Crc::crc16(),
            crc32: Crc::crc32(),
            crc_ccitt: Crc::ccitt(),
            round_robin: 0,
            rng: Rng::new(seed),
            drop_port: 511,
            log: vec![],
            trace: None,
            stats: ExecStats::default(),
            externs: crate::externs::ExternState::new(p),
            fmask: p.fields.iter().map(|f| mask(f.width)).collect(),
            key: Vec::with_capacity(16),
            key2: Vec::with_capacity(16),
            hbuf: Vec::with_capacity(2048),
            adata: Vec::with_capacity(16),
            saved: Vec::with_capacity(64),
            register_files: Vec::with_capacity(4),
        }
    }
}

/// Runs an ingress or egress control: walked node by node with its trace while tracing
/// is on, else as its straight-line form `code`.
pub fn run_pipeline(
    p: &Program,
    st: &mut State,
    pkt: &mut Packet,
    pipe: &Pipeline,
    code: &crate::flat::Code,
) {
    if st.trace.is_some() {
        walk::run_control_traced(p, st, pkt, pipe);
    } else if pipe.init.is_some() {
        crate::flat::run_control(p, st, pkt, code);
    } else {
        // An empty control (v1model's egress of a forwarding program): nothing
        // to run, and `exit` cleared on the way out as the control does.
        pkt.flags.exit = false;
    }
}

/// Saves the values of a preservation field list into `st`'s scratch.
pub fn save_field_list(p: &Program, st: &mut State, pkt: &Packet, list: u32) {
    st.saved.clear();
    if let Some(fl) = p.field_lists.get(&list) {
        st.saved
            .extend(fl.fields.iter().map(|f| pkt.phv.get(p, *f)));
    }
}

/// Restores the values saved by [`save_field_list`] into `pkt`.
pub fn restore_field_list(p: &Program, st: &State, pkt: &mut Packet, list: u32) {
    if let Some(fl) = p.field_lists.get(&list) {
        for (f, v) in fl.fields.iter().zip(&st.saved) {
            pkt.phv.set(p, *f, *v);
        }
    }
}
