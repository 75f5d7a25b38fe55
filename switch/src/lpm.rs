//! The index of a longest-prefix-match table: one map per prefix length in
//! use, longest first, each from the key masked to that length to the entry
//! handle. Like [`crate::exact::ExactIndex`], a key of at most 64 bits in
//! all is packed into one `u64` (so a level's mask is one `and`, and native
//! code can look it up by a packed key); only wider keys hash the component
//! slice.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::bits::mask;
use crate::exact::{pack, ExactIndex};
use crate::program::{MatchKind, TableKey};
use crate::tables::{prefix_mask, KeyHasher, KeyMap};

/// Longest-prefix-match index of one table.
#[derive(Debug, Clone, Default)]
pub struct LpmIndex {
    // Prefix lengths in use, longest first.
    levels: Vec<Level>,
}

/// The entries of one prefix length.
#[derive(Debug, Clone)]
struct Level {
    prefix: u32,
    // What of a packed key this prefix length keeps (all ones when wide).
    packed_mask: u64,
    map: LevelMap,
}

/// One level's keys, in the form the key's total width calls for.
#[derive(Debug, Clone)]
enum LevelMap {
    /// Keys of at most 64 bits, packed.
    Packed(HashMap<u64, u32, BuildHasherDefault<KeyHasher>>),
    /// Wider keys, component by component.
    Wide(KeyMap),
}

/// Which key component is the prefix one, and its width.
fn prefix_component(keys: &[TableKey]) -> Option<(usize, u32)> {
    let i = keys.iter().position(|k| k.kind == MatchKind::Lpm)?;
    Some((i, keys[i].width))
}

/// Whether `keys` pack into one `u64`.
fn packs(keys: &[TableKey]) -> bool {
    keys.iter().map(|k| k.width).sum::<u32>() <= ExactIndex::PACKED_BITS
}

/// The mask that keeps the first `prefix` bits of the prefix component of a
/// packed key and everything else: the component's low bits sit above the
/// widths of the components after it.
fn packed_mask(keys: &[TableKey], prefix: u32) -> u64 {
    let Some((i, width)) = prefix_component(keys) else {
        return u64::MAX;
    };
    let below: u32 = keys[i + 1..].iter().map(|k| k.width).sum();
    let dropped = mask(width.saturating_sub(prefix)) as u64;
    !(dropped.checked_shl(below).unwrap_or(0))
}

impl LpmIndex {
    /// The handle of the entry with the longest prefix that `key` (one value
    /// per component, masks applied) matches; `scratch` holds a wide key's
    /// masked copy.
    #[inline]
    pub fn get(&self, keys: &[TableKey], key: &[u128], scratch: &mut Vec<u128>) -> Option<u32> {
        if packs(keys) {
            return self.get_packed(pack(keys, key));
        }
        let (i, width) = prefix_component(keys)?;
        scratch.clear();
        scratch.extend_from_slice(key);
        self.levels.iter().find_map(|level| match &level.map {
            LevelMap::Wide(map) => {
                scratch[i] = key[i] & prefix_mask(width, level.prefix);
                map.get(&scratch[..]).copied()
            }
            LevelMap::Packed(_) => None,
        })
    }

    /// The handle of the entry with the longest prefix that the packed key
    /// `key` matches (components concatenated most significant first, as
    /// [`crate::exact::pack_fields`] does); none when the key does not pack.
    #[inline]
    pub fn get_packed(&self, key: u64) -> Option<u32> {
        self.levels.iter().find_map(|level| match &level.map {
            LevelMap::Packed(map) => map.get(&(key & level.packed_mask)).copied(),
            LevelMap::Wide(_) => None,
        })
    }

    /// The handle filed under `key` (already masked) at exactly `prefix` bits.
    pub fn find(&self, keys: &[TableKey], key: &[u128], prefix: u32) -> Option<u32> {
        let level = self.levels.iter().find(|l| l.prefix == prefix)?;
        match &level.map {
            LevelMap::Packed(map) => map.get(&pack(keys, key)).copied(),
            LevelMap::Wide(map) => map.get(key).copied(),
        }
    }

    /// Files `handle` under `key` (already masked) at `prefix` bits.
    pub fn insert(&mut self, keys: &[TableKey], key: &[u128], prefix: u32, handle: u32) {
        let at = self.levels.partition_point(|l| l.prefix > prefix);
        if self.levels.get(at).is_none_or(|l| l.prefix != prefix) {
            let (packed_mask, map) = if packs(keys) {
                let map = LevelMap::Packed(HashMap::default());
                (packed_mask(keys, prefix), map)
            } else {
                (u64::MAX, LevelMap::Wide(HashMap::default()))
            };
            let level = Level {
                prefix,
                packed_mask,
                map,
            };
            self.levels.insert(at, level);
        }
        match &mut self.levels[at].map {
            LevelMap::Packed(map) => {
                map.insert(pack(keys, key), handle);
            }
            LevelMap::Wide(map) => {
                map.insert(key.into(), handle);
            }
        }
    }

    /// Forgets `key` (already masked) at `prefix` bits, and the level with
    /// it when it was the last.
    pub fn remove(&mut self, keys: &[TableKey], key: &[u128], prefix: u32) {
        let Some(at) = self.levels.iter().position(|l| l.prefix == prefix) else {
            return;
        };
        let empty = match &mut self.levels[at].map {
            LevelMap::Packed(map) => {
                map.remove(&pack(keys, key));
                map.is_empty()
            }
            LevelMap::Wide(map) => {
                map.remove(key);
                map.is_empty()
            }
        };
        if empty {
            self.levels.remove(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::pack_fields;
    use crate::program::FieldId;

    fn keys(kinds: &[(MatchKind, u32)]) -> Vec<TableKey> {
        kinds
            .iter()
            .map(|&(kind, width)| TableKey::of(kind, width))
            .collect()
    }

    /// `value` masked to `prefix` of `width` bits.
    fn masked(value: u128, width: u32, prefix: u32) -> u128 {
        value & prefix_mask(width, prefix)
    }

    #[test]
    fn a_level_mask_keeps_the_prefix_and_the_other_components() {
        let k = keys(&[
            (MatchKind::Exact, 8),
            (MatchKind::Lpm, 32),
            (MatchKind::Exact, 4),
        ]);
        assert_eq!(packed_mask(&k, 32), u64::MAX);
        assert_eq!(packed_mask(&k, 24), !0xff0);
        assert_eq!(packed_mask(&k, 0), !0xf_ffff_fff0);
        let whole = keys(&[(MatchKind::Lpm, 64)]);
        assert_eq!(packed_mask(&whole, 0), 0);
        assert_eq!(packed_mask(&whole, 1), 1 << 63);
    }

    #[test]
    fn the_longest_prefix_wins_in_every_form() {
        for (widths, vrf) in [((8, 32), 7u128), ((64, 32), 0x1234_5678_9abc)] {
            let k = keys(&[(MatchKind::Exact, widths.0), (MatchKind::Lpm, widths.1)]);
            let mut index = LpmIndex::default();
            let mut s = vec![];
            index.insert(&k, &[vrf, masked(0x0a00_0000, 32, 8)], 8, 1);
            index.insert(&k, &[vrf, masked(0x0a01_0000, 32, 16)], 16, 2);
            index.insert(&k, &[vrf, 0], 0, 3);
            index.insert(&k, &[vrf + 1, masked(0x0a01_0203, 32, 32)], 32, 4);
            let at =
                |index: &LpmIndex, s: &mut Vec<u128>, v: u128, a: u128| index.get(&k, &[v, a], s);
            assert_eq!(at(&index, &mut s, vrf, 0x0a01_0203), Some(2), "{widths:?}");
            assert_eq!(at(&index, &mut s, vrf, 0x0a02_0203), Some(1), "{widths:?}");
            assert_eq!(at(&index, &mut s, vrf, 0x0b00_0000), Some(3), "{widths:?}");
            assert_eq!(
                at(&index, &mut s, vrf + 1, 0x0a01_0203),
                Some(4),
                "{widths:?}"
            );
            assert_eq!(at(&index, &mut s, vrf + 1, 0x0a01_0204), None, "{widths:?}");
            assert_eq!(
                index.find(&k, &[vrf, 0x0a01_0000], 16),
                Some(2),
                "{widths:?}"
            );
            assert_eq!(index.find(&k, &[vrf, 0x0a01_0000], 24), None, "{widths:?}");
            index.remove(&k, &[vrf, 0x0a01_0000], 16);
            assert_eq!(at(&index, &mut s, vrf, 0x0a01_0203), Some(1), "{widths:?}");
            index.remove(&k, &[vrf, 0], 0);
            assert_eq!(at(&index, &mut s, vrf, 0x0b00_0000), None, "{widths:?}");
            assert_eq!(index.levels.len(), 2, "emptied levels go: {widths:?}");
        }
    }

    #[test]
    fn a_packed_key_from_the_phv_finds_what_its_values_find() {
        let k = keys(&[(MatchKind::Lpm, 32), (MatchKind::Exact, 9)]);
        let mut index = LpmIndex::default();
        index.insert(&k, &[masked(0xc0a8_0100, 32, 24), 5], 24, 1);
        index.insert(&k, &[masked(0xc0a8_0000, 32, 16), 5], 16, 2);
        let slots: [(FieldId, u32); 2] = [(0, 32), (1, 9)];
        let phv = |addr: u64, port: u64| pack_fields(&[addr, port], &slots);
        assert_eq!(index.get_packed(phv(0xc0a8_01fe, 5)), Some(1));
        assert_eq!(index.get_packed(phv(0xc0a8_02fe, 5)), Some(2));
        assert_eq!(index.get_packed(phv(0xc0a8_01fe, 6)), None);
        assert_eq!(index.get_packed(phv(0xc0a9_01fe, 5)), None);
        let wide = keys(&[(MatchKind::Lpm, 128)]);
        let mut index = LpmIndex::default();
        index.insert(&wide, &[0], 0, 1);
        assert_eq!(index.get_packed(0), None, "a wide key does not pack");
        assert_eq!(index.get(&wide, &[5], &mut vec![]), Some(1));
    }
}
