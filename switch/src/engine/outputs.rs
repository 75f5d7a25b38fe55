//! What the switch hands out: frames put on the wire, frames delivered and
//! sent to the CPU port, digests, and the buffers callers give back.

use std::cmp::Reverse;

use super::{Digest, Engine, Output, MAX_PENDING_DIGESTS};
use crate::trace_pkt;

/// Delivered-frame buffers kept for reuse once the caller hands them back.
const MAX_SPARE_BUFFERS: usize = 65536;

impl Engine {
    /// Queues a digest of learn list `list` (of gress `g`) with packet `h`'s values, or
    /// counts it dropped when the controller has not taken the earlier ones.
    pub(crate) fn digest(&mut self, g: usize, h: u32, list: u32, now: u64) {
        if self.digests.len() >= MAX_PENDING_DIGESTS {
            self.stats.digests_dropped += 1;
            return;
        }
        let prog = &self.gress(g).prog;
        if let Some(l) = prog.learn_lists.get(&list) {
            let pkt = &self.pool[h as usize];
            let values = l.fields.iter().map(|f| pkt.phv.get(prog, *f)).collect();
            self.digests.push_back(Digest {
                list_id: list,
                name: l.name.clone(),
                values,
                t_ns: now,
            });
        }
    }

    /// Sends packet `h`'s deparsed bytes out of `port`, to reach the peer at `arrival`,
    /// and frees the packet.
    pub(crate) fn transmit(&mut self, h: u32, port: u16, arrival: u64) {
        let pkt = &self.pool[h as usize];
        trace_pkt!(
            self.main.st,
            pkt,
            Debug,
            "Transmitting packet of size {} out of port {}",
            pkt.out.len(),
            port
        );
        let buf = match self.free_bufs.pop() {
            Some(b) => b,
            None => {
                self.out_bufs.push(Vec::new());
                (self.out_bufs.len() - 1) as u32
            }
        };
        // Hand the deparsed buffer over instead of copying it; the packet
        // keeps the recycled one for its next use.
        std::mem::swap(
            &mut self.out_bufs[buf as usize],
            &mut self.pool[h as usize].out,
        );
        self.seq += 1;
        self.pending.push(Reverse((arrival, self.seq, port, buf)));
        self.release(h);
    }

    /// Discards delivered frames (keeping their buffers); returns how many there were.
    pub fn discard_received(&mut self) -> usize {
        let n = self.delivered.len();
        while let Some(o) = self.delivered.pop_front() {
            self.recycle(o.frame);
        }
        n
    }

    /// Frames delivered so far (in arrival order), removed from the engine.
    pub fn take_received(&mut self) -> Vec<Output> {
        self.delivered.drain(..).collect()
    }

    /// Moves the frames delivered so far (in arrival order) onto the end of
    /// `out`: a caller that keeps `out` allocates nothing once it has grown.
    pub fn drain_received_into(&mut self, out: &mut Vec<Output>) {
        out.extend(self.delivered.drain(..));
    }

    /// Frames delivered to the CPU port (packet-in), removed from the engine.
    pub fn take_packet_in(&mut self) -> Vec<Output> {
        self.packet_in.drain(..).collect()
    }

    /// Digests generated so far, removed from the engine.
    pub fn take_digests(&mut self) -> Vec<Digest> {
        self.digests.drain(..).collect()
    }

    /// Gives a delivered frame's buffer back for reuse.
    pub fn recycle(&mut self, frame: Vec<u8>) {
        if self.spare.len() < MAX_SPARE_BUFFERS {
            self.spare.push(frame);
        }
    }
}
