//! Next start time of every backlogged port, earliest first.
//!
//! An indexed binary heap keyed by (time, port): a port's entry is moved in
//! place when its time changes, so the heap never holds stale entries and
//! never grows past the number of ports. Ties go to the lower port number,
//! which keeps runs deterministic.

const ABSENT: u32 = u32::MAX;

/// Indexed min-heap of (start time ns, port).
#[derive(Debug)]
pub(crate) struct Calendar {
    heap: Vec<(u64, u16)>,
    /// Heap index of each port, or `ABSENT`.
    slot: Vec<u32>,
}

impl Calendar {
    /// An empty calendar for ports `0..num_ports`.
    pub(crate) fn new(num_ports: u16) -> Self {
        Calendar {
            heap: Vec::with_capacity(usize::from(num_ports)),
            slot: vec![ABSENT; usize::from(num_ports)],
        }
    }

    /// The earliest (time, port), if any port is scheduled.
    pub(crate) fn peek(&self) -> Option<(u64, u16)> {
        self.heap.first().copied()
    }

    /// Schedules `port` at `time`, or removes it when `time` is `None`.
    pub(crate) fn set(&mut self, port: u16, time: Option<u64>) {
        let Some(&at) = self.slot.get(usize::from(port)) else {
            return;
        };
        match (at, time) {
            (ABSENT, None) => {}
            (ABSENT, Some(t)) => {
                self.heap.push((t, port));
                let i = self.heap.len() - 1;
                self.slot[usize::from(port)] = i as u32;
                self.sift_up(i);
            }
            (i, Some(t)) => {
                let i = i as usize;
                // A port's next start often stays put (a frame joins a busy queue).
                if self.heap[i].0 == t {
                    return;
                }
                self.heap[i].0 = t;
                let i = self.sift_up(i);
                self.sift_down(i);
            }
            (i, None) => self.remove_at(i as usize),
        }
    }

    /// Removes the entry at heap index `i`.
    fn remove_at(&mut self, i: usize) {
        let last = self.heap.len() - 1;
        self.swap(i, last);
        if let Some((_, port)) = self.heap.pop() {
            self.slot[usize::from(port)] = ABSENT;
        }
        if i < self.heap.len() {
            let i = self.sift_up(i);
            self.sift_down(i);
        }
    }

    /// Moves entry `i` towards the root while it is earlier than its parent.
    fn sift_up(&mut self, mut i: usize) -> usize {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[i] >= self.heap[parent] {
                break;
            }
            self.swap(i, parent);
            i = parent;
        }
        i
    }

    /// Moves entry `i` towards the leaves while a child is earlier.
    fn sift_down(&mut self, mut i: usize) {
        loop {
            let left = 2 * i + 1;
            let right = left + 1;
            let mut first = i;
            if left < self.heap.len() && self.heap[left] < self.heap[first] {
                first = left;
            }
            if right < self.heap.len() && self.heap[right] < self.heap[first] {
                first = right;
            }
            if first == i {
                return;
            }
            self.swap(i, first);
            i = first;
        }
    }

    /// Swaps two heap entries and their ports' slots.
    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.slot[usize::from(self.heap[a].1)] = a as u32;
        self.slot[usize::from(self.heap[b].1)] = b as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_ties_by_port() {
        let mut c = Calendar::new(8);
        c.set(5, Some(30));
        c.set(2, Some(10));
        c.set(7, Some(10));
        c.set(1, Some(20));
        assert_eq!(c.peek(), Some((10, 2)));
        c.set(2, Some(40));
        assert_eq!(c.peek(), Some((10, 7)));
        c.set(7, None);
        c.set(1, None);
        assert_eq!(c.peek(), Some((30, 5)));
        c.set(5, None);
        c.set(2, None);
        assert_eq!(c.peek(), None);
        // Ports outside the calendar are ignored rather than panicking.
        c.set(99, Some(1));
        assert_eq!(c.peek(), None);
    }

    #[test]
    fn order_matches_a_sort_under_random_updates() {
        // A small deterministic LCG drives updates; the heap must agree with a scan.
        let mut times: [Option<u64>; 64] = [None; 64];
        let mut c = Calendar::new(64);
        let mut x: u64 = 12345;
        for _ in 0..5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let port = ((x >> 33) % 64) as u16;
            let t = if (x >> 20).is_multiple_of(4) {
                None
            } else {
                Some((x >> 40) % 1000)
            };
            times[usize::from(port)] = t;
            c.set(port, t);
            let expect = (0..64u16)
                .filter_map(|p| times[usize::from(p)].map(|t| (t, p)))
                .min();
            assert_eq!(c.peek(), expect);
        }
    }
}
