//! Applying a match-action table: key, lookup, direct resources and action.

use super::calc::calc_value;
use super::eval::eval;
use super::walk::run_action_traced;
use super::State;
use crate::bits::mask;
use crate::exact::pack_fields;
use crate::packet::Packet;
use crate::program::*;
use crate::tables::EntryAction;
use crate::trace::hex_bytes;
use crate::{trace_if, trace_pkt};

/// An entry's action as plain ids, so resolving it borrows nothing.
#[derive(Clone, Copy)]
enum Target {
    Action(u32),
    Member(u32),
    Group(u32),
}

/// Copies a direct entry's data into the action-data scratch and returns its target.
fn entry_target(ea: &EntryAction, adata: &mut Vec<u128>) -> Target {
    adata.clear();
    match ea {
        EntryAction::Direct { action, data } => {
            adata.extend_from_slice(data);
            Target::Action(*action)
        }
        EntryAction::Member(m) => Target::Member(*m),
        EntryAction::Group(g) => Target::Group(*g),
    }
}

/// Resolves a target to an action; a member's or group's data goes into the scratch.
#[inline]
fn resolve_action(
    p: &Program,
    st: &mut State,
    pkt: &Packet,
    t: u32,
    target: Target,
) -> Option<u32> {
    match target {
        Target::Action(a) => Some(a),
        Target::Member(m) => member_action(p, st, t, m),
        Target::Group(g) => group_action(p, st, pkt, t, g),
    }
}

/// A selector group's member for this packet (by the selector's hash), resolved.
fn group_action(p: &Program, st: &mut State, pkt: &Packet, t: u32, g: u32) -> Option<u32> {
    let prof = p.tables[t as usize].profile? as usize;
    let n = st.profiles[prof].groups.get(&g)?.len();
    if n == 0 {
        return None;
    }
    let h = match &p.profiles[prof].selector {
        Some(sel) => calc_value(p, st, pkt, sel) & p.profiles[prof].selector_mask,
        None => 0,
    };
    let member = st.profiles[prof].groups.get(&g)?[(h % n as u64) as usize];
    member_action(p, st, t, member)
}

/// An action profile member's action, its data copied into the scratch.
fn member_action(p: &Program, st: &mut State, t: u32, member: u32) -> Option<u32> {
    let prof = p.tables[t as usize].profile? as usize;
    let (a, data) = st.profiles[prof].members.get(&member)?;
    st.adata.clear();
    st.adata.extend_from_slice(data);
    Some(*a)
}

/// Applies a table: lookup, direct counter/meter, action; returns the next node. The
/// traced form (`TRACED`) also traces the key, the hit or miss, the action and its steps.
pub fn apply_table<const TRACED: bool>(
    p: &Program,
    st: &mut State,
    pkt: &mut Packet,
    t: u32,
) -> Option<Node> {
    let def = &p.tables[t as usize];
    if TRACED {
        trace_key(p, st, pkt, def);
    }
    let state = &st.tables[t as usize];
    let keyless_miss = def.keys.is_empty() && state.is_empty();
    let hit = if keyless_miss {
        None
    } else if let Some(key) = &def.field_key {
        state.lookup_packed(pack_fields(&pkt.phv.fields, key))
    } else {
        let mut key = std::mem::take(&mut st.key);
        key.clear();
        for k in &def.keys {
            let mut v = eval(p, st, pkt, &[], &k.expr);
            if let Some(m) = k.mask {
                v &= m;
            }
            key.push(v & mask(k.width));
        }
        let hit = st.tables[t as usize].lookup(def, &key, &mut st.key2);
        st.key = key;
        hit
    };
    match hit {
        Some(h) => trace_if!(
            TRACED,
            st,
            pkt,
            Debug,
            "Table '{}': hit with handle {}",
            def.name,
            h
        ),
        None => trace_if!(TRACED, st, pkt, Debug, "Table '{}': miss", def.name),
    }
    let (action, is_hit) = match hit {
        Some(h) => {
            let now = pkt.now;
            let len = u64::from(pkt.ingress_len);
            let entry = st.tables[t as usize].entry_mut(h)?;
            if def.with_counters {
                entry.counter.count(len);
            }
            let colour = def.direct_meter.map(|(m, target)| {
                let units = if p.meters[m as usize].bytes { len } else { 1 };
                (entry.meter.execute(units, now), target)
            });
            let target = entry_target(&entry.action, &mut st.adata);
            if let Some((c, Some(f))) = colour {
                pkt.phv.set(p, f, c & st.fmask[f as usize]);
            }
            (resolve_action(p, st, pkt, t, target), true)
        }
        None => match st.tables[t as usize].default_action() {
            Some(ea) => {
                let target = entry_target(ea, &mut st.adata);
                (resolve_action(p, st, pkt, t, target), false)
            }
            None => (None, false),
        },
    };
    // Direct externs (DirectLpf, DirectWred, DirectRegisterAction) address the hit entry.
    st.externs.hit = Some((t, hit));
    if let Some(a) = action {
        let data = std::mem::take(&mut st.adata);
        if TRACED {
            let entry = action_entry(p, a, &data);
            trace_if!(TRACED, st, pkt, Debug, "{}", entry);
        }
        if TRACED {
            run_action_traced(p, st, pkt, a, &data);
        } else {
            crate::flat::run_action(p, st, pkt, a, &data);
        }
        st.adata = data;
    }
    match def.hit_miss {
        Some((h, m)) => {
            if is_hit {
                h
            } else {
                m
            }
        }
        None => action.map_or(def.base_default_next, |a| def.next_by_action[a as usize]),
    }
}

/// Traces a table's application and its key, one `* field : value` line per match
/// field, names padded to the longest, as BMv2's "Looking up key:" block.
fn trace_key(p: &Program, st: &mut State, pkt: &Packet, def: &TableDef) {
    trace_pkt!(st, pkt, Trace, "Applying table '{}'", def.name);
    let pad = def.fields.iter().map(|f| f.name.len()).max().unwrap_or(0);
    let mut text = String::from("Looking up key:\n");
    for f in &def.fields {
        let (first, count) = (f.parts.0 as usize, f.parts.1 as usize);
        let mut value = String::new();
        for k in def.keys.get(first..first + count).unwrap_or(&[]) {
            let mut v = eval(p, st, pkt, &[], &k.expr);
            if let Some(m) = k.mask {
                v &= m;
            }
            value.push_str(&hex_bytes(v & mask(k.width), k.width));
        }
        text.push_str(&format!("* {:pad$} : {value}\n", f.name));
    }
    trace_pkt!(st, pkt, Debug, "{}", text);
}

/// BMv2's "Action entry is A - d1,d2," line for the action a table runs.
fn action_entry(p: &Program, a: u32, data: &[u128]) -> String {
    let name = p.actions.get(a as usize).map_or("?", |d| d.name.as_str());
    let values: String = data.iter().map(|v| format!("{v:x},")).collect();
    format!("Action entry is {name} - {values}")
        .trim_end()
        .to_string()
}
