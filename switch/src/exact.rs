//! The index of an exact-match table: key → entry handle.
//!
//! Most exact keys are narrow (a port, a port and a queue, a MAC address), so
//! the components are packed into one integer, most significant first: keys
//! of at most [`DIRECT_BITS`] bits index an array directly, keys of at most 64
//! bits hash one `u64`; only wider keys hash the component slice. The form is
//! fixed by the key's widths, so a lookup neither allocates nor compares slices.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::bits::mask;
use crate::program::{FieldId, TableKey};
use crate::tables::{KeyHasher, KeyMap};

/// Keys this narrow (in total) are array indices: 2^16 handles at most.
pub const DIRECT_BITS: u32 = 16;

/// An array slot with no entry.
const NONE: u32 = u32::MAX;

/// Exact-match index of one table.
#[derive(Debug, Clone)]
pub enum ExactIndex {
    /// Packed keys of at most [`DIRECT_BITS`] bits index the handles.
    Direct(Vec<u32>),
    /// Packed keys of at most 64 bits.
    Packed(HashMap<u64, u32, BuildHasherDefault<KeyHasher>>),
    /// Wider keys, component by component.
    Wide(KeyMap),
}

impl ExactIndex {
    /// Keys this narrow (in total) pack into one `u64` ([`ExactIndex::get_packed`]).
    pub const PACKED_BITS: u32 = 64;

    /// The (empty) index for a table with these key components; the table makes it
    /// with its first entry, so an array is allocated only for a table in use.
    pub fn for_keys(keys: &[TableKey]) -> ExactIndex {
        match keys.iter().map(|k| k.width).sum::<u32>() {
            bits if bits <= DIRECT_BITS => ExactIndex::Direct(vec![NONE; 1 << bits]),
            bits if bits <= Self::PACKED_BITS => ExactIndex::Packed(HashMap::default()),
            _ => ExactIndex::Wide(HashMap::default()),
        }
    }

    /// The handle of the entry with `key` (one value per component).
    #[inline]
    pub fn get(&self, keys: &[TableKey], key: &[u128]) -> Option<u32> {
        match self {
            ExactIndex::Wide(map) => map.get(key).copied(),
            _ => self.get_packed(pack(keys, key)),
        }
    }

    /// The handle of the entry whose key packs to `key` (components
    /// concatenated most significant first, as [`pack_fields`] does); none
    /// in the wide form, whose keys do not pack.
    #[inline]
    pub fn get_packed(&self, key: u64) -> Option<u32> {
        match self {
            ExactIndex::Direct(slots) => slots.get(key as usize).copied().filter(|&h| h != NONE),
            ExactIndex::Packed(map) => map.get(&key).copied(),
            ExactIndex::Wide(_) => None,
        }
    }

    /// Files `handle` under `key`.
    pub fn insert(&mut self, keys: &[TableKey], key: &[u128], handle: u32) {
        match self {
            ExactIndex::Direct(slots) => {
                if let Some(slot) = slots.get_mut(pack(keys, key) as usize) {
                    *slot = handle;
                }
            }
            ExactIndex::Packed(map) => {
                map.insert(pack(keys, key), handle);
            }
            ExactIndex::Wide(map) => {
                map.insert(key.into(), handle);
            }
        }
    }

    /// Forgets `key`.
    pub fn remove(&mut self, keys: &[TableKey], key: &[u128]) {
        match self {
            ExactIndex::Direct(slots) => {
                if let Some(slot) = slots.get_mut(pack(keys, key) as usize) {
                    *slot = NONE;
                }
            }
            ExactIndex::Packed(map) => {
                map.remove(&pack(keys, key));
            }
            ExactIndex::Wide(map) => {
                map.remove(key);
            }
        }
    }
}

/// The components of a key of at most 64 bits, concatenated most significant first.
#[inline]
pub(crate) fn pack(keys: &[TableKey], key: &[u128]) -> u64 {
    keys.iter()
        .zip(key)
        .fold(0u64, |acc, (k, &v)| shift_in(acc, k.width, v as u64))
}

/// A key of whole fields packed as the index packs key values (components
/// concatenated most significant first): (slot, width) components of `fields`.
#[inline]
pub fn pack_fields(fields: &[u64], key: &[(FieldId, u32)]) -> u64 {
    key.iter().fold(0u64, |acc, &(f, width)| {
        shift_in(acc, width, fields.get(f as usize).copied().unwrap_or(0))
    })
}

/// `acc` with the low `width` bits of `v` appended: the one packing rule both
/// the index's keys and keys taken from the PHV follow.
#[inline]
fn shift_in(acc: u64, width: u32, v: u64) -> u64 {
    acc.checked_shl(width).unwrap_or(0) | (v & mask(width) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::MatchKind;

    fn keys(widths: &[u32]) -> Vec<TableKey> {
        let exact = |&width: &u32| TableKey::of(MatchKind::Exact, width);
        widths.iter().map(exact).collect()
    }

    #[test]
    fn the_form_follows_the_total_width() {
        assert!(matches!(
            ExactIndex::for_keys(&keys(&[9, 3])),
            ExactIndex::Direct(_)
        ));
        assert!(matches!(
            ExactIndex::for_keys(&keys(&[16])),
            ExactIndex::Direct(_)
        ));
        assert!(matches!(
            ExactIndex::for_keys(&keys(&[48])),
            ExactIndex::Packed(_)
        ));
        assert!(matches!(
            ExactIndex::for_keys(&keys(&[32, 32])),
            ExactIndex::Packed(_)
        ));
        assert!(matches!(
            ExactIndex::for_keys(&keys(&[64, 1])),
            ExactIndex::Wide(_)
        ));
    }

    #[test]
    fn components_pack_most_significant_first() {
        assert_eq!(pack(&keys(&[9, 3]), &[0x1ff, 0x5]), 0xffd);
        assert_eq!(
            pack(&keys(&[48, 16]), &[0xaabb_ccdd_eeff, 0x1234]),
            0xaabb_ccdd_eeff_1234
        );
        assert_eq!(pack(&keys(&[64]), &[u128::from(u64::MAX)]), u64::MAX);
    }

    #[test]
    fn fields_pack_as_their_values_do() {
        let phv = [
            0x1ff,
            0x5,
            0xaabb_ccdd_eeff,
            u64::MAX,
            0xffff_ffff_ffff_1234,
        ];
        for (slots, widths) in [
            (&[0u32, 1][..], &[9u32, 3][..]),
            (&[2, 4], &[48, 16]),
            (&[3], &[64]),
            (&[4, 1], &[12, 2]),
        ] {
            let key: Vec<(FieldId, u32)> =
                slots.iter().copied().zip(widths.iter().copied()).collect();
            let values: Vec<u128> = slots.iter().map(|&f| u128::from(phv[f as usize])).collect();
            assert_eq!(
                pack_fields(&phv, &key),
                pack(&keys(widths), &values),
                "{key:?}"
            );
        }
        let k = keys(&[9, 3]);
        let mut index = ExactIndex::for_keys(&k);
        index.insert(&k, &[0x1ff, 0x5], 7);
        assert_eq!(
            index.get_packed(pack_fields(&phv, &[(0, 9), (1, 3)])),
            Some(7)
        );
        assert_eq!(index.get_packed(pack_fields(&phv, &[(1, 9), (0, 3)])), None);
        let wide = keys(&[64, 64]);
        assert_eq!(ExactIndex::for_keys(&wide).get_packed(0), None);
    }

    #[test]
    fn every_form_finds_inserts_and_forgets() {
        for widths in [&[9u32, 3][..], &[48, 9], &[64, 64]] {
            let k = keys(widths);
            let mut index = ExactIndex::for_keys(&k);
            let a = vec![5u128, 1];
            let b = vec![1u128, 5];
            assert_eq!(index.get(&k, &a), None, "{widths:?}");
            index.insert(&k, &a, 7);
            index.insert(&k, &b, 8);
            assert_eq!(index.get(&k, &a), Some(7), "{widths:?}");
            assert_eq!(index.get(&k, &b), Some(8), "{widths:?}");
            index.remove(&k, &a);
            assert_eq!(index.get(&k, &a), None, "{widths:?}");
            assert_eq!(index.get(&k, &b), Some(8), "{widths:?}");
        }
    }
}
