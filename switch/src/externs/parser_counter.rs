//! Tofino's `ParserCounter`: an 8-bit signed counter per parser, loaded from a
//! header field (header lengths, option counts) and counted down as the parser
//! loops, tested with `is_zero` / `is_negative`.

use crate::exec::State;

/// `set(value, max, rotate, mask, add)`'s shape arguments: the counter is loaded with
/// `min(((value rotated right by rotate) & mask) + add, max)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Largest value loaded.
    pub max: u8,
    /// Right rotation of the 8-bit value, bits.
    pub rotate: u8,
    /// Mask after rotation.
    pub mask: u8,
    /// Added after masking.
    pub add: u8,
}

/// Loads counter `inst` with `value` (its low 8 bits), shaped when `shape` is given.
pub(super) fn set(st: &mut State, inst: u32, value: u128, shape: Option<&Shape>) {
    let v = value as u8;
    let v = match shape {
        None => v,
        Some(s) => ((v.rotate_right(u32::from(s.rotate)) & s.mask).wrapping_add(s.add)).min(s.max),
    };
    if let Some(c) = st.externs.counters.get_mut(inst as usize) {
        *c = i16::from(v as i8);
    }
}

/// Adds `by` to counter `inst`, wrapping at 8 bits as the hardware's counter does.
pub(super) fn add(st: &mut State, inst: u32, by: i16) {
    if let Some(c) = st.externs.counters.get_mut(inst as usize) {
        *c = i16::from((*c as i8).wrapping_add(by as i8));
    }
}

/// Counter `inst`'s value.
pub(super) fn value(st: &State, inst: u32) -> i16 {
    st.externs.counters.get(inst as usize).copied().unwrap_or(0)
}
