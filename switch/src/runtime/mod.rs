//! The control-plane API of the engine (what a P4Runtime server or the
//! simple_switch CLI drive): tables, action profiles, counters, meters,
//! registers, value sets, multicast groups, clone sessions, ports and the
//! buffer pool. Names are looked up here, never on the packet path.
//!
//! Tables and stateful objects belong to one loaded program (a [`Gress`]:
//! v1model's program, or a TNA pipe's ingress or egress); the engine finds the
//! gress an object's name belongs to and hands the call to it.

mod filters;
mod stateful;
mod tables;
pub mod tofino_tm;

use bufferlab_tm::{PortConfig, QueueLimit, QueueStats};

use crate::engine::{CloneSession, Engine};
use crate::error::RuntimeError;
use crate::hash::Crc;
use crate::program::{Program, TableDef};
use crate::state::{CounterCell, MeterRate};
use crate::tables::{EntryAction, MatchValue};

pub(crate) type R<T> = Result<T, RuntimeError>;

/// One table entry as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryView {
    /// Handle (stable while the entry exists).
    pub handle: u32,
    /// Key values.
    pub keys: Vec<MatchValue>,
    /// Priority (BMv2: lower wins).
    pub priority: i32,
    /// Action name, or None for member/group entries.
    pub action: Option<String>,
    /// Action data.
    pub data: Vec<u128>,
    /// Member or group id for indirect tables.
    pub indirect: Option<EntryAction>,
    /// Direct counter.
    pub counter: CounterCell,
    /// Part of the program's const entries.
    pub is_const: bool,
}

/// The error for a name the program does not have.
pub(crate) fn not_found<T>(what: &str, name: &str) -> R<T> {
    Err(RuntimeError::NotFound(format!(
        "{what} '{name}' does not exist"
    )))
}

fn cfg_err(e: bufferlab_tm::ConfigError) -> RuntimeError {
    RuntimeError::InvalidArgument(e.to_string())
}

/// The kinds of named object a control-plane call addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Object {
    Action,
    Table,
    Profile,
    Counter,
    Meter,
    Register,
    ValueSet,
    Lpf,
    Wred,
}

impl Object {
    /// Whether program `p` has an object of this kind named `name`.
    fn in_program(self, p: &Program, name: &str) -> bool {
        match self {
            Object::Action => p.action_index(name).is_some(),
            Object::Table => p.table_id(name).is_some(),
            Object::Profile => p.profiles.iter().any(|x| x.name == name),
            Object::Counter => p.counters.iter().any(|x| x.name == name),
            Object::Meter => p.meters.iter().any(|x| x.name == name),
            Object::Register => p.registers.iter().any(|x| x.name == name),
            Object::ValueSet => p.value_sets.iter().any(|x| x.name == name),
            Object::Lpf => p.externs.lpfs.iter().any(|x| x.name == name),
            Object::Wred => p.externs.wreds.iter().any(|x| x.name == name),
        }
    }

    /// The word error messages use.
    fn word(self) -> &'static str {
        match self {
            Object::Action => "action",
            Object::Table => "table",
            Object::Profile => "action profile",
            Object::Counter => "counter",
            Object::Meter => "meter",
            Object::Register => "register",
            Object::ValueSet => "value set",
            Object::Lpf => "Lpf",
            Object::Wred => "Wred",
        }
    }
}

impl Engine {
    /// The gress an object named `name` belongs to, and its name there. v1model has one
    /// gress. A TNA program's names may carry their pipe's name (`pipe.Ingress.fwd`,
    /// as P4Info writes them) or not (`Ingress.fwd`, when one pipe has it).
    pub(crate) fn locate<'n>(&self, kind: Object, name: &'n str) -> R<(usize, &'n str)> {
        let Some(tna) = self.tna.as_deref() else {
            return Ok((0, name));
        };
        for (pipe, pipe_name) in tna.pipe_names().enumerate() {
            if let Some(local) = name
                .strip_prefix(pipe_name)
                .and_then(|r| r.strip_prefix('.'))
            {
                for g in [2 * pipe, 2 * pipe + 1] {
                    if kind.in_program(&self.gress(g).prog, local) {
                        return Ok((g, local));
                    }
                }
            }
        }
        let mut found =
            (0..self.gress_count()).filter(|&g| kind.in_program(&self.gress(g).prog, name));
        match (found.next(), found.next()) {
            (Some(g), None) => Ok((g, name)),
            (Some(_), Some(_)) => Err(RuntimeError::InvalidArgument(format!(
                "{} '{name}' is in more than one pipe: name it with its pipe ('<pipe>.{name}')",
                kind.word()
            ))),
            (None, _) => not_found(kind.word(), name),
        }
    }

    /// The names of every object of a kind, as the control plane names them: a TNA
    /// program's carry their pipe (`pipe.Ingress.fwd`) but actions, which P4Info
    /// names without it.
    pub fn object_names(&self, kind: Object) -> Vec<String> {
        let mut names = vec![];
        for g in 0..self.gress_count() {
            let p = &self.gress(g).prog;
            let local: Vec<&str> = match kind {
                Object::Action => p.actions.iter().map(|x| x.name.as_str()).collect(),
                Object::Table => p.tables.iter().map(|x| x.name.as_str()).collect(),
                Object::Profile => p.profiles.iter().map(|x| x.name.as_str()).collect(),
                Object::Counter => p.counters.iter().map(|x| x.name.as_str()).collect(),
                Object::Meter => p.meters.iter().map(|x| x.name.as_str()).collect(),
                Object::Register => p.registers.iter().map(|x| x.name.as_str()).collect(),
                Object::ValueSet => p.value_sets.iter().map(|x| x.name.as_str()).collect(),
                Object::Lpf => p.externs.lpfs.iter().map(|x| x.name.as_str()).collect(),
                Object::Wred => p.externs.wreds.iter().map(|x| x.name.as_str()).collect(),
            };
            let pipe = match (&self.tna, kind) {
                (Some(t), k) if k != Object::Action => t.pipe_names().nth(g / 2),
                _ => None,
            };
            for n in local {
                let name = pipe.map_or_else(|| n.to_string(), |pipe| format!("{pipe}.{n}"));
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        names
    }

    /// The names of a table's actions.
    pub fn table_action_names(&self, table: &str) -> R<Vec<String>> {
        let (p, t) = self.table_program(table)?;
        Ok(p.tables[t as usize]
            .actions
            .iter()
            .map(|a| p.actions[*a as usize].name.clone())
            .collect())
    }

    /// An action's parameters as (name, width in bits).
    pub fn action_params(&self, action: &str) -> R<Vec<(String, u32)>> {
        let (g, local) = self.locate(Object::Action, action)?;
        let p = &self.gress(g).prog;
        p.action_index(local)
            .map(|a| p.actions[a as usize].params.clone())
            .map_or_else(|| not_found("action", action), Ok)
    }

    /// The width in bits of a field (`header.field` or alias; of the first gress that
    /// has it).
    pub fn field_width(&self, name: &str) -> R<u32> {
        (0..self.gress_count())
            .find_map(|g| {
                let p = &self.gress(g).prog;
                p.field(name).map(|f| p.fields[f as usize].width)
            })
            .map_or_else(|| not_found("field", name), Ok)
    }

    /// A table's definition, by its control-plane name.
    pub fn table_def(&self, table: &str) -> R<&TableDef> {
        let (g, local) = self.locate(Object::Table, table)?;
        let p = &self.gress(g).prog;
        p.table_id(local)
            .map(|t| &p.tables[t as usize])
            .map_or_else(|| not_found("table", table), Ok)
    }

    /// The program holding table `table`, and the table's index there.
    pub fn table_program(&self, table: &str) -> R<(&Program, u32)> {
        let (g, local) = self.locate(Object::Table, table)?;
        let p = &self.gress(g).prog;
        p.table_id(local)
            .map(|t| (p, t))
            .map_or_else(|| not_found("table", table), Ok)
    }

    /// Adds an entry running `action(data)`; returns its handle.
    pub fn table_add(
        &mut self,
        table: &str,
        keys: Vec<MatchValue>,
        action: &str,
        data: Vec<u128>,
        priority: i32,
    ) -> R<u32> {
        let (g, local) = self.locate(Object::Table, table)?;
        self.gress_mut(g)
            .table_add(local, keys, action, data, priority)
    }

    /// Adds an entry of an indirect table pointing at a member or group.
    pub fn table_add_indirect(
        &mut self,
        table: &str,
        keys: Vec<MatchValue>,
        target: EntryAction,
        priority: i32,
    ) -> R<u32> {
        let (g, local) = self.locate(Object::Table, table)?;
        self.gress_mut(g)
            .table_add_indirect(local, keys, target, priority)
    }

    /// Finds the handle of the entry with this key (and priority for ternary/range tables).
    pub fn table_find(&self, table: &str, keys: Vec<MatchValue>, priority: i32) -> R<u32> {
        let (g, local) = self.locate(Object::Table, table)?;
        self.gress(g).table_find(local, keys, priority)
    }

    /// Changes the action of an entry (its counter is kept).
    pub fn table_modify(
        &mut self,
        table: &str,
        handle: u32,
        action: &str,
        data: Vec<u128>,
    ) -> R<()> {
        let (g, local) = self.locate(Object::Table, table)?;
        self.gress_mut(g).table_modify(local, handle, action, data)
    }

    /// Points an indirect entry at another member or group.
    pub fn table_modify_indirect(
        &mut self,
        table: &str,
        handle: u32,
        target: EntryAction,
    ) -> R<()> {
        let (g, local) = self.locate(Object::Table, table)?;
        self.gress_mut(g)
            .table_modify_indirect(local, handle, target)
    }

    /// Deletes an entry.
    pub fn table_delete(&mut self, table: &str, handle: u32) -> R<()> {
        let (g, local) = self.locate(Object::Table, table)?;
        self.gress_mut(g).table_delete(local, handle)
    }

    /// Deletes every entry (const entries stay).
    pub fn table_clear(&mut self, table: &str) -> R<()> {
        let (g, local) = self.locate(Object::Table, table)?;
        self.gress_mut(g).table_clear(local)
    }

    /// Reads every entry.
    pub fn table_entries(&self, table: &str) -> R<Vec<EntryView>> {
        let (g, local) = self.locate(Object::Table, table)?;
        self.gress(g).table_entries(local)
    }

    /// Sets the default (miss) action.
    pub fn table_set_default(&mut self, table: &str, action: &str, data: Vec<u128>) -> R<()> {
        let (g, local) = self.locate(Object::Table, table)?;
        self.gress_mut(g).table_set_default(local, action, data)
    }

    /// Restores the program's default action.
    pub fn table_reset_default(&mut self, table: &str) -> R<()> {
        let (g, local) = self.locate(Object::Table, table)?;
        self.gress_mut(g).table_reset_default(local)
    }

    /// The default action's name and data.
    pub fn table_default(&self, table: &str) -> R<Option<(String, Vec<u128>)>> {
        let (g, local) = self.locate(Object::Table, table)?;
        self.gress(g).table_default(local)
    }

    /// Direct counter of an entry.
    pub fn table_counter(&self, table: &str, handle: u32) -> R<CounterCell> {
        let (g, local) = self.locate(Object::Table, table)?;
        self.gress(g).table_counter(local, handle)
    }

    /// Overwrites the direct counter of an entry.
    pub fn table_counter_write(&mut self, table: &str, handle: u32, value: CounterCell) -> R<()> {
        let (g, local) = self.locate(Object::Table, table)?;
        self.gress_mut(g).table_counter_write(local, handle, value)
    }

    /// Configures the direct meter of an entry (committed, peak).
    pub fn table_meter_set(&mut self, table: &str, handle: u32, rates: [MeterRate; 2]) -> R<()> {
        let (g, local) = self.locate(Object::Table, table)?;
        let now = self.now;
        self.gress_mut(g).table_meter_set(local, handle, rates, now)
    }

    /// The direct meter configuration of an entry (committed, peak), if set.
    pub fn table_meter_get(&self, table: &str, handle: u32) -> R<Option<[MeterRate; 2]>> {
        let (g, local) = self.locate(Object::Table, table)?;
        self.gress(g).table_meter_get(local, handle)
    }

    /// Action profile members as (member id, action name, data), by member id.
    pub fn profile_members(&self, profile: &str) -> R<Vec<(u32, String, Vec<u128>)>> {
        let (g, local) = self.locate(Object::Profile, profile)?;
        self.gress(g).profile_members(local)
    }

    /// Selector groups as (group id, member ids), by group id.
    pub fn profile_groups(&self, profile: &str) -> R<Vec<(u32, Vec<u32>)>> {
        let (g, local) = self.locate(Object::Profile, profile)?;
        self.gress(g).profile_groups(local)
    }

    /// Adds (or, with `modify`, replaces) an action profile member.
    pub fn profile_member_set(
        &mut self,
        profile: &str,
        member: u32,
        action: &str,
        data: Vec<u128>,
        modify: bool,
    ) -> R<()> {
        let (g, local) = self.locate(Object::Profile, profile)?;
        self.gress_mut(g)
            .profile_member_set(local, member, action, data, modify)
    }

    /// Deletes a member (refused while a group or entry uses it).
    pub fn profile_member_delete(&mut self, profile: &str, member: u32) -> R<()> {
        let (g, local) = self.locate(Object::Profile, profile)?;
        self.gress_mut(g).profile_member_delete(local, member)
    }

    /// Creates or replaces a selector group with the given members.
    pub fn profile_group_set(
        &mut self,
        profile: &str,
        group: u32,
        members: Vec<u32>,
        modify: bool,
    ) -> R<()> {
        let (g, local) = self.locate(Object::Profile, profile)?;
        self.gress_mut(g)
            .profile_group_set(local, group, members, modify)
    }

    /// Deletes a selector group.
    pub fn profile_group_delete(&mut self, profile: &str, group: u32) -> R<()> {
        let (g, local) = self.locate(Object::Profile, profile)?;
        self.gress_mut(g).profile_group_delete(local, group)
    }

    /// Reads an indirect counter cell.
    pub fn counter_read(&self, name: &str, index: u64) -> R<CounterCell> {
        let (g, local) = self.locate(Object::Counter, name)?;
        self.gress(g).counter_read(local, index)
    }

    /// Writes an indirect counter cell.
    pub fn counter_write(&mut self, name: &str, index: u64, value: CounterCell) -> R<()> {
        let (g, local) = self.locate(Object::Counter, name)?;
        self.gress_mut(g).counter_write(local, index, value)
    }

    /// Zeroes every cell of a counter array (direct counters included).
    pub fn counter_reset(&mut self, name: &str) -> R<()> {
        let (g, local) = self.locate(Object::Counter, name)?;
        self.gress_mut(g).counter_reset(local)
    }

    /// Configures an indirect meter cell (committed, peak), or clears it with `None`.
    pub fn meter_set(&mut self, name: &str, index: u64, rates: Option<[MeterRate; 2]>) -> R<()> {
        let (g, local) = self.locate(Object::Meter, name)?;
        let now = self.now;
        self.gress_mut(g).meter_set(local, index, rates, now)
    }

    /// Reads a meter cell's configuration.
    pub fn meter_get(&self, name: &str, index: u64) -> R<Option<[MeterRate; 2]>> {
        let (g, local) = self.locate(Object::Meter, name)?;
        self.gress(g).meter_get(local, index)
    }

    /// Reads a register cell.
    pub fn register_read(&self, name: &str, index: u64) -> R<u128> {
        let (g, local) = self.locate(Object::Register, name)?;
        self.gress(g).register_read(local, index)
    }

    /// Writes a register cell (the value must fit the register width).
    pub fn register_write(&mut self, name: &str, index: u64, value: u128) -> R<()> {
        let (g, local) = self.locate(Object::Register, name)?;
        self.gress_mut(g).register_write(local, index, value)
    }

    /// Zeroes every cell of a register array.
    pub fn register_reset(&mut self, name: &str) -> R<()> {
        let (g, local) = self.locate(Object::Register, name)?;
        self.gress_mut(g).register_reset(local)
    }

    /// Adds a value (with mask) to a parser value set.
    pub fn value_set_add(&mut self, name: &str, value: u128, vmask: Option<u128>) -> R<()> {
        let (g, local) = self.locate(Object::ValueSet, name)?;
        self.gress_mut(g).value_set_add(local, value, vmask)
    }

    /// Removes one value (with its mask, as added) from a parser value set.
    pub fn value_set_remove(&mut self, name: &str, value: u128, vmask: Option<u128>) -> R<()> {
        let (g, local) = self.locate(Object::ValueSet, name)?;
        self.gress_mut(g).value_set_remove(local, value, vmask)
    }

    /// A parser value set's values as (value, mask), in the order they were added.
    pub fn value_set_values(&self, name: &str) -> R<Vec<(u128, u128)>> {
        let (g, local) = self.locate(Object::ValueSet, name)?;
        self.gress(g).value_set_values(local)
    }

    /// Removes every value of a parser value set.
    pub fn value_set_clear(&mut self, name: &str) -> R<()> {
        let (g, local) = self.locate(Object::ValueSet, name)?;
        self.gress_mut(g).value_set_clear(local)
    }

    pub fn mc_groups(&self) -> Vec<u16> {
        let mut v: Vec<u16> = self.mcast.keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// Clone session ids, ascending.
    pub fn clone_sessions(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.sessions.keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// Creates or replaces a multicast group: replicas as (egress port, replication id).
    pub fn mc_group_set(&mut self, group: u16, replicas: Vec<(u16, u16)>) -> R<()> {
        if group == 0 {
            return Err(RuntimeError::InvalidArgument(
                "multicast group 0 means 'no multicast'".into(),
            ));
        }
        if let Some((p, _)) = replicas.iter().find(|(p, _)| *p >= bufferlab_tm::NUM_PORTS) {
            return Err(RuntimeError::InvalidArgument(format!(
                "port {p}: ports are 0..=511"
            )));
        }
        self.mcast.insert(
            group,
            replicas.into_iter().map(|(p, rid)| (rid, p)).collect(),
        );
        Ok(())
    }

    /// Deletes a multicast group.
    pub fn mc_group_delete(&mut self, group: u16) -> R<()> {
        self.mcast
            .remove(&group)
            .map(|_| ())
            .ok_or_else(|| RuntimeError::NotFound(format!("multicast group {group}")))
    }

    /// A multicast group's replicas as (egress port, replication id).
    pub fn mc_group_get(&self, group: u16) -> R<Vec<(u16, u16)>> {
        self.mcast
            .get(&group)
            .map(|r| r.iter().map(|(rid, p)| (*p, *rid)).collect())
            .ok_or_else(|| RuntimeError::NotFound(format!("multicast group {group}")))
    }

    /// Creates or replaces a clone session (id 0..=32767).
    pub fn clone_session_set(&mut self, id: u32, session: CloneSession) -> R<()> {
        if id > 32767 {
            return Err(RuntimeError::InvalidArgument(format!(
                "clone session {id}: ids are 0..=32767"
            )));
        }
        if session.port.is_none() && session.mcast_grp.is_none() {
            return Err(RuntimeError::InvalidArgument(format!(
                "clone session {id}: needs a port or a multicast group"
            )));
        }
        self.sessions.insert(id, session);
        Ok(())
    }

    /// Deletes a clone session.
    pub fn clone_session_delete(&mut self, id: u32) -> R<()> {
        self.sessions
            .remove(&id)
            .map(|_| ())
            .ok_or_else(|| RuntimeError::NotFound(format!("clone session {id}")))
    }

    /// Reads a clone session.
    pub fn clone_session_get(&self, id: u32) -> R<CloneSession> {
        self.sessions
            .get(&id)
            .copied()
            .ok_or_else(|| RuntimeError::NotFound(format!("clone session {id}")))
    }

    /// Replaces a port's traffic-manager settings.
    pub fn configure_port(&mut self, port: u16, cfg: PortConfig) -> R<()> {
        self.tm.configure_port(port, cfg).map_err(cfg_err)
    }

    /// A port's traffic-manager settings.
    pub fn port_config(&self, port: u16) -> R<PortConfig> {
        self.tm
            .port_config(port)
            .copied()
            .ok_or_else(|| RuntimeError::InvalidArgument(format!("port {port}: ports are 0..=511")))
    }

    /// BMv2 `set_queue_depth`: cap in packets for one queue, a port's queues, or all.
    pub fn set_queue_depth(&mut self, pkts: u32, port: Option<u16>, queue: Option<u8>) -> R<()> {
        self.each_queue(port, queue, |tm, p, q| {
            tm.set_queue_limit(p, q, QueueLimit::Packets(pkts))
        })
    }

    /// BMv2 `set_queue_rate`: departures per second for one queue, a port's queues, or all.
    pub fn set_queue_rate(&mut self, pps: u64, port: Option<u16>, queue: Option<u8>) -> R<()> {
        self.each_queue(port, queue, |tm, p, q| tm.set_queue_rate_pps(p, q, pps))
    }

    fn each_queue(
        &mut self,
        port: Option<u16>,
        queue: Option<u8>,
        mut f: impl FnMut(
            &mut bufferlab_tm::TrafficManager<u32>,
            u16,
            u8,
        ) -> Result<(), bufferlab_tm::ConfigError>,
    ) -> R<()> {
        let ports: Vec<u16> = match port {
            Some(p) => vec![p],
            None => (0..bufferlab_tm::NUM_PORTS).collect(),
        };
        let queues: Vec<u8> = match queue {
            Some(q) => vec![q],
            None => (0..self.tm.queues_per_port()).collect(),
        };
        for p in ports {
            for &q in &queues {
                f(&mut self.tm, p, q).map_err(cfg_err)?;
            }
        }
        Ok(())
    }

    /// Resizes the shared buffer pool, bytes.
    pub fn set_pool_bytes(&mut self, bytes: u64) -> R<()> {
        self.tm.set_pool_bytes(bytes).map_err(cfg_err)
    }

    /// Depth and counters of one queue.
    pub fn queue_stats(&self, port: u16, queue: u8) -> R<QueueStats> {
        self.tm.queue_stats(port, queue).ok_or_else(|| {
            RuntimeError::InvalidArgument(format!("port {port} queue {queue} does not exist"))
        })
    }

    /// Counters of one port (occupancy, transmitted, priority-out-of-range drops).
    pub fn port_stats(&self, port: u16) -> R<bufferlab_tm::PortStats> {
        self.tm
            .port_stats(port)
            .ok_or_else(|| RuntimeError::InvalidArgument(format!("port {port}: ports are 0..=511")))
    }

    /// Frame bytes queued on a port.
    pub fn port_occupancy_bytes(&self, port: u16) -> u64 {
        self.tm.port_occupancy_bytes(port)
    }

    /// Frame bytes held in the shared pool.
    pub fn pool_used_bytes(&self) -> u64 {
        self.tm.pool_used_bytes()
    }

    /// Traffic-manager-wide counters.
    pub fn tm_stats(&self) -> bufferlab_tm::TmStats {
        self.tm.stats()
    }

    /// Honours a PAUSE/PFC frame received on `port` (see the traffic manager).
    pub fn pause(&mut self, port: u16, queue_mask: u8, pause_ns: u64) -> R<()> {
        let now = self.now();
        self.tm
            .pause(now, port, queue_mask, pause_ns)
            .map_err(cfg_err)
    }

    /// Sets the drop port (simple_switch `--drop-port`, default 511).
    pub fn set_drop_port(&mut self, port: u16) {
        for g in self.gresses_mut() {
            g.st.drop_port = port;
        }
    }

    /// Configures `crc16_custom` or `crc32_custom` (width 16 or 32).
    pub fn set_crc_parameters(
        &mut self,
        width: u32,
        poly: u64,
        init: u64,
        xor_out: u64,
        reflect_in: bool,
        reflect_out: bool,
    ) -> R<()> {
        let crc = Crc::new(width, poly, init, xor_out, reflect_in, reflect_out);
        match width {
            16 => self.main.st.crc16_custom = crc,
            32 => self.main.st.crc32_custom = crc,
            _ => {
                return Err(RuntimeError::InvalidArgument(format!(
                    "custom CRC width {width}: 16 or 32"
                )))
            }
        }
        Ok(())
    }

    /// Log lines so far (`log_msg`, failed asserts, priority-out-of-range notices),
    /// removed from the engine.
    pub fn take_log(&mut self) -> Vec<String> {
        let mut lines = vec![];
        for g in self.gresses_mut() {
            lines.append(&mut g.st.log);
        }
        lines
    }
}
