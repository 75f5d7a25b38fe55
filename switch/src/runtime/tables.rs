//! The control-plane API of one loaded program (a gress): match tables and
//! action profiles and selectors. Names are looked up here, never on the packet path.

use super::{not_found, EntryView, R};
use crate::bits::mask;
use crate::error::RuntimeError;
use crate::gress::Gress;
use crate::program::TableType;
use crate::state::{CounterCell, MeterCell, MeterRate};
use crate::tables::{Entry, EntryAction, MatchValue};

impl Gress {
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
        let handle = self.st.tables[t].add(&self.prog.tables[t], e)?;
        // A handle a deleted entry had comes back with fresh direct extern cells.
        self.st.externs.reset_entry(&self.prog, t as u32, handle);
        Ok(handle)
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
        self.st.tables[t]
            .set_action(handle, EntryAction::Direct { action: a, data })
            .ok_or_else(|| {
                RuntimeError::NotFound(format!("table {table}: no entry with handle {handle}"))
            })
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
        self.st.tables[t].set_action(handle, target).ok_or_else(|| {
            RuntimeError::NotFound(format!("table {table}: no entry with handle {handle}"))
        })
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
        self.st.tables[t].set_default(Some(EntryAction::Direct { action: a, data }));
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
        let default =
            self.prog.tables[t]
                .default_entry
                .as_ref()
                .map(|(a, d, _)| EntryAction::Direct {
                    action: *a,
                    data: d.clone(),
                });
        self.st.tables[t].set_default(default);
        Ok(())
    }

    /// The default action's name and data.
    pub fn table_default(&self, table: &str) -> R<Option<(String, Vec<u128>)>> {
        let t = self.table_index(table)?;
        Ok(match self.st.tables[t].default_action() {
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
    pub fn table_meter_set(
        &mut self,
        table: &str,
        handle: u32,
        rates: [MeterRate; 2],
        now: u64,
    ) -> R<()> {
        let t = self.table_index(table)?;
        if self.prog.tables[t].direct_meter.is_none() {
            return Err(RuntimeError::InvalidArgument(format!(
                "table {table} has no direct meter"
            )));
        }
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
}
