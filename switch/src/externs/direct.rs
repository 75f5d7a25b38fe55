//! Cells of direct externs (`DirectLpf`, `DirectWred`, `DirectRegister`): one per
//! entry of the table the extern is bound to, addressed by the entry the table hit,
//! and one more that the table's miss (its default action) uses, as Tofino gives a
//! table's default entry a stateful address of its own.

/// A direct extern's cells.
#[derive(Debug, Clone)]
pub struct DirectCells<T> {
    by_handle: Vec<T>,
    miss: T,
    init: T,
}

impl<T: Clone> DirectCells<T> {
    /// Cells for a table of `size` entries, each starting as `init`.
    pub fn new(size: usize, init: T) -> Self {
        DirectCells {
            by_handle: vec![init.clone(); size],
            miss: init.clone(),
            init,
        }
    }

    /// The cell of entry `handle` (None: the miss cell).
    pub fn cell(&mut self, handle: Option<u32>) -> &mut T {
        let Some(h) = handle else {
            return &mut self.miss;
        };
        let h = h as usize;
        if h >= self.by_handle.len() {
            // Handles stay below the table's size; a table that grew past it (the
            // control plane's capacity is not the program's) gets cells on demand.
            self.by_handle.resize(h + 1, self.init.clone());
        }
        &mut self.by_handle[h]
    }

    /// Puts entry `handle`'s cell back to its initial state (a new entry's).
    pub fn reset(&mut self, handle: u32) {
        if let Some(c) = self.by_handle.get_mut(handle as usize) {
            *c = self.init.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_and_the_miss_have_cells_of_their_own() {
        let mut c = DirectCells::new(2, 7u32);
        *c.cell(Some(1)) = 9;
        *c.cell(None) = 3;
        assert_eq!(
            (*c.cell(Some(0)), *c.cell(Some(1)), *c.cell(None)),
            (7, 9, 3)
        );
        *c.cell(Some(5)) = 4;
        assert_eq!(*c.cell(Some(5)), 4, "a handle past the size gets a cell");
        c.reset(1);
        assert_eq!(*c.cell(Some(1)), 7);
    }
}
