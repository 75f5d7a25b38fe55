//! One loaded program with its run-time state: v1model's whole program, or one
//! half (ingress or egress) of a TNA pipe. The engine holds one or more; the
//! control-plane API (`runtime`) acts on the one an object's name belongs to.

use crate::error::LoadError;
use crate::exec::State;
use crate::program::{Program, ProgramKind};

/// A loaded program and its state.
pub struct Gress {
    /// The program.
    pub prog: Program,
    /// Its tables, stateful objects and scratch.
    pub st: State,
    /// What compiling its blocks to machine code did (empty while interpreted).
    pub jit: crate::jit::Report,
}

impl Gress {
    /// Loads one BMv2 JSON document as `kind`, with a random seed for its state.
    pub fn load(
        json: &serde_json::Value,
        kind: ProgramKind,
        seed: u64,
    ) -> Result<Gress, LoadError> {
        let prog = crate::load::load_value(json, kind)?;
        let st = State::new(&prog, seed);
        Ok(Gress {
            prog,
            st,
            jit: Default::default(),
        })
    }

    /// Compiles the program's blocks to machine code (`on`), or drops the
    /// machine code so that everything is interpreted.
    pub fn set_jit(&mut self, on: bool) {
        self.jit = if on {
            crate::jit::compile(&mut self.prog)
        } else {
            crate::jit::strip(&mut self.prog);
            Default::default()
        };
    }
}
