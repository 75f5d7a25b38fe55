//! Sets of byte ranges `[start, end)` of a TCP stream: what a receiver holds out of
//! order, what a sender's peer has SACKed.

/// Disjoint, non-adjacent byte ranges in ascending order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RangeSet {
    ranges: Vec<(u64, u64)>,
    bytes: u64,
}

impl RangeSet {
    /// The ranges, ascending.
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    /// Bytes covered.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether nothing is covered.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The highest byte covered, plus one.
    pub fn end(&self) -> Option<u64> {
        self.ranges.last().map(|r| r.1)
    }

    /// The range that contains `at`, if any.
    pub fn containing(&self, at: u64) -> Option<(u64, u64)> {
        let i = self.ranges.partition_point(|r| r.1 <= at);
        self.ranges.get(i).copied().filter(|r| r.0 <= at)
    }

    /// Whether every byte of `[start, end)` is covered.
    pub fn covers(&self, start: u64, end: u64) -> bool {
        start >= end || self.containing(start).is_some_and(|r| r.1 >= end)
    }

    /// Adds `[start, end)`; calls `fresh` with each part that was not covered before
    /// (ascending) and returns the bytes newly covered.
    pub fn insert(&mut self, start: u64, end: u64, mut fresh: impl FnMut(u64, u64)) -> u64 {
        if start >= end {
            return 0;
        }
        // Ranges that touch or overlap [start, end) merge into one.
        let first = self.ranges.partition_point(|r| r.1 < start);
        let last = self.ranges.partition_point(|r| r.0 <= end);
        let mut added = 0;
        let mut cursor = start;
        for &(s, e) in &self.ranges[first..last] {
            if s > cursor {
                let stop = s.min(end);
                fresh(cursor, stop);
                added += stop - cursor;
            }
            cursor = cursor.max(e);
        }
        if cursor < end {
            fresh(cursor, end);
            added += end - cursor;
        }
        let merged_start = self.ranges.get(first).map_or(start, |r| r.0.min(start));
        let merged_end = if last > first {
            self.ranges[last - 1].1.max(end)
        } else {
            end
        };
        self.ranges
            .splice(first..last, std::iter::once((merged_start, merged_end)));
        self.bytes += added;
        added
    }

    /// Forgets everything below `at`; returns the bytes forgotten.
    pub fn remove_below(&mut self, at: u64) -> u64 {
        let mut removed = 0;
        let whole = self.ranges.partition_point(|r| r.1 <= at);
        for r in &self.ranges[..whole] {
            removed += r.1 - r.0;
        }
        self.ranges.drain(..whole);
        if let Some(first) = self.ranges.first_mut() {
            if first.0 < at {
                removed += at - first.0;
                first.0 = at;
            }
        }
        self.bytes -= removed;
        removed
    }

    /// Bytes covered at or above `at`.
    pub fn bytes_above(&self, at: u64) -> u64 {
        let mut sum = 0;
        for &(s, e) in self.ranges.iter().rev() {
            if e <= at {
                break;
            }
            sum += e - s.max(at);
        }
        sum
    }

    /// The highest position `p` such that more than `threshold` bytes lie at or above `p`
    /// (None if the set holds no more than `threshold` bytes).
    pub fn point_with_more_above(&self, threshold: u64) -> Option<u64> {
        let mut sum = 0;
        for &(s, e) in self.ranges.iter().rev() {
            let len = e - s;
            if sum + len > threshold {
                return Some(e - (threshold - sum) - 1);
            }
            sum += len;
        }
        None
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.ranges.clear();
        self.bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh_parts(set: &mut RangeSet, s: u64, e: u64) -> Vec<(u64, u64)> {
        let mut parts = Vec::new();
        set.insert(s, e, |a, b| parts.push((a, b)));
        parts
    }

    #[test]
    fn inserts_merge_and_report_only_new_parts() {
        let mut set = RangeSet::default();
        assert_eq!(fresh_parts(&mut set, 10, 20), vec![(10, 20)]);
        assert_eq!(fresh_parts(&mut set, 30, 40), vec![(30, 40)]);
        assert_eq!(set.ranges(), &[(10, 20), (30, 40)]);
        assert_eq!(fresh_parts(&mut set, 15, 35), vec![(20, 30)]);
        assert_eq!(set.ranges(), &[(10, 40)]);
        assert_eq!(set.bytes(), 30);
        assert_eq!(fresh_parts(&mut set, 12, 18), vec![]);
        // Adjacent ranges join.
        fresh_parts(&mut set, 40, 50);
        fresh_parts(&mut set, 0, 10);
        assert_eq!(set.ranges(), &[(0, 50)]);
        assert_eq!(set.bytes(), 50);
        fresh_parts(&mut set, 60, 70);
        assert_eq!(fresh_parts(&mut set, 5, 80), vec![(50, 60), (70, 80)]);
        assert_eq!((set.ranges(), set.bytes()), (&[(0, 80)][..], 80));
    }

    #[test]
    fn removal_containment_and_bytes_above() {
        let mut set = RangeSet::default();
        for (s, e) in [(10, 20), (30, 40), (50, 60)] {
            set.insert(s, e, |_, _| {});
        }
        assert_eq!(set.containing(35), Some((30, 40)));
        assert_eq!(set.containing(40), None);
        assert!(set.covers(31, 40) && !set.covers(25, 35));
        assert_eq!(set.bytes_above(35), 15);
        // More than 15 bytes lie at or above 34 (16), not at or above 35 (15).
        assert_eq!(set.point_with_more_above(15), Some(34));
        assert_eq!(set.point_with_more_above(30), None);
        assert_eq!(set.remove_below(35), 15);
        assert_eq!(set.ranges(), &[(35, 40), (50, 60)]);
        assert_eq!(set.bytes(), 15);
    }
}
