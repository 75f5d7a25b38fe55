//! Match tables at run time: entries, lookup structures per match kind, and
//! action profiles. Lookups build no strings and allocate nothing.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::bits::mask;
use crate::error::RuntimeError;
use crate::exact::ExactIndex;
use crate::lpm::LpmIndex;
use crate::program::{LookupKind, MatchKind, TableDef, TableKey};
use crate::state::{CounterCell, MeterCell};

/// Hash map from a (masked) key to an entry handle.
pub(crate) type KeyMap = HashMap<Box<[u128]>, u32, BuildHasherDefault<KeyHasher>>;

/// A fast multiplicative hasher for table keys: keys are control-plane data,
/// so SipHash's flooding resistance buys nothing on the packet path.
#[derive(Default, Clone, Copy)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    #[inline]
    fn write_u128(&mut self, v: u128) {
        self.write_u64(v as u64);
        self.write_u64((v >> 64) as u64);
    }

    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// The match value of one key element of an entry: a lookup component's
/// (`u128`), or a whole match field's as bytes at the control plane (see `keys`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatchValue<V = u128> {
    /// Exact value.
    Exact(V),
    /// Value and prefix length.
    Lpm(V, u32),
    /// Value and mask.
    Ternary(V, V),
    /// Inclusive range.
    Range(V, V),
    /// Exact value or don't care.
    Optional(Option<V>),
}

/// The error for a bad match value of key component `kd` of `table`.
pub(crate) fn key_error(table: &str, kd: &TableKey, what: &str) -> RuntimeError {
    RuntimeError::InvalidArgument(format!(
        "table {table}: key {} ({:?}): {what}",
        kd.name, kd.kind
    ))
}

impl MatchValue {
    #[inline]
    fn matches(&self, key: u128, width: u32) -> bool {
        match *self {
            MatchValue::Exact(v) => key == v,
            MatchValue::Lpm(v, p) => key & prefix_mask(width, p) == v,
            MatchValue::Ternary(v, m) => key & m == v,
            MatchValue::Range(lo, hi) => key >= lo && key <= hi,
            MatchValue::Optional(None) => true,
            MatchValue::Optional(Some(v)) => key == v,
        }
    }
}

/// Mask of the top `prefix` bits of a `width`-bit value.
pub fn prefix_mask(width: u32, prefix: u32) -> u128 {
    if prefix == 0 {
        0
    } else {
        mask(width) & !mask(width - prefix.min(width))
    }
}

/// What an entry executes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryAction {
    /// An action (index) with its data.
    Direct { action: u32, data: Vec<u128> },
    /// An action profile member.
    Member(u32),
    /// An action selector group.
    Group(u32),
}

/// One table entry.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Key values, in key order.
    pub keys: Vec<MatchValue>,
    /// BMv2 priority: lower wins.
    pub priority: i32,
    /// Action to run.
    pub action: EntryAction,
    /// Direct counter.
    pub counter: CounterCell,
    /// Direct meter.
    pub meter: MeterCell,
    /// Part of the program's const entries.
    pub is_const: bool,
}

/// Run-time state of one table.
#[derive(Debug, Default)]
pub struct TableState {
    entries: Vec<Option<Entry>>,
    free: Vec<u32>,
    len: usize,
    // Created with the first entry, in the form the key's widths call for.
    exact: Option<ExactIndex>,
    // Used by LPM tables.
    lpm: LpmIndex,
    // Handles sorted by (priority, handle).
    ordered: Vec<u32>,
    // Default action (on miss).
    default: Option<EntryAction>,
    /// Default action may not be changed.
    pub default_const: bool,
    /// Table has const entries: no add/modify/delete.
    pub immutable: bool,
    // Each handle's action as native code reads it, and where to find it.
    calls: Vec<NativeCall>,
    view: NativeView,
}

/// Byte offset of a [`TableState`]'s entry count (a `usize`): native code
/// tests an inlined keyless table for entries with one load (`crate::jit`).
pub(crate) const LEN_OFFSET: usize = std::mem::offset_of!(TableState, len);

/// Byte offset of a [`TableState`]'s [`NativeView`].
pub(crate) const VIEW_OFFSET: usize = std::mem::offset_of!(TableState, view);

/// Action data values a [`NativeCall`] carries; an entry with more is
/// applied by the interpreter.
pub(crate) const CALL_DATA: usize = 8;

/// [`NativeCall::action`] of a miss with no default action: nothing runs.
pub(crate) const NO_ACTION: u32 = u32::MAX;

/// [`NativeCall::action`] of an entry native code leaves to the interpreter:
/// a profile's member or group, or more data than [`CALL_DATA`].
pub(crate) const INTERPRETED: u32 = u32::MAX - 1;

/// An entry's (or the default's) action as native code reads it: a copy,
/// kept in step by every method of [`TableState`] that changes an action.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct NativeCall {
    /// The action's index, or [`NO_ACTION`] or [`INTERPRETED`].
    pub action: u32,
    /// Values of `data` in use.
    pub len: u32,
    /// The action data, zero past `len`.
    pub data: [u128; CALL_DATA],
}

impl NativeCall {
    /// The call native code leaves to the interpreter.
    const LEFT: NativeCall = NativeCall {
        action: INTERPRETED,
        len: 0,
        data: [0; CALL_DATA],
    };

    /// The call that runs `action`.
    fn of(action: Option<&EntryAction>) -> NativeCall {
        let mut call = NativeCall::LEFT;
        match action {
            None => call.action = NO_ACTION,
            Some(EntryAction::Direct { action, data }) if data.len() <= CALL_DATA => {
                call.action = *action;
                call.len = data.len() as u32;
                call.data[..data.len()].copy_from_slice(data);
            }
            Some(_) => {}
        }
        call
    }
}

/// What native code reads to apply an exact or LPM table in place
/// (`crate::jit`): the direct index's handles (an exact table of a narrow
/// key) and each handle's [`NativeCall`], as address and length (0 and 0
/// when there are none), and the default's call. The
/// addresses are those of buffers the [`TableState`] owns, set again by each
/// of its methods that may move one.
#[repr(C)]
#[derive(Debug)]
pub(crate) struct NativeView {
    /// Address of the direct index's slots (`u32` handles, `u32::MAX` for none).
    pub slots: usize,
    /// Their number.
    pub slots_len: usize,
    /// Address of the handles' calls.
    pub calls: usize,
    /// Their number.
    pub calls_len: usize,
    /// The call a miss runs.
    pub default: NativeCall,
}

impl Default for NativeView {
    fn default() -> NativeView {
        NativeView {
            slots: 0,
            slots_len: 0,
            calls: 0,
            calls_len: 0,
            default: NativeCall::of(None),
        }
    }
}

impl Clone for TableState {
    fn clone(&self) -> TableState {
        let mut t = TableState {
            entries: self.entries.clone(),
            free: self.free.clone(),
            len: self.len,
            exact: self.exact.clone(),
            lpm: self.lpm.clone(),
            ordered: self.ordered.clone(),
            default: self.default.clone(),
            default_const: self.default_const,
            immutable: self.immutable,
            calls: self.calls.clone(),
            view: NativeView::default(),
        };
        // The copy's view must name the copy's buffers, not the original's.
        t.view.default = self.view.default;
        t.sync_addresses();
        t
    }
}

impl TableState {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the table has no entries.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The default (miss) action.
    pub fn default_action(&self) -> Option<&EntryAction> {
        self.default.as_ref()
    }

    /// Sets the default (miss) action.
    pub fn set_default(&mut self, action: Option<EntryAction>) {
        self.view.default = NativeCall::of(action.as_ref());
        self.default = action;
    }

    /// Points the entry `handle` at another action; None when there is no such entry.
    pub fn set_action(&mut self, handle: u32, action: EntryAction) -> Option<()> {
        self.entry_mut(handle)?.action = action;
        self.sync_call(handle);
        Some(())
    }

    /// Copies entry `handle`'s action into its [`NativeCall`] ([`INTERPRETED`]
    /// for no entry), and sets the view's addresses again.
    fn sync_call(&mut self, handle: u32) {
        let h = handle as usize;
        if self.calls.len() < self.entries.len() {
            self.calls.resize(self.entries.len(), NativeCall::LEFT);
        }
        let call = match self.entries.get(h) {
            Some(Some(e)) => NativeCall::of(Some(&e.action)),
            _ => NativeCall::LEFT,
        };
        if let Some(c) = self.calls.get_mut(h) {
            *c = call;
        }
        self.sync_addresses();
    }

    /// Sets the view's addresses and lengths to the buffers they name now.
    fn sync_addresses(&mut self) {
        (self.view.slots, self.view.slots_len) = match &self.exact {
            Some(ExactIndex::Direct(slots)) => (slots.as_ptr() as usize, slots.len()),
            _ => (0, 0),
        };
        self.view.calls = self.calls.as_ptr() as usize;
        self.view.calls_len = self.calls.len();
    }

    /// Entry by handle.
    pub fn entry(&self, handle: u32) -> Option<&Entry> {
        self.entries.get(handle as usize).and_then(|e| e.as_ref())
    }

    /// Mutable entry by handle (its counter and meter; its action changes
    /// through [`TableState::set_action`], which keeps native code's copy in step).
    pub fn entry_mut(&mut self, handle: u32) -> Option<&mut Entry> {
        self.entries
            .get_mut(handle as usize)
            .and_then(|e| e.as_mut())
    }

    /// All live entries with their handles, in handle order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &Entry)> {
        self.entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| e.as_ref().map(|e| (i as u32, e)))
    }

    /// The entry an exact or LPM table's packed key finds (see [`TableDef::field_key`]).
    #[inline]
    pub fn lookup_packed(&self, key: u64) -> Option<u32> {
        match &self.exact {
            Some(exact) => exact.get_packed(key),
            None => self.lpm.get_packed(key),
        }
    }

    /// Looks up `key` (one value per key element, masks applied); returns the handle.
    #[inline]
    pub fn lookup(&self, def: &TableDef, key: &[u128], scratch: &mut Vec<u128>) -> Option<u32> {
        match def.lookup {
            LookupKind::Exact => self.exact.as_ref()?.get(&def.keys, key),
            LookupKind::Lpm => self.lpm.get(&def.keys, key, scratch),
            LookupKind::Ordered => self.ordered.iter().copied().find(|&h| {
                let Some(e) = &self.entries[h as usize] else {
                    return false;
                };
                e.keys
                    .iter()
                    .zip(key)
                    .zip(&def.keys)
                    .all(|((m, k), kd)| m.matches(*k, kd.width))
            }),
        }
    }

    fn hash_key(def: &TableDef, keys: &[MatchValue]) -> (Box<[u128]>, u32) {
        let mut plen = 0;
        let v: Vec<u128> = keys
            .iter()
            .zip(&def.keys)
            .map(|(m, kd)| match *m {
                MatchValue::Exact(v) => v,
                MatchValue::Lpm(v, p) => {
                    plen = p;
                    v & prefix_mask(kd.width, p)
                }
                MatchValue::Ternary(v, _) | MatchValue::Range(v, _) => v,
                MatchValue::Optional(v) => v.unwrap_or(0),
            })
            .collect();
        (v.into_boxed_slice(), plen)
    }

    /// Checks and normalises an entry's key against the table definition.
    pub fn normalise(
        def: &TableDef,
        keys: &mut [MatchValue],
        priority: i32,
    ) -> Result<(), RuntimeError> {
        if keys.len() != def.keys.len() {
            return Err(RuntimeError::InvalidArgument(format!(
                "table {}: {} key values given, the key has {} elements",
                def.name,
                keys.len(),
                def.keys.len()
            )));
        }
        for (m, kd) in keys.iter_mut().zip(&def.keys) {
            let w = mask(kd.width);
            let bad = |what: &str| Err(key_error(&def.name, kd, what));
            *m = match (kd.kind, m.clone()) {
                (MatchKind::Exact, MatchValue::Exact(v)) => {
                    if v & !w != 0 {
                        return bad("value wider than the key");
                    }
                    MatchValue::Exact(v)
                }
                (MatchKind::Lpm, MatchValue::Lpm(v, p)) => {
                    if p > kd.width {
                        return bad("prefix length longer than the key");
                    }
                    if v & !w != 0 {
                        return bad("value wider than the key");
                    }
                    MatchValue::Lpm(v & prefix_mask(kd.width, p), p)
                }
                (MatchKind::Lpm, MatchValue::Exact(v)) => MatchValue::Lpm(v & w, kd.width),
                (MatchKind::Ternary, MatchValue::Ternary(v, mk)) => {
                    if (v | mk) & !w != 0 {
                        return bad("value or mask wider than the key");
                    }
                    MatchValue::Ternary(v & mk, mk)
                }
                (MatchKind::Ternary, MatchValue::Exact(v)) => MatchValue::Ternary(v & w, w),
                // p4c writes `optional` keys as ternary: a value or don't-care.
                (MatchKind::Ternary, MatchValue::Optional(v)) => {
                    MatchValue::Ternary(v.unwrap_or(0) & w, if v.is_some() { w } else { 0 })
                }
                (MatchKind::Range, MatchValue::Range(lo, hi)) => {
                    if lo > hi || hi & !w != 0 {
                        return bad("range low above high or wider than the key");
                    }
                    MatchValue::Range(lo, hi)
                }
                (MatchKind::Range, MatchValue::Exact(v)) => MatchValue::Range(v, v),
                (MatchKind::Optional, MatchValue::Optional(v)) => {
                    MatchValue::Optional(v.map(|x| x & w))
                }
                (MatchKind::Optional, MatchValue::Exact(v)) => MatchValue::Optional(Some(v & w)),
                (MatchKind::Optional, MatchValue::Ternary(v, mk)) if mk == 0 || mk == w => {
                    MatchValue::Optional((mk != 0).then_some(v & w))
                }
                _ => return bad("match value of the wrong kind"),
            };
        }
        if def.lookup == LookupKind::Ordered && priority < 0 {
            return Err(RuntimeError::InvalidArgument(format!(
                "table {}: entries of a ternary/range table need a priority >= 0",
                def.name
            )));
        }
        Ok(())
    }

    /// Adds an entry; returns its handle.
    pub fn add(&mut self, def: &TableDef, mut entry: Entry) -> Result<u32, RuntimeError> {
        Self::normalise(def, &mut entry.keys, entry.priority)?;
        if self.len >= def.max_size {
            return Err(RuntimeError::ResourceExhausted(format!(
                "table {} is full ({} entries)",
                def.name, def.max_size
            )));
        }
        if self.find(def, &entry.keys, entry.priority).is_some() {
            return Err(RuntimeError::AlreadyExists(format!(
                "table {}: an entry with this key exists",
                def.name
            )));
        }
        let handle = match self.free.pop() {
            Some(h) => h,
            None => {
                self.entries.push(None);
                (self.entries.len() - 1) as u32
            }
        };
        match def.lookup {
            LookupKind::Exact => {
                self.exact
                    .get_or_insert_with(|| ExactIndex::for_keys(&def.keys))
                    .insert(&def.keys, &Self::hash_key(def, &entry.keys).0, handle);
            }
            LookupKind::Lpm => {
                let (k, plen) = Self::hash_key(def, &entry.keys);
                self.lpm.insert(&def.keys, &k, plen, handle);
            }
            LookupKind::Ordered => {
                let prio = entry.priority;
                let entries = &self.entries;
                let at = self.ordered.partition_point(|&h| {
                    entries[h as usize]
                        .as_ref()
                        .is_some_and(|e| (e.priority, h) < (prio, handle))
                });
                self.ordered.insert(at, handle);
            }
        }
        self.entries[handle as usize] = Some(entry);
        self.len += 1;
        self.sync_call(handle);
        Ok(handle)
    }

    /// Finds the handle of the entry with exactly this (normalised) key and priority.
    pub fn find(&self, def: &TableDef, keys: &[MatchValue], priority: i32) -> Option<u32> {
        match def.lookup {
            LookupKind::Exact => self
                .exact
                .as_ref()?
                .get(&def.keys, &Self::hash_key(def, keys).0),
            LookupKind::Lpm => {
                let (k, plen) = Self::hash_key(def, keys);
                self.lpm.find(&def.keys, &k, plen)
            }
            LookupKind::Ordered => self.ordered.iter().copied().find(|&h| {
                self.entries[h as usize]
                    .as_ref()
                    .is_some_and(|e| e.priority == priority && e.keys == keys)
            }),
        }
    }

    /// Deletes an entry by handle.
    pub fn delete(&mut self, def: &TableDef, handle: u32) -> Result<Entry, RuntimeError> {
        let entry = self
            .entries
            .get_mut(handle as usize)
            .and_then(|e| e.take())
            .ok_or_else(|| {
                RuntimeError::NotFound(format!("table {}: no entry with handle {handle}", def.name))
            })?;
        match def.lookup {
            LookupKind::Exact => {
                if let Some(index) = &mut self.exact {
                    index.remove(&def.keys, &Self::hash_key(def, &entry.keys).0);
                }
            }
            LookupKind::Lpm => {
                let (k, plen) = Self::hash_key(def, &entry.keys);
                self.lpm.remove(&def.keys, &k, plen);
            }
            LookupKind::Ordered => self.ordered.retain(|&h| h != handle),
        }
        self.free.push(handle);
        self.len -= 1;
        Ok(entry)
    }

    /// Removes every non-const entry.
    pub fn clear(&mut self, def: &TableDef) {
        let handles: Vec<u32> = self
            .iter()
            .filter(|(_, e)| !e.is_const)
            .map(|(h, _)| h)
            .collect();
        for h in handles {
            // The handle was just listed as live, so deletion cannot fail.
            let _ = self.delete(def, h);
        }
    }
}

/// An action profile's members and (for selectors) groups.
#[derive(Debug, Clone, Default)]
pub struct ProfileState {
    /// Member id → (action index, data).
    pub members: HashMap<u32, (u32, Vec<u128>)>,
    /// Group id → member ids.
    pub groups: HashMap<u32, Vec<u32>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{MatchField, TableType};

    fn def(kinds: &[(MatchKind, u32)], lookup: LookupKind) -> TableDef {
        TableDef {
            name: "t".into(),
            keys: kinds
                .iter()
                .map(|&(kind, width)| TableKey::of(kind, width))
                .collect(),
            fields: kinds
                .iter()
                .enumerate()
                .map(|(i, &(kind, width))| MatchField {
                    name: "k".into(),
                    kind,
                    width,
                    parts: (i as u32, 1),
                })
                .collect(),
            lookup,
            field_key: None,
            ty: TableType::Simple,
            profile: None,
            max_size: 16,
            with_counters: false,
            direct_meter: None,
            actions: vec![0],
            next_by_action: vec![None],
            hit_miss: None,
            base_default_next: None,
            default_entry: None,
            const_entries: vec![],
        }
    }

    fn entry(keys: Vec<MatchValue>, priority: i32, action: u32) -> Entry {
        Entry {
            keys,
            priority,
            action: EntryAction::Direct {
                action,
                data: vec![],
            },
            counter: CounterCell::default(),
            meter: MeterCell::default(),
            is_const: false,
        }
    }

    #[test]
    fn lpm_longest_prefix_wins() {
        let d = def(&[(MatchKind::Lpm, 32)], LookupKind::Lpm);
        let mut t = TableState::default();
        let a = t
            .add(&d, entry(vec![MatchValue::Lpm(0x0a00_0000, 8)], 0, 1))
            .unwrap();
        let b = t
            .add(&d, entry(vec![MatchValue::Lpm(0x0a01_0000, 16)], 0, 2))
            .unwrap();
        let mut s = Vec::new();
        assert_eq!(t.lookup(&d, &[0x0a01_0203], &mut s), Some(b));
        assert_eq!(t.lookup(&d, &[0x0a02_0203], &mut s), Some(a));
        assert_eq!(t.lookup(&d, &[0x0b00_0000], &mut s), None);
        assert!(matches!(
            t.add(&d, entry(vec![MatchValue::Lpm(0x0a01_ffff, 16)], 0, 3)),
            Err(RuntimeError::AlreadyExists(_))
        ));
        t.delete(&d, b).unwrap();
        assert_eq!(t.lookup(&d, &[0x0a01_0203], &mut s), Some(a));
    }

    #[test]
    fn ternary_lowest_priority_number_wins() {
        let d = def(&[(MatchKind::Ternary, 16)], LookupKind::Ordered);
        let mut t = TableState::default();
        let lo = t
            .add(&d, entry(vec![MatchValue::Ternary(0x0800, 0xff00)], 20, 1))
            .unwrap();
        let hi = t
            .add(&d, entry(vec![MatchValue::Ternary(0x0800, 0xffff)], 10, 2))
            .unwrap();
        let mut s = Vec::new();
        assert_eq!(t.lookup(&d, &[0x0800], &mut s), Some(hi));
        assert_eq!(t.lookup(&d, &[0x0801], &mut s), Some(lo));
    }

    #[test]
    fn full_table_is_resource_exhausted() {
        let mut d = def(&[(MatchKind::Exact, 8)], LookupKind::Exact);
        d.max_size = 1;
        let mut t = TableState::default();
        t.add(&d, entry(vec![MatchValue::Exact(1)], 0, 1)).unwrap();
        assert!(matches!(
            t.add(&d, entry(vec![MatchValue::Exact(2)], 0, 1)),
            Err(RuntimeError::ResourceExhausted(_))
        ));
        assert!(matches!(
            t.add(&d, entry(vec![MatchValue::Exact(0x100)], 0, 1)),
            Err(RuntimeError::InvalidArgument(_))
        ));
    }
}
