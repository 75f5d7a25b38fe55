//! Tofino's `ParserCounter`: an 8-bit signed counter per parser, loaded from a
//! header field (header lengths, option counts) and counted down as the parser
//! loops, tested with `is_zero` / `is_negative`. Tofino 2 adds a 4-deep stack for
//! nested lengths: `push` saves the counter and loads a new one (the deepest saved
//! value falls off a full stack), `pop` brings the saved one back; a counter pushed
//! with `update_with_top` keeps counting along with the counters above it (an
//! outer length consumed by the inner header's bytes too).

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

/// Adds `by` to counter `inst`, wrapping at 8 bits as the hardware's counter does,
/// and to the saved counters pushed with `update_with_top`.
pub(super) fn add(st: &mut State, inst: u32, by: i16) {
    let wrap = |c: i16| i16::from((c as i8).wrapping_add(by as i8));
    if let Some(c) = st.externs.counters.get_mut(inst as usize) {
        *c = wrap(*c);
    }
    if let Some(s) = st.externs.counter_stacks.get_mut(inst as usize) {
        for e in s.saved[..s.depth].iter_mut().filter(|e| e.1) {
            e.0 = wrap(e.0);
        }
    }
}

/// Saved counters of one parser counter (Tofino 2): value and `update_with_top`,
/// the most recently pushed last.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stack {
    saved: [(i16, bool); DEPTH],
    depth: usize,
}

/// Tofino 2's counter stack depth.
const DEPTH: usize = 4;

/// `push(value[, shape][, update_with_top])`: saves counter `inst` and loads it.
pub(super) fn push(st: &mut State, inst: u32, value: u128, shape: Option<&Shape>, update: bool) {
    let (Some(&cur), Some(s)) = (
        st.externs.counters.get(inst as usize),
        st.externs.counter_stacks.get_mut(inst as usize),
    ) else {
        return;
    };
    if s.depth == DEPTH {
        s.saved.rotate_left(1);
        s.depth -= 1;
    }
    s.saved[s.depth] = (cur, update);
    s.depth += 1;
    set(st, inst, value, shape);
}

/// `pop()`: counter `inst` becomes the last saved value (0 when none is saved).
pub(super) fn pop(st: &mut State, inst: u32) {
    let Some(s) = st.externs.counter_stacks.get_mut(inst as usize) else {
        return;
    };
    let v = if s.depth == 0 {
        0
    } else {
        s.depth -= 1;
        s.saved[s.depth].0
    };
    if let Some(c) = st.externs.counters.get_mut(inst as usize) {
        *c = v;
    }
}

/// Counter `inst`'s value.
pub(super) fn value(st: &State, inst: u32) -> i16 {
    st.externs.counters.get(inst as usize).copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> State {
        let p = crate::load::load(include_str!("../../../sim/tests/fixtures/forward.json"))
            .expect("fixture loads");
        let mut st = State::new(&p, 1);
        st.externs.counters = vec![0];
        st.externs.counter_stacks = vec![Stack::default()];
        st
    }

    #[test]
    fn push_saves_and_pop_restores_nested_counters() {
        let mut st = state();
        set(&mut st, 0, 20, None);
        push(&mut st, 0, 6, None, false);
        add(&mut st, 0, -2);
        assert_eq!(value(&st, 0), 4);
        pop(&mut st, 0);
        assert_eq!(value(&st, 0), 20, "not updated with the top");
        pop(&mut st, 0);
        assert_eq!(value(&st, 0), 0, "an empty stack pops 0");
    }

    #[test]
    fn update_with_top_counts_the_saved_counter_along() {
        let mut st = state();
        set(&mut st, 0, 20, None);
        push(&mut st, 0, 6, None, true);
        add(&mut st, 0, -6);
        assert_eq!(value(&st, 0), 0);
        pop(&mut st, 0);
        assert_eq!(
            value(&st, 0),
            14,
            "the outer length lost the inner 6 bytes too"
        );
    }

    #[test]
    fn a_full_stack_drops_its_deepest_counter() {
        let mut st = state();
        for v in 1..=5u128 {
            push(&mut st, 0, v * 10, None, false);
        }
        // Saved: 10, 20, 30, 40 (the first push saved 0, which fell off); top 50.
        let popped: Vec<i16> = (0..5)
            .map(|_| {
                pop(&mut st, 0);
                value(&st, 0)
            })
            .collect();
        assert_eq!(popped, [40, 30, 20, 10, 0]);
    }

    #[test]
    fn a_shaped_push_loads_as_set_does() {
        let mut st = state();
        let shape = Shape {
            max: 100,
            rotate: 0,
            mask: 0x0f,
            add: 2,
        };
        push(&mut st, 0, 0x47, Some(&shape), false);
        assert_eq!(value(&st, 0), 9);
    }
}
