//! Key values at the control plane's grain, one per match field and of any
//! width, against the tables' lookup components: a field wider than 128 bits
//! is split into `u128` parts (most significant first) on the way in and
//! joined on the way out, so lookups and entry storage never see it whole.

use crate::engine::Engine;
use crate::error::RuntimeError;
use crate::program::{MatchField, TableKey};
use crate::tables::{key_error, MatchValue};

type R<T> = Result<T, RuntimeError>;

/// An unsigned integer as big-endian bytes (any length, leading zeros allowed).
pub type Bytes = Vec<u8>;

/// Byte lengths of the parts of a `width`-bit field split into `n` parts,
/// most significant first: every part but the first holds 16 bytes.
pub fn part_lens(width: u32, n: u32) -> impl Iterator<Item = usize> {
    let total = width.div_ceil(8) as usize;
    let n = n.max(1) as usize;
    let first = total.saturating_sub(16 * (n - 1));
    std::iter::once(first).chain(std::iter::repeat_n(16, n - 1))
}

/// The parts of integer `v` for field `f` (`keys` are the table's
/// components); bits beyond the field's bytes are an error, bits beyond its
/// width within them are left for `TableState::normalise` to refuse.
fn split_int(table: &str, keys: &[TableKey], f: &MatchField, v: &[u8]) -> R<Vec<u128>> {
    let (first, n) = f.parts;
    let top = &keys[first as usize];
    let v = &v[v.iter().take_while(|&&b| b == 0).count()..];
    let total = f.width.div_ceil(8) as usize;
    if v.len() > total {
        return Err(key_error(table, top, "value wider than the key"));
    }
    let mut padded = vec![0u8; total - v.len()];
    padded.extend_from_slice(v);
    let mut at = 0;
    Ok(part_lens(f.width, n)
        .map(|len| {
            let part = crate::wide::be_int(&padded[at..at + len]);
            at += len;
            part
        })
        .collect())
}

/// The lookup components of one match field's value.
pub fn split_field(
    table: &str,
    keys: &[TableKey],
    f: &MatchField,
    v: MatchValue<Bytes>,
) -> R<Vec<MatchValue>> {
    let int = |x: &[u8]| split_int(table, keys, f, x);
    let single = f.parts.1 == 1;
    Ok(match v {
        MatchValue::Exact(a) => int(&a)?.into_iter().map(MatchValue::Exact).collect(),
        MatchValue::Ternary(a, m) => int(&a)?
            .into_iter()
            .zip(int(&m)?)
            .map(|(a, m)| MatchValue::Ternary(a, m))
            .collect(),
        MatchValue::Optional(Some(a)) => int(&a)?
            .into_iter()
            .map(|a| MatchValue::Optional(Some(a)))
            .collect(),
        MatchValue::Optional(None) => vec![MatchValue::Optional(None); f.parts.1 as usize],
        // The loader refuses lpm and range keys wider than 128 bits: a prefix
        // or a range does not split into independent parts.
        MatchValue::Lpm(a, p) if single => vec![MatchValue::Lpm(int(&a)?[0], p)],
        MatchValue::Range(lo, hi) if single => {
            vec![MatchValue::Range(int(&lo)?[0], int(&hi)?[0])]
        }
        MatchValue::Lpm(..) | MatchValue::Range(..) => {
            let top = &keys[f.parts.0 as usize];
            return Err(key_error(table, top, "match value of the wrong kind"));
        }
    })
}

/// `parts` of a `width`-bit field joined into its big-endian bytes.
fn join_int(width: u32, parts: impl Iterator<Item = u128>) -> Bytes {
    let lens = part_lens(width, parts.size_hint().0 as u32);
    parts
        .zip(lens)
        .flat_map(|(v, len)| v.to_be_bytes()[16 - len.min(16)..].to_vec())
        .collect()
}

/// One match field's value from its lookup components (as `split_field` made them).
pub fn join_field(f: &MatchField, parts: &[MatchValue]) -> MatchValue<Bytes> {
    let (w, n) = (f.width, parts.len());
    let pick = |g: fn(&MatchValue) -> u128| join_int(w, parts.iter().map(g));
    match parts.first() {
        Some(MatchValue::Lpm(_, p)) if n == 1 => MatchValue::Lpm(pick(first_int), *p),
        Some(MatchValue::Range(..)) if n == 1 => {
            MatchValue::Range(pick(first_int), pick(second_int))
        }
        Some(MatchValue::Ternary(..)) => MatchValue::Ternary(pick(first_int), pick(second_int)),
        Some(MatchValue::Optional(None)) => MatchValue::Optional(None),
        Some(MatchValue::Optional(Some(_))) => MatchValue::Optional(Some(pick(first_int))),
        _ => MatchValue::Exact(pick(first_int)),
    }
}

/// The value (or low bound) a component holds.
fn first_int(m: &MatchValue) -> u128 {
    match *m {
        MatchValue::Exact(v)
        | MatchValue::Lpm(v, _)
        | MatchValue::Ternary(v, _)
        | MatchValue::Range(v, _)
        | MatchValue::Optional(Some(v)) => v,
        MatchValue::Optional(None) => 0,
    }
}

/// The mask (or high bound) a component holds.
fn second_int(m: &MatchValue) -> u128 {
    match *m {
        MatchValue::Ternary(_, v) | MatchValue::Range(_, v) => v,
        _ => 0,
    }
}

impl Engine {
    /// A table's match fields as the control plane sees them.
    pub fn table_fields(&self, table: &str) -> R<&[MatchField]> {
        Ok(&self.table_def(table)?.fields)
    }

    /// The lookup components (the `keys` the table calls take) of one value per match field.
    pub fn table_key_parts(
        &self,
        table: &str,
        values: Vec<MatchValue<Bytes>>,
    ) -> R<Vec<MatchValue>> {
        let def = self.table_def(table)?;
        if values.len() != def.fields.len() {
            return Err(RuntimeError::InvalidArgument(format!(
                "table {}: {} key values given, the key has {} elements",
                def.name,
                values.len(),
                def.fields.len()
            )));
        }
        let mut parts = Vec::with_capacity(def.keys.len());
        for (f, v) in def.fields.iter().zip(values) {
            parts.extend(split_field(&def.name, &def.keys, f, v)?);
        }
        Ok(parts)
    }

    /// One value per match field of an entry's lookup components (as read back).
    pub fn table_key_values(&self, table: &str, parts: &[MatchValue]) -> R<Vec<MatchValue<Bytes>>> {
        let def = self.table_def(table)?;
        Ok(def
            .fields
            .iter()
            .map(|f| {
                let (first, n) = (f.parts.0 as usize, f.parts.1 as usize);
                join_field(f, parts.get(first..first + n).unwrap_or(&[]))
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{Expr, MatchKind};

    fn wide(kind: MatchKind) -> (Vec<TableKey>, MatchField) {
        let keys = [80, 128, 128]
            .iter()
            .map(|&width| TableKey {
                name: "a.big".into(),
                kind,
                expr: Expr::Const(0),
                width,
                mask: None,
            })
            .collect();
        let f = MatchField {
            name: "a.big".into(),
            kind,
            width: 336,
            parts: (0, 3),
        };
        (keys, f)
    }

    #[test]
    fn wide_values_split_into_parts_and_join_back() {
        let (keys, f) = wide(MatchKind::Exact);
        let value: Bytes = (1..=42).collect();
        let parts = split_field("t", &keys, &f, MatchValue::Exact(value.clone())).unwrap();
        assert_eq!(
            parts[0],
            MatchValue::Exact(0x0102_0304_0506_0708_090a),
            "the top part holds the first 10 bytes"
        );
        assert_eq!(
            parts[2],
            MatchValue::Exact(u128::from_be_bytes(value[26..].try_into().unwrap()))
        );
        assert_eq!(join_field(&f, &parts), MatchValue::Exact(value.clone()));
        // Shorter (canonical) and zero-prefixed forms give the same parts.
        let short = split_field("t", &keys, &f, MatchValue::Exact(vec![7])).unwrap();
        let long = split_field(
            "t",
            &keys,
            &f,
            MatchValue::Exact([vec![0; 8], vec![7]].concat()),
        );
        assert_eq!(long.unwrap(), short);
        assert_eq!(short[..2], [MatchValue::Exact(0), MatchValue::Exact(0)]);
        // A ternary mask splits as its value does.
        let (keys, f) = wide(MatchKind::Ternary);
        let t = MatchValue::Ternary(value.clone(), vec![0xff; 42]);
        let parts = split_field("t", &keys, &f, t.clone()).unwrap();
        assert_eq!(
            parts[1],
            MatchValue::Ternary(
                u128::from_be_bytes(value[10..26].try_into().unwrap()),
                u128::MAX
            )
        );
        assert_eq!(join_field(&f, &parts), t);
    }

    #[test]
    fn values_beyond_the_field_are_refused() {
        let (keys, f) = wide(MatchKind::Exact);
        let e = split_field("t", &keys, &f, MatchValue::Exact(vec![1; 43])).unwrap_err();
        assert_eq!(
            e,
            RuntimeError::InvalidArgument(
                "table t: key a.big (Exact): value wider than the key".into()
            )
        );
        let lpm = split_field("t", &keys, &f, MatchValue::Lpm(vec![1], 8)).unwrap_err();
        assert!(matches!(lpm, RuntimeError::InvalidArgument(m) if m.contains("wrong kind")));
    }

    // Compiled by bufferlab-p4c from tests/p4/wide_field.p4.
    const WIDE: &str = include_str!("../../tests/engine/fixtures/wide_field.json");

    /// The verdict byte the program emits for a frame whose 336-bit `a.big` is `big`.
    fn verdict(e: &mut Engine, big: &[u8], t_ns: u64) -> u8 {
        let mut frame = big.to_vec();
        frame.push(0);
        e.send(0, &frame, t_ns).unwrap();
        e.drain();
        let out = e.take_received();
        assert_eq!(out.len(), 1);
        // a (43 bytes), its copy b (43), then the verdict.
        out[0].frame[86]
    }

    #[test]
    fn packets_hit_entries_on_wide_keys() {
        let mut e = Engine::new(WIDE, bufferlab_tm::TmConfig::default(), 1).unwrap();
        let value: Bytes = (0x30..0x30 + 42).collect();
        let parts = e
            .table_key_parts("I.wide_exact", vec![MatchValue::Exact(value.clone())])
            .unwrap();
        assert_eq!(parts.len(), 3);
        e.table_add("I.wide_exact", parts, "I.mark", vec![32], 0)
            .unwrap();
        // Top byte 0xee and low nibble 5, the rest don't care.
        let (mut tv, mut tm) = (vec![0u8; 42], vec![0u8; 42]);
        (tv[0], tm[0], tv[41], tm[41]) = (0xee, 0xff, 0x05, 0x0f);
        let t = vec![MatchValue::Ternary(tv.clone(), tm)];
        let parts = e.table_key_parts("I.wide_ternary", t).unwrap();
        e.table_add("I.wide_ternary", parts, "I.mark", vec![64], 1)
            .unwrap();
        // 0x15: a == b, a != 0, egress saw b == a; 32/64/128: the three tables.
        assert_eq!(verdict(&mut e, &value, 0), 0x15 | 32);
        let (mut low, mut high) = (value.clone(), value.clone());
        low[41] ^= 1;
        high[0] ^= 0x80;
        assert_eq!(
            verdict(&mut e, &low, 10),
            0x15,
            "differs in the lowest part"
        );
        assert_eq!(verdict(&mut e, &high, 20), 0x15, "differs in the top part");
        let mut tern = value.clone();
        (tern[0], tern[41]) = (0xee, 0xa5);
        assert_eq!(verdict(&mut e, &tern, 30), 0x15 | 64);
        tern[41] = 0xa6;
        assert_eq!(verdict(&mut e, &tern, 40), 0x15);
        let konst: Bytes = (0xc0..0xc0 + 42).collect();
        assert_eq!(verdict(&mut e, &konst, 50), 0x15 | 128, "const entry");
        // Read back, the entry's parts join into the value that was added.
        let entries = e.table_entries("I.wide_exact").unwrap();
        let back = e.table_key_values("I.wide_exact", &entries[0].keys);
        assert_eq!(back.unwrap(), vec![MatchValue::Exact(value)]);
        let entries = e.table_entries("I.wide_const").unwrap();
        let back = e.table_key_values("I.wide_const", &entries[0].keys);
        assert_eq!(back.unwrap(), vec![MatchValue::Exact(konst)]);
        // One byte too many is refused as a narrow key's value would be.
        let long = vec![MatchValue::Exact(vec![1; 43])];
        assert!(matches!(
            e.table_key_parts("I.wide_exact", long),
            Err(RuntimeError::InvalidArgument(_))
        ));
    }
}
