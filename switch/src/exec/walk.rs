//! The traced path through controls and actions. With tracing on, a control is walked
//! node by node and an action primitive by primitive, as BMv2 runs them, so that each
//! condition, table and primitive can say what it did; the straight-line form (`flat`)
//! runs everything else. Both execute the same primitives with the same semantics.

use super::eval::eval;
use super::prims::exec_prim;
use super::table::apply_table;
use super::State;
use crate::packet::Packet;
use crate::program::{Node, Pipeline, Prim, Program};
use crate::trace_pkt;

/// Runs a control with its trace: start, each condition and table, end. `exit` stops
/// it and is cleared on the way out, as in the straight-line form.
pub fn run_control_traced(p: &Program, st: &mut State, pkt: &mut Packet, pipe: &Pipeline) {
    trace_pkt!(st, pkt, Debug, "Pipeline '{}': start", pipe.name);
    let mut node = pipe.init;
    while let Some(n) = node {
        node = match n {
            Node::Cond(c) => {
                let cond = &p.conditionals[c as usize];
                let taken = eval(p, st, pkt, &[], &cond.expr) != 0;
                match p
                    .trace_names
                    .conditionals
                    .get(c as usize)
                    .and_then(Option::as_ref)
                {
                    Some(src) => trace_pkt!(
                        st,
                        pkt,
                        Trace,
                        "{} Condition \"{}\" ({}) is {}",
                        src.at,
                        src.fragment,
                        cond.name,
                        taken
                    ),
                    None => trace_pkt!(st, pkt, Trace, "Condition ({}) is {}", cond.name, taken),
                }
                if taken {
                    cond.true_next
                } else {
                    cond.false_next
                }
            }
            Node::Table(t) => {
                let next = apply_table::<true>(p, st, pkt, t);
                if pkt.flags.exit {
                    break;
                }
                next
            }
        };
    }
    pkt.flags.exit = false;
    trace_pkt!(st, pkt, Debug, "Pipeline '{}': end", pipe.name);
}

/// Runs an action with its trace: its name, then each primitive with its source line.
pub fn run_action_traced(
    p: &Program,
    st: &mut State,
    pkt: &mut Packet,
    action: u32,
    data: &[u128],
) {
    let Some(def) = p.actions.get(action as usize) else {
        return;
    };
    trace_pkt!(st, pkt, Trace, "Action {}", def.name);
    let sources = p.trace_names.primitives.get(action as usize);
    let mut pc = 0;
    while let Some(prim) = def.prims.get(pc) {
        pc += 1;
        match prim {
            Prim::Jump(t) => pc = *t as usize,
            Prim::JumpIfZero(e, t) => {
                if eval(p, st, pkt, data, e) == 0 {
                    pc = *t as usize;
                }
            }
            _ => {
                match sources.and_then(|s| s.get(pc - 1)).and_then(Option::as_ref) {
                    Some(src) => {
                        trace_pkt!(st, pkt, Trace, "{} Primitive {}", src.at, src.fragment)
                    }
                    None => trace_pkt!(st, pkt, Trace, "Primitive (no source info)"),
                }
                exec_prim(p, st, pkt, data, prim);
                if pkt.flags.exit {
                    return;
                }
            }
        }
    }
}
