//! Frames in flight: buffers reused from a free list, so a run that has warmed up
//! allocates nothing per frame.

/// A frame buffer's index in the store.
pub type FrameId = u32;

/// Frame buffers, each either in flight or free.
#[derive(Default)]
pub struct FrameStore {
    bufs: Vec<Vec<u8>>,
    free: Vec<FrameId>,
}

impl FrameStore {
    /// A free buffer (emptied), grown if none is free.
    pub fn take(&mut self) -> FrameId {
        match self.free.pop() {
            Some(id) => {
                self.bufs[id as usize].clear();
                id
            }
            None => {
                self.bufs.push(Vec::with_capacity(1536));
                (self.bufs.len() - 1) as FrameId
            }
        }
    }

    /// Stores `frame`'s bytes by swapping buffers: returns the id and the buffer it
    /// displaced (for the producer to reuse).
    pub fn put_swapped(&mut self, frame: Vec<u8>) -> (FrameId, Vec<u8>) {
        let id = self.take();
        let old = std::mem::replace(&mut self.bufs[id as usize], frame);
        (id, old)
    }

    /// A buffer's bytes.
    pub fn get(&self, id: FrameId) -> &[u8] {
        &self.bufs[id as usize]
    }

    /// A buffer to write into.
    pub fn get_mut(&mut self, id: FrameId) -> &mut Vec<u8> {
        &mut self.bufs[id as usize]
    }

    /// Returns a buffer to the free list.
    pub fn release(&mut self, id: FrameId) {
        self.free.push(id);
    }

    /// Buffers in flight.
    pub fn in_use(&self) -> usize {
        self.bufs.len() - self.free.len()
    }
}
