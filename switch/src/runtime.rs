//! The control-plane API of the engine (what a P4Runtime server or the
//! simple_switch CLI drive): tables, action profiles, counters, meters,
//! registers, value sets, multicast groups, clone sessions, ports and the
//! buffer pool. Names are looked up here, never on the packet path.

use bufferlab_tm::{PortConfig, QueueLimit, QueueStats};

use crate::bits::mask;
use crate::engine::{CloneSession, Engine};
use crate::error::RuntimeError;
use crate::hash::Crc;
use crate::program::TableType;
use crate::state::{CounterCell, MeterCell, MeterRate};
use crate::tables::{Entry, EntryAction, MatchValue};

type R<T> = Result<T, RuntimeError>;

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

fn not_found<T>(what: &str, name: &str) -> R<T> {
    Err(RuntimeError::NotFound(format!(
        "{what} '{name}' does not exist"
    )))
}

fn cfg_err(e: bufferlab_tm::ConfigError) -> RuntimeError {
    RuntimeError::InvalidArgument(e.to_string())
}

impl Engine {
    pub(crate) fn table_index(&self, table: &str) -> R<usize> {
        self.prog
            .table_id(table)
            .map(|t| t as usize)
            .map_or_else(|| not_found("table", table), Ok)
    }

    fn checked_action(&self, t: usize, action: &str, data: &[u128]) -> R<u32> {
        let def = &self.prog.tables[t];
        let Some(a) = def
            .actions
            .iter()
            .copied()
            .find(|&a| self.prog.actions[a as usize].name == action)
        else {
            return Err(RuntimeError::InvalidArgument(format!(
                "table {}: action '{action}' is not one of its actions",
                def.name
            )));
        };
        self.check_data(a, data)?;
        Ok(a)
    }

    fn check_data(&self, a: u32, data: &[u128]) -> R<()> {
        let ad = &self.prog.actions[a as usize];
        if ad.params.len() != data.len() {
            return Err(RuntimeError::InvalidArgument(format!(
                "action {}: {} parameters given, it takes {}",
                ad.name,
                data.len(),
                ad.params.len()
            )));
        }
        for ((name, w), v) in ad.params.iter().zip(data) {
            if v & !mask(*w) != 0 {
                return Err(RuntimeError::InvalidArgument(format!(
                    "action {}: parameter {name} does not fit in {w} bits",
                    ad.name
                )));
            }
        }
        Ok(())
    }

    fn mutable_table(&self, t: usize) -> R<()> {
        if self.st.tables[t].immutable {
            return Err(RuntimeError::PermissionDenied(format!(
                "table {} has const entries and cannot be changed",
                self.prog.tables[t].name
            )));
        }
        Ok(())
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
        let t = self.table_index(table)?;
        self.mutable_table(t)?;
        if self.prog.tables[t].ty != TableType::Simple {
            return Err(RuntimeError::InvalidArgument(format!(
                "table {table} is indirect: add members or groups"
            )));
        }
        let a = self.checked_action(t, action, &data)?;
        self.insert(t, keys, EntryAction::Direct { action: a, data }, priority)
    }

    /// Adds an entry of an indirect table pointing at a member or group.
    pub fn table_add_indirect(
        &mut self,
        table: &str,
        keys: Vec<MatchValue>,
        target: EntryAction,
        priority: i32,
    ) -> R<u32> {
        let t = self.table_index(table)?;
        self.mutable_table(t)?;
        self.check_indirect(t, &target)?;
        self.insert(t, keys, target, priority)
    }

    fn check_indirect(&self, t: usize, target: &EntryAction) -> R<()> {
        let def = &self.prog.tables[t];
        let Some(p) = def.profile else {
            return Err(RuntimeError::InvalidArgument(format!(
                "table {} is not indirect",
                def.name
            )));
        };
        let prof = &self.st.profiles[p as usize];
        match target {
            EntryAction::Member(m) if prof.members.contains_key(m) => Ok(()),
            EntryAction::Group(g)
                if def.ty == TableType::IndirectWs && prof.groups.contains_key(g) =>
            {
                Ok(())
            }
            EntryAction::Group(_) if def.ty != TableType::IndirectWs => {
                Err(RuntimeError::InvalidArgument(format!(
                    "table {} has no selector: groups are not allowed",
                    def.name
                )))
            }
            EntryAction::Direct { .. } => Err(RuntimeError::InvalidArgument(format!(
                "table {} is indirect",
                def.name
            ))),
            other => Err(RuntimeError::NotFound(format!(
                "{other:?} does not exist in profile {}",
                self.prog.profiles[p as usize].name
            ))),
        }
    }

    fn insert(
        &mut self,
        t: usize,
        keys: Vec<MatchValue>,
        action: EntryAction,
        priority: i32,
    ) -> R<u32> {
        let e = Entry {
            keys,
            priority,
            action,
            counter: CounterCell::default(),
            meter: MeterCell::default(),
            is_const: false,
        };
        self.st.tables[t].add(&self.prog.tables[t], e)
    }

    /// Finds the handle of the entry with this key (and priority for ternary/range tables).
    pub fn table_find(&self, table: &str, mut keys: Vec<MatchValue>, priority: i32) -> R<u32> {
        let t = self.table_index(table)?;
        let def = &self.prog.tables[t];
        crate::tables::TableState::normalise(def, &mut keys, priority)?;
        self.st.tables[t]
            .find(def, &keys, priority)
            .ok_or_else(|| RuntimeError::NotFound(format!("table {table}: no entry with this key")))
    }

    /// Changes the action of an entry (its counter is kept).
    pub fn table_modify(
        &mut self,
        table: &str,
        handle: u32,
        action: &str,
        data: Vec<u128>,
    ) -> R<()> {
        let t = self.table_index(table)?;
        self.mutable_table(t)?;
        let a = self.checked_action(t, action, &data)?;
        let e = self.st.tables[t].entry_mut(handle).ok_or_else(|| {
            RuntimeError::NotFound(format!("table {table}: no entry with handle {handle}"))
        })?;
        e.action = EntryAction::Direct { action: a, data };
        Ok(())
    }

    /// Points an indirect entry at another member or group.
    pub fn table_modify_indirect(
        &mut self,
        table: &str,
        handle: u32,
        target: EntryAction,
    ) -> R<()> {
        let t = self.table_index(table)?;
        self.mutable_table(t)?;
        self.check_indirect(t, &target)?;
        let e = self.st.tables[t].entry_mut(handle).ok_or_else(|| {
            RuntimeError::NotFound(format!("table {table}: no entry with handle {handle}"))
        })?;
        e.action = target;
        Ok(())
    }

    /// Deletes an entry.
    pub fn table_delete(&mut self, table: &str, handle: u32) -> R<()> {
        let t = self.table_index(table)?;
        self.mutable_table(t)?;
        self.st.tables[t]
            .delete(&self.prog.tables[t], handle)
            .map(|_| ())
    }

    /// Deletes every entry (const entries stay).
    pub fn table_clear(&mut self, table: &str) -> R<()> {
        let t = self.table_index(table)?;
        self.mutable_table(t)?;
        self.st.tables[t].clear(&self.prog.tables[t]);
        Ok(())
    }

    /// Reads every entry.
    pub fn table_entries(&self, table: &str) -> R<Vec<EntryView>> {
        let t = self.table_index(table)?;
        Ok(self.st.tables[t]
            .iter()
            .map(|(handle, e)| {
                let (action, data, indirect) = match &e.action {
                    EntryAction::Direct { action, data } => (
                        Some(self.prog.actions[*action as usize].name.clone()),
                        data.clone(),
                        None,
                    ),
                    other => (None, vec![], Some(other.clone())),
                };
                EntryView {
                    handle,
                    keys: e.keys.clone(),
                    priority: e.priority,
                    action,
                    data,
                    indirect,
                    counter: e.counter,
                    is_const: e.is_const,
                }
            })
            .collect())
    }

    /// Sets the default (miss) action.
    pub fn table_set_default(&mut self, table: &str, action: &str, data: Vec<u128>) -> R<()> {
        let t = self.table_index(table)?;
        if self.st.tables[t].default_const {
            return Err(RuntimeError::PermissionDenied(format!(
                "table {table}: the default action is const"
            )));
        }
        let a = self.checked_action(t, action, &data)?;
        self.st.tables[t].default = Some(EntryAction::Direct { action: a, data });
        Ok(())
    }

    /// Restores the program's default action.
    pub fn table_reset_default(&mut self, table: &str) -> R<()> {
        let t = self.table_index(table)?;
        if self.st.tables[t].default_const {
            return Err(RuntimeError::PermissionDenied(format!(
                "table {table}: the default action is const"
            )));
        }
        self.st.tables[t].default =
            self.prog.tables[t]
                .default_entry
                .as_ref()
                .map(|(a, d, _)| EntryAction::Direct {
                    action: *a,
                    data: d.clone(),
                });
        Ok(())
    }

    /// The default action's name and data.
    pub fn table_default(&self, table: &str) -> R<Option<(String, Vec<u128>)>> {
        let t = self.table_index(table)?;
        Ok(match &self.st.tables[t].default {
            Some(EntryAction::Direct { action, data }) => Some((
                self.prog.actions[*action as usize].name.clone(),
                data.clone(),
            )),
            _ => None,
        })
    }

    /// Direct counter of an entry.
    pub fn table_counter(&self, table: &str, handle: u32) -> R<CounterCell> {
        let t = self.table_index(table)?;
        self.st.tables[t]
            .entry(handle)
            .map(|e| e.counter)
            .ok_or_else(|| {
                RuntimeError::NotFound(format!("table {table}: no entry with handle {handle}"))
            })
    }

    /// Overwrites the direct counter of an entry.
    pub fn table_counter_write(&mut self, table: &str, handle: u32, value: CounterCell) -> R<()> {
        let t = self.table_index(table)?;
        let e = self.st.tables[t].entry_mut(handle).ok_or_else(|| {
            RuntimeError::NotFound(format!("table {table}: no entry with handle {handle}"))
        })?;
        e.counter = value;
        Ok(())
    }

    /// Configures the direct meter of an entry (committed, peak).
    pub fn table_meter_set(&mut self, table: &str, handle: u32, rates: [MeterRate; 2]) -> R<()> {
        let t = self.table_index(table)?;
        if self.prog.tables[t].direct_meter.is_none() {
            return Err(RuntimeError::InvalidArgument(format!(
                "table {table} has no direct meter"
            )));
        }
        let now = self.now();
        let e = self.st.tables[t].entry_mut(handle).ok_or_else(|| {
            RuntimeError::NotFound(format!("table {table}: no entry with handle {handle}"))
        })?;
        e.meter.set_rates(rates, now);
        Ok(())
    }

    /// The direct meter configuration of an entry (committed, peak), if set.
    pub fn table_meter_get(&self, table: &str, handle: u32) -> R<Option<[MeterRate; 2]>> {
        let t = self.table_index(table)?;
        self.st.tables[t]
            .entry(handle)
            .map(|e| e.meter.rates)
            .ok_or_else(|| {
                RuntimeError::NotFound(format!("table {table}: no entry with handle {handle}"))
            })
    }

    /// Action profile members as (member id, action name, data), by member id.
    pub fn profile_members(&self, profile: &str) -> R<Vec<(u32, String, Vec<u128>)>> {
        let p = self.profile_index(profile)?;
        let mut v: Vec<_> = self.st.profiles[p]
            .members
            .iter()
            .map(|(m, (a, d))| (*m, self.prog.actions[*a as usize].name.clone(), d.clone()))
            .collect();
        v.sort_by_key(|x| x.0);
        Ok(v)
    }

    /// Selector groups as (group id, member ids), by group id.
    pub fn profile_groups(&self, profile: &str) -> R<Vec<(u32, Vec<u32>)>> {
        let p = self.profile_index(profile)?;
        let mut v: Vec<_> = self.st.profiles[p]
            .groups
            .iter()
            .map(|(g, m)| (*g, m.clone()))
            .collect();
        v.sort_by_key(|x| x.0);
        Ok(v)
    }

    /// Multicast group ids, ascending.
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

    fn profile_index(&self, profile: &str) -> R<usize> {
        self.prog
            .profiles
            .iter()
            .position(|p| p.name == profile)
            .map_or_else(|| not_found("action profile", profile), Ok)
    }

    fn profile_action(&self, p: usize, action: &str, data: &[u128]) -> R<u32> {
        // A member's action must belong to some table using this profile.
        let a = self
            .prog
            .tables
            .iter()
            .filter(|t| t.profile == Some(p as u32))
            .flat_map(|t| t.actions.iter().copied())
            .find(|&a| self.prog.actions[a as usize].name == action)
            .ok_or_else(|| {
                RuntimeError::InvalidArgument(format!(
                    "action '{action}' is not usable with profile {}",
                    self.prog.profiles[p].name
                ))
            })?;
        self.check_data(a, data)?;
        Ok(a)
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
        let p = self.profile_index(profile)?;
        let a = self.profile_action(p, action, &data)?;
        let prof = &mut self.st.profiles[p];
        match (prof.members.contains_key(&member), modify) {
            (true, false) => {
                return Err(RuntimeError::AlreadyExists(format!(
                    "profile {profile}: member {member} exists"
                )))
            }
            (false, true) => {
                return Err(RuntimeError::NotFound(format!(
                    "profile {profile}: no member {member}"
                )))
            }
            _ => {}
        }
        if !modify && prof.members.len() >= self.prog.profiles[p].max_size {
            return Err(RuntimeError::ResourceExhausted(format!(
                "profile {profile} is full"
            )));
        }
        prof.members.insert(member, (a, data));
        Ok(())
    }

    /// Deletes a member (refused while a group or entry uses it).
    pub fn profile_member_delete(&mut self, profile: &str, member: u32) -> R<()> {
        let p = self.profile_index(profile)?;
        let in_use = self.st.profiles[p]
            .groups
            .values()
            .any(|g| g.contains(&member))
            || self.prog.tables.iter().enumerate().any(|(t, def)| {
                def.profile == Some(p as u32)
                    && self.st.tables[t]
                        .iter()
                        .any(|(_, e)| e.action == EntryAction::Member(member))
            });
        if in_use {
            return Err(RuntimeError::FailedPrecondition(format!(
                "profile {profile}: member {member} is in use"
            )));
        }
        self.st.profiles[p]
            .members
            .remove(&member)
            .map(|_| ())
            .ok_or_else(|| RuntimeError::NotFound(format!("profile {profile}: no member {member}")))
    }

    /// Creates or replaces a selector group with the given members.
    pub fn profile_group_set(
        &mut self,
        profile: &str,
        group: u32,
        members: Vec<u32>,
        modify: bool,
    ) -> R<()> {
        let p = self.profile_index(profile)?;
        if self.prog.profiles[p].selector.is_none() {
            return Err(RuntimeError::InvalidArgument(format!(
                "profile {profile} is not a selector"
            )));
        }
        let prof = &mut self.st.profiles[p];
        if let Some(m) = members.iter().find(|m| !prof.members.contains_key(m)) {
            return Err(RuntimeError::NotFound(format!(
                "profile {profile}: no member {m}"
            )));
        }
        match (prof.groups.contains_key(&group), modify) {
            (true, false) => {
                return Err(RuntimeError::AlreadyExists(format!(
                    "profile {profile}: group {group} exists"
                )))
            }
            (false, true) => {
                return Err(RuntimeError::NotFound(format!(
                    "profile {profile}: no group {group}"
                )))
            }
            _ => {}
        }
        prof.groups.insert(group, members);
        Ok(())
    }

    /// Deletes a selector group.
    pub fn profile_group_delete(&mut self, profile: &str, group: u32) -> R<()> {
        let p = self.profile_index(profile)?;
        let in_use = self.prog.tables.iter().enumerate().any(|(t, def)| {
            def.profile == Some(p as u32)
                && self.st.tables[t]
                    .iter()
                    .any(|(_, e)| e.action == EntryAction::Group(group))
        });
        if in_use {
            return Err(RuntimeError::FailedPrecondition(format!(
                "profile {profile}: group {group} is in use"
            )));
        }
        self.st.profiles[p]
            .groups
            .remove(&group)
            .map(|_| ())
            .ok_or_else(|| RuntimeError::NotFound(format!("profile {profile}: no group {group}")))
    }

    fn array_index<'a>(
        mut names: impl Iterator<Item = &'a str>,
        what: &str,
        name: &str,
    ) -> R<usize> {
        names
            .position(|n| n == name)
            .map_or_else(|| not_found(what, name), Ok)
    }

    fn cell_index(len: usize, index: u64, name: &str) -> R<usize> {
        let i = index as usize;
        if i >= len {
            return Err(RuntimeError::OutOfRange(format!(
                "{name}: index {index} is outside 0..{len}"
            )));
        }
        Ok(i)
    }

    /// Reads an indirect counter cell.
    pub fn counter_read(&self, name: &str, index: u64) -> R<CounterCell> {
        let c = Self::array_index(
            self.prog.counters.iter().map(|c| c.name.as_str()),
            "counter",
            name,
        )?;
        let i = Self::cell_index(self.st.counters[c].len(), index, name)?;
        Ok(self.st.counters[c][i])
    }

    /// Writes an indirect counter cell.
    pub fn counter_write(&mut self, name: &str, index: u64, value: CounterCell) -> R<()> {
        let c = Self::array_index(
            self.prog.counters.iter().map(|c| c.name.as_str()),
            "counter",
            name,
        )?;
        let i = Self::cell_index(self.st.counters[c].len(), index, name)?;
        self.st.counters[c][i] = value;
        Ok(())
    }

    /// Zeroes every cell of a counter array (direct counters included).
    pub fn counter_reset(&mut self, name: &str) -> R<()> {
        let c = Self::array_index(
            self.prog.counters.iter().map(|c| c.name.as_str()),
            "counter",
            name,
        )?;
        self.st.counters[c]
            .iter_mut()
            .for_each(|x| *x = CounterCell::default());
        if let Some(t) = self.prog.counters[c].direct_table {
            let handles: Vec<u32> = self.st.tables[t as usize].iter().map(|(h, _)| h).collect();
            for h in handles {
                if let Some(e) = self.st.tables[t as usize].entry_mut(h) {
                    e.counter = CounterCell::default();
                }
            }
        }
        Ok(())
    }

    /// Configures an indirect meter cell (committed, peak), or clears it with `None`.
    pub fn meter_set(&mut self, name: &str, index: u64, rates: Option<[MeterRate; 2]>) -> R<()> {
        let m = Self::array_index(
            self.prog.meters.iter().map(|m| m.name.as_str()),
            "meter",
            name,
        )?;
        let i = Self::cell_index(self.st.meters[m].len(), index, name)?;
        let now = self.now();
        match rates {
            Some(r) => self.st.meters[m][i].set_rates(r, now),
            None => self.st.meters[m][i].reset(),
        }
        Ok(())
    }

    /// Reads a meter cell's configuration.
    pub fn meter_get(&self, name: &str, index: u64) -> R<Option<[MeterRate; 2]>> {
        let m = Self::array_index(
            self.prog.meters.iter().map(|m| m.name.as_str()),
            "meter",
            name,
        )?;
        let i = Self::cell_index(self.st.meters[m].len(), index, name)?;
        Ok(self.st.meters[m][i].rates)
    }

    /// Reads a register cell.
    pub fn register_read(&self, name: &str, index: u64) -> R<u128> {
        let r = Self::array_index(
            self.prog.registers.iter().map(|r| r.name.as_str()),
            "register",
            name,
        )?;
        let i = Self::cell_index(self.st.registers[r].len(), index, name)?;
        Ok(self.st.registers[r][i])
    }

    /// Writes a register cell (the value must fit the register width).
    pub fn register_write(&mut self, name: &str, index: u64, value: u128) -> R<()> {
        let r = Self::array_index(
            self.prog.registers.iter().map(|r| r.name.as_str()),
            "register",
            name,
        )?;
        let i = Self::cell_index(self.st.registers[r].len(), index, name)?;
        let w = self.prog.registers[r].width;
        if value & !mask(w) != 0 {
            return Err(RuntimeError::InvalidArgument(format!(
                "{name}: value does not fit in {w} bits"
            )));
        }
        self.st.registers[r][i] = value;
        Ok(())
    }

    /// Zeroes every cell of a register array.
    pub fn register_reset(&mut self, name: &str) -> R<()> {
        let r = Self::array_index(
            self.prog.registers.iter().map(|r| r.name.as_str()),
            "register",
            name,
        )?;
        self.st.registers[r].iter_mut().for_each(|x| *x = 0);
        Ok(())
    }

    /// Adds a value (with mask) to a parser value set.
    pub fn value_set_add(&mut self, name: &str, value: u128, vmask: Option<u128>) -> R<()> {
        let v = Self::array_index(
            self.prog.value_sets.iter().map(|v| v.name.as_str()),
            "value set",
            name,
        )?;
        let vs = &self.prog.value_sets[v];
        let m = vmask.unwrap_or(mask(vs.width)) & mask(vs.width);
        let entry = (value & m, m);
        if self.st.vsets[v].contains(&entry) {
            return Err(RuntimeError::AlreadyExists(format!(
                "value set {name}: value exists"
            )));
        }
        if self.st.vsets[v].len() >= vs.max_size {
            return Err(RuntimeError::ResourceExhausted(format!(
                "value set {name} is full"
            )));
        }
        self.st.vsets[v].push(entry);
        Ok(())
    }

    /// Removes one value (with its mask, as added) from a parser value set.
    pub fn value_set_remove(&mut self, name: &str, value: u128, vmask: Option<u128>) -> R<()> {
        let v = Self::array_index(
            self.prog.value_sets.iter().map(|v| v.name.as_str()),
            "value set",
            name,
        )?;
        let m = vmask.unwrap_or(mask(self.prog.value_sets[v].width))
            & mask(self.prog.value_sets[v].width);
        let entry = (value & m, m);
        let Some(i) = self.st.vsets[v].iter().position(|e| *e == entry) else {
            return Err(RuntimeError::NotFound(format!(
                "value set {name}: no such value"
            )));
        };
        self.st.vsets[v].remove(i);
        Ok(())
    }

    /// A parser value set's values as (value, mask), in the order they were added.
    pub fn value_set_values(&self, name: &str) -> R<Vec<(u128, u128)>> {
        let v = Self::array_index(
            self.prog.value_sets.iter().map(|v| v.name.as_str()),
            "value set",
            name,
        )?;
        Ok(self.st.vsets[v].clone())
    }

    /// Removes every value of a parser value set.
    pub fn value_set_clear(&mut self, name: &str) -> R<()> {
        let v = Self::array_index(
            self.prog.value_sets.iter().map(|v| v.name.as_str()),
            "value set",
            name,
        )?;
        self.st.vsets[v].clear();
        Ok(())
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
            None => (0..bufferlab_tm::MAX_QUEUES).collect(),
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
        self.st.drop_port = port;
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
            16 => self.st.crc16_custom = crc,
            32 => self.st.crc32_custom = crc,
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
        std::mem::take(&mut self.st.log)
    }
}
