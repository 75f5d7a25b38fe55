//! Tables and action profiles from Python: names, entries, defaults, direct
//! counters and meters, members and groups.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use super::convert::{keys, kind_name, match_tuple, rates_pair, rates_tuple, PyKey};
use super::errors::rt;
use super::PyEngine;
use crate::runtime::Object;
use crate::state::CounterCell;
use crate::tables::EntryAction;

#[pymethods]
impl PyEngine {
    /// Table keys as (name, match kind, width in bits).
    fn table_keys(
        &self,
        py: Python<'_>,
        table: &str,
    ) -> PyResult<Vec<(String, &'static str, u32)>> {
        Ok(self
            .engine(py)
            .table_def(table)
            .map_err(rt)?
            .fields
            .iter()
            .map(|k| (k.name.clone(), kind_name(k.kind), k.width))
            .collect())
    }

    /// Names of the actions.
    fn action_names(&self, py: Python<'_>) -> Vec<String> {
        self.engine(py).object_names(Object::Action)
    }

    /// Names of the counter arrays (direct ones included).
    fn counter_names(&self, py: Python<'_>) -> Vec<String> {
        self.engine(py).object_names(Object::Counter)
    }

    /// Names of the register arrays.
    fn register_names(&self, py: Python<'_>) -> Vec<String> {
        self.engine(py).object_names(Object::Register)
    }

    /// Names of the meter arrays.
    fn meter_names(&self, py: Python<'_>) -> Vec<String> {
        self.engine(py).object_names(Object::Meter)
    }

    /// Names of a table's actions.
    fn table_actions(&self, py: Python<'_>, table: &str) -> PyResult<Vec<String>> {
        self.engine(py).table_action_names(table).map_err(rt)
    }

    /// Names of the tables.
    fn tables(&self, py: Python<'_>) -> Vec<String> {
        self.engine(py).object_names(Object::Table)
    }

    /// Action parameters as (name, width in bits).
    fn action_params(&self, py: Python<'_>, action: &str) -> PyResult<Vec<(String, u32)>> {
        self.engine(py).action_params(action).map_err(rt)
    }

    /// Width in bits of a field (`header.field` or alias).
    fn field_width(&self, py: Python<'_>, name: &str) -> PyResult<u32> {
        self.engine(py).field_width(name).map_err(rt)
    }

    /// Adds an entry; keys are (kind, a, b) tuples in key order; returns the handle.
    #[pyo3(signature = (table, keys, action, data, priority = 0))]
    fn table_add(
        &self,
        py: Python<'_>,
        table: &str,
        keys: Vec<PyKey<'_>>,
        action: &str,
        data: Vec<u128>,
        priority: i32,
    ) -> PyResult<u32> {
        let mut e = self.engine(py);
        let keys = self::keys(&e, table, keys)?;
        e.table_add(table, keys, action, data, priority).map_err(rt)
    }

    /// Adds an entry of an indirect table pointing at a member (`group=False`) or group.
    #[pyo3(signature = (table, keys, target, group = false, priority = 0))]
    fn table_add_indirect(
        &self,
        py: Python<'_>,
        table: &str,
        keys: Vec<PyKey<'_>>,
        target: u32,
        group: bool,
        priority: i32,
    ) -> PyResult<u32> {
        let t = if group {
            EntryAction::Group(target)
        } else {
            EntryAction::Member(target)
        };
        let mut e = self.engine(py);
        let keys = self::keys(&e, table, keys)?;
        e.table_add_indirect(table, keys, t, priority).map_err(rt)
    }

    /// Handle of the entry with this key.
    #[pyo3(signature = (table, keys, priority = 0))]
    fn table_find(
        &self,
        py: Python<'_>,
        table: &str,
        keys: Vec<PyKey<'_>>,
        priority: i32,
    ) -> PyResult<u32> {
        let e = self.engine(py);
        e.table_find(table, self::keys(&e, table, keys)?, priority)
            .map_err(rt)
    }

    /// Changes an entry's action.
    fn table_modify(
        &self,
        py: Python<'_>,
        table: &str,
        handle: u32,
        action: &str,
        data: Vec<u128>,
    ) -> PyResult<()> {
        self.engine(py)
            .table_modify(table, handle, action, data)
            .map_err(rt)
    }

    /// Points an indirect entry at another member (`group=False`) or group.
    #[pyo3(signature = (table, handle, target, group = false))]
    fn table_modify_indirect(
        &self,
        py: Python<'_>,
        table: &str,
        handle: u32,
        target: u32,
        group: bool,
    ) -> PyResult<()> {
        let t = if group {
            EntryAction::Group(target)
        } else {
            EntryAction::Member(target)
        };
        self.engine(py)
            .table_modify_indirect(table, handle, t)
            .map_err(rt)
    }

    /// Deletes an entry.
    fn table_delete(&self, py: Python<'_>, table: &str, handle: u32) -> PyResult<()> {
        self.engine(py).table_delete(table, handle).map_err(rt)
    }

    /// Deletes every non-const entry.
    fn table_clear(&self, py: Python<'_>, table: &str) -> PyResult<()> {
        self.engine(py).table_clear(table).map_err(rt)
    }

    /// Entries as dicts (handle, keys, priority, action, data, member/group, packets, bytes, const).
    fn table_entries<'py>(&self, py: Python<'py>, table: &str) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        let engine = self.engine(py);
        for e in engine.table_entries(table).map_err(rt)? {
            let d = PyDict::new(py);
            d.set_item("handle", e.handle)?;
            let ks = engine
                .table_key_values(table, &e.keys)
                .map_err(rt)?
                .iter()
                .map(|k| match_tuple(py, k))
                .collect::<PyResult<Vec<_>>>()?;
            d.set_item("keys", ks)?;
            d.set_item("priority", e.priority)?;
            d.set_item("action", e.action)?;
            d.set_item("data", e.data)?;
            match e.indirect {
                Some(EntryAction::Member(m)) => d.set_item("member", m)?,
                Some(EntryAction::Group(g)) => d.set_item("group", g)?,
                _ => {}
            }
            d.set_item("packets", e.counter.packets)?;
            d.set_item("bytes", e.counter.bytes)?;
            d.set_item("const", e.is_const)?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// Sets the default action.
    fn table_set_default(
        &self,
        py: Python<'_>,
        table: &str,
        action: &str,
        data: Vec<u128>,
    ) -> PyResult<()> {
        self.engine(py)
            .table_set_default(table, action, data)
            .map_err(rt)
    }

    /// Restores the program's default action.
    fn table_reset_default(&self, py: Python<'_>, table: &str) -> PyResult<()> {
        self.engine(py).table_reset_default(table).map_err(rt)
    }

    /// Default action (name, data) or None.
    fn table_default(&self, py: Python<'_>, table: &str) -> PyResult<Option<(String, Vec<u128>)>> {
        self.engine(py).table_default(table).map_err(rt)
    }

    /// Direct counter of an entry: (packets, bytes).
    fn table_counter(&self, py: Python<'_>, table: &str, handle: u32) -> PyResult<(u64, u64)> {
        self.engine(py)
            .table_counter(table, handle)
            .map(|c| (c.packets, c.bytes))
            .map_err(rt)
    }

    /// Configures an entry's direct meter: committed/peak rates (units/s) and bursts (units).
    #[allow(clippy::too_many_arguments)]
    fn table_meter_set(
        &self,
        py: Python<'_>,
        table: &str,
        handle: u32,
        cir: u64,
        cburst: u64,
        pir: u64,
        pburst: u64,
    ) -> PyResult<()> {
        let r = rates_pair(cir, cburst, pir, pburst);
        self.engine(py)
            .table_meter_set(table, handle, r)
            .map_err(rt)
    }

    /// Overwrites an entry's direct counter.
    fn table_counter_write(
        &self,
        py: Python<'_>,
        table: &str,
        handle: u32,
        packets: u64,
        bytes: u64,
    ) -> PyResult<()> {
        self.engine(py)
            .table_counter_write(table, handle, CounterCell { packets, bytes })
            .map_err(rt)
    }

    /// An entry's direct meter as (cir, cburst, pir, pburst), or None if unconfigured.
    fn table_meter_get(
        &self,
        py: Python<'_>,
        table: &str,
        handle: u32,
    ) -> PyResult<Option<(u64, u64, u64, u64)>> {
        self.engine(py)
            .table_meter_get(table, handle)
            .map(rates_tuple)
            .map_err(rt)
    }

    /// Action profile members as (member id, action, data).
    fn profile_members(
        &self,
        py: Python<'_>,
        profile: &str,
    ) -> PyResult<Vec<(u32, String, Vec<u128>)>> {
        self.engine(py).profile_members(profile).map_err(rt)
    }

    /// Selector groups as (group id, member ids).
    fn profile_groups(&self, py: Python<'_>, profile: &str) -> PyResult<Vec<(u32, Vec<u32>)>> {
        self.engine(py).profile_groups(profile).map_err(rt)
    }

    /// Names of the action profiles and selectors.
    fn profile_names(&self, py: Python<'_>) -> Vec<String> {
        self.engine(py).object_names(Object::Profile)
    }

    /// Adds (or with `modify` replaces) an action profile member.
    #[pyo3(signature = (profile, member, action, data, modify = false))]
    fn profile_member_set(
        &self,
        py: Python<'_>,
        profile: &str,
        member: u32,
        action: &str,
        data: Vec<u128>,
        modify: bool,
    ) -> PyResult<()> {
        self.engine(py)
            .profile_member_set(profile, member, action, data, modify)
            .map_err(rt)
    }

    /// Deletes an action profile member.
    fn profile_member_delete(&self, py: Python<'_>, profile: &str, member: u32) -> PyResult<()> {
        self.engine(py)
            .profile_member_delete(profile, member)
            .map_err(rt)
    }

    /// Creates (or with `modify` replaces) a selector group.
    #[pyo3(signature = (profile, group, members, modify = false))]
    fn profile_group_set(
        &self,
        py: Python<'_>,
        profile: &str,
        group: u32,
        members: Vec<u32>,
        modify: bool,
    ) -> PyResult<()> {
        self.engine(py)
            .profile_group_set(profile, group, members, modify)
            .map_err(rt)
    }

    /// Deletes a selector group.
    fn profile_group_delete(&self, py: Python<'_>, profile: &str, group: u32) -> PyResult<()> {
        self.engine(py)
            .profile_group_delete(profile, group)
            .map_err(rt)
    }
}
