//! The engine's packet pool: packets are allocated once and reused, so the
//! packet path allocates nothing once the pool has grown.

use super::Engine;
use crate::packet::Packet;
use crate::program::FieldId;

impl Engine {
    /// A free pool packet (a new one when none is free), its pass count reset.
    pub(crate) fn alloc(&mut self) -> u32 {
        let h = match self.free.pop() {
            Some(h) => h,
            None => {
                self.pool.push(Packet::new(&self.main.prog));
                self.passes.push(0);
                (self.pool.len() - 1) as u32
            }
        };
        self.passes[h as usize] = 0;
        h
    }

    /// A pool packet for a copy of `parent`: it inherits the parent's pass
    /// count so clone/recirculate chains stay bounded too.
    pub(crate) fn alloc_copy(&mut self, parent: u32) -> u32 {
        let c = self.alloc();
        self.passes[c as usize] = self.passes[parent as usize];
        let (orig, copy) = two(&mut self.pool, parent, c);
        orig.copies += 1;
        copy.id = orig.id;
        copy.copy = orig.copies;
        copy.copies = orig.copies;
        c
    }

    /// Returns packet `h` to the pool.
    pub(crate) fn release(&mut self, h: u32) {
        self.free.push(h);
    }

    /// Field `f` of pool packet `h`.
    #[inline]
    pub(crate) fn field(&self, h: u32, f: FieldId) -> u128 {
        self.pool[h as usize].phv.get(&self.main.prog, f)
    }
}

/// Two distinct packets of the pool, borrowed together.
pub(crate) fn two(pool: &mut [Packet], a: u32, b: u32) -> (&mut Packet, &mut Packet) {
    let (a, b) = (a as usize, b as usize);
    if a < b {
        let (x, y) = pool.split_at_mut(b);
        (&mut x[a], &mut y[0])
    } else {
        let (x, y) = pool.split_at_mut(a);
        (&mut y[0], &mut x[b])
    }
}
