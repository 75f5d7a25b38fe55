//! Per-packet state: the packet header vector (field slots, validity, varbit
//! buffers, stack indices), the frame bytes and the packet "registers" that
//! simple_switch keeps per packet (clone, resubmit, recirculate, digest,
//! truncation, exit). Packets are pooled: resetting keeps every buffer.

use crate::program::{FieldId, Program, StdSlot};

/// Packet header vector. A field's value is its 64-bit slot, and for the
/// few plain fields wider than 64 bits also a slot of upper bits: most
/// fields are 32 bits or less, so this keeps the vector (zeroed per packet
/// and carried through the queue) half the size of one `u128` per field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Phv {
    /// Low 64 bits of each field, one slot per field.
    pub fields: Vec<u64>,
    /// Upper 64 bits of the plain fields wider than 64 bits, at their
    /// [`crate::program::WireField::high`] slots.
    pub high: Vec<u64>,
    /// Validity per header instance.
    pub valid: Vec<bool>,
    /// Varbit contents (bytes) per varbit slot; the field slot holds the length in bits.
    pub varbits: Vec<Vec<u8>>,
    /// Values of fields wider than 128 bits, big-endian, at their
    /// [`crate::program::FieldInfo::wide`] offsets (sized at load: no growth per packet).
    pub wide: Vec<u8>,
    /// Next index per header stack.
    pub stack_next: Vec<u32>,
    /// Next index per header union stack.
    pub ustack_next: Vec<u32>,
}

impl Phv {
    /// An empty PHV shaped for `p`.
    pub fn new(p: &Program) -> Self {
        let mut phv = Phv {
            fields: vec![0; p.fields.len()],
            high: vec![0; p.num_high as usize],
            valid: vec![false; p.headers.len()],
            varbits: (0..p.num_varbits).map(|_| Vec::new()).collect(),
            wide: vec![0; p.wide_bytes as usize],
            stack_next: vec![0; p.stacks.len()],
            ustack_next: vec![0; p.union_stacks.len()],
        };
        phv.reset(p);
        phv
    }

    /// A field's value.
    #[inline]
    pub fn get(&self, p: &Program, f: FieldId) -> u128 {
        let lo = u128::from(self.fields[f as usize]);
        match p.wire[f as usize].high {
            None => lo,
            Some(h) => lo | u128::from(self.high[h as usize]) << 64,
        }
    }

    /// Sets a field to `v` (already cut to the field's width).
    #[inline]
    pub fn set(&mut self, p: &Program, f: FieldId, v: u128) {
        self.fields[f as usize] = v as u64;
        if let Some(h) = p.wire[f as usize].high {
            self.high[h as usize] = (v >> 64) as u64;
        }
    }

    /// Writes `v`, cut to the field's width, into standard-metadata field `s`
    /// (nothing when the program lacks it). Those fields are at most 64 bits
    /// wide (the loader checks), so their slot holds all of them.
    #[inline]
    pub fn put(&mut self, s: StdSlot, v: u64) {
        if let Some(slot) = self.fields.get_mut(s.slot as usize) {
            *slot = v & s.mask;
        }
    }

    /// Standard-metadata field `s` (0 when the program lacks it).
    #[inline]
    pub fn read(&self, s: StdSlot) -> u64 {
        self.fields.get(s.slot as usize).copied().unwrap_or(0)
    }

    /// Zeroes fields `first..first + n`.
    pub fn clear_fields(&mut self, p: &Program, first: FieldId, n: u32) {
        let (a, n) = (first as usize, n as usize);
        self.fields[a..a + n].fill(0);
        for wf in &p.wire[a..a + n] {
            if let Some(h) = wf.high {
                self.high[h as usize] = 0;
            }
        }
    }

    /// Copies fields `src..src + n` onto `dst..dst + n`.
    pub fn copy_fields(&mut self, p: &Program, src: FieldId, dst: FieldId, n: u32) {
        let (s, d, n) = (src as usize, dst as usize, n as usize);
        self.fields.copy_within(s..s + n, d);
        for k in 0..n as u32 {
            if p.wire[d + k as usize].high.is_some() || p.wire[s + k as usize].high.is_some() {
                let v = self.get(p, src + k);
                self.set(p, dst + k, v);
            }
        }
    }

    /// Reshapes this PHV for `p` (another gress's program) and resets it; buffers
    /// grown for a larger program are kept, so a packet moving between a TNA pipe's
    /// gresses allocates nothing once warm.
    pub fn reshape(&mut self, p: &Program) {
        self.fields.resize(p.fields.len(), 0);
        self.high.resize(p.num_high as usize, 0);
        self.valid.resize(p.headers.len(), false);
        self.varbits.resize_with(p.num_varbits as usize, Vec::new);
        self.wide.resize(p.wide_bytes as usize, 0);
        self.stack_next.resize(p.stacks.len(), 0);
        self.ustack_next.resize(p.union_stacks.len(), 0);
        self.reset(p);
    }

    /// Zeroes everything; metadata headers are valid, packet headers invalid.
    pub fn reset(&mut self, p: &Program) {
        self.fields.fill(0);
        refill(&mut self.high, 0);
        // A TNA packet may still be shaped for another gress here (`reshape` follows).
        let n = self.valid.len().min(p.reset_validity.len());
        if n > 0 {
            self.valid[..n].copy_from_slice(&p.reset_validity[..n]);
        }
        self.varbits.iter_mut().for_each(Vec::clear);
        refill(&mut self.wide, 0);
        self.stack_next.iter_mut().for_each(|n| *n = 0);
        self.ustack_next.iter_mut().for_each(|n| *n = 0);
    }

    /// Zeroes the fields of every metadata header (BMv2 `reset_metadata`).
    pub fn reset_metadata(&mut self, p: &Program) {
        for h in p.headers.iter().filter(|h| h.metadata) {
            self.clear_fields(p, h.first_field, h.num_fields);
            self.clear_wide(h);
        }
    }

    /// Zeroes a header's fields wider than 128 bits.
    pub fn clear_wide(&mut self, h: &crate::program::HeaderInfo) {
        let (at, len) = (h.wide_range.0 as usize, h.wide_range.1 as usize);
        refill(&mut self.wide[at..at + len], 0);
    }

    /// Copies `other` into `self` reusing this PHV's buffers.
    pub fn copy_from(&mut self, other: &Phv) {
        self.fields.copy_from_slice(&other.fields);
        self.high.copy_from_slice(&other.high);
        self.valid.copy_from_slice(&other.valid);
        for (d, s) in self.varbits.iter_mut().zip(&other.varbits) {
            d.clear();
            d.extend_from_slice(s);
        }
        self.wide.copy_from_slice(&other.wide);
        self.stack_next.copy_from_slice(&other.stack_next);
        self.ustack_next.copy_from_slice(&other.ustack_next);
    }
}

/// Packet registers simple_switch keeps per packet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PacketFlags {
    /// Clone session requested (I2E in ingress, E2E in egress).
    pub clone_session: Option<u32>,
    /// Field list preserved by the clone.
    pub clone_field_list: u32,
    /// Resubmit requested, with its field list.
    pub resubmit: Option<u32>,
    /// Recirculate requested, with its field list.
    pub recirculate: Option<u32>,
    /// Learn list of a requested digest.
    pub digest: Option<u32>,
    /// Truncation length in bytes (smallest call wins).
    pub truncate: Option<u32>,
    /// `exit` was executed: the control stops.
    pub exit: bool,
    /// An assert/assume failed: the packet is discarded.
    pub assert_failed: bool,
    /// The parser reached TNA's `$reject` state: the packet is dropped.
    pub rejected: bool,
}

/// What a TNA target keeps with a packet between blocks: the deparser's requests
/// (mirror, resubmit) and what the traffic manager was told and reported (buffers
/// kept across uses).
#[derive(Debug, Clone, Default)]
pub struct TnaPacket {
    /// Mirror session of a `Mirror.emit`.
    pub mirror_session: Option<u16>,
    /// The mirror header's bytes, put in front of the copy.
    pub mirror_header: Vec<u8>,
    /// A `Resubmit.emit` was called.
    pub resubmit: bool,
    /// The resubmit header's bytes, in place of the port metadata on the next pass.
    pub resubmit_header: Vec<u8>,
    /// The frame as received, kept for a resubmission.
    pub received: Vec<u8>,
    /// This pass is a resubmission.
    pub resubmitted: bool,
    /// Ingress set `bypass_egress`: the egress pipeline is skipped.
    pub bypass_egress: bool,
    /// Replication id of a multicast copy (`egress_rid`).
    pub rid: u16,
    /// Cells in its queue when the packet was queued (`enq_qdepth`).
    pub enq_qdepth_cells: u32,
    /// Ingress port and iCoS the TM counts it against (None for copies).
    pub from: Option<(u16, u8)>,
    /// `ig_intr_md_for_tm.deflect_on_drop`: a TM drop sends it to the pipe's
    /// mirror-on-drop destination instead.
    pub deflect_on_drop: bool,
    /// It was deflected (egress `deflection_flag`).
    pub deflected: bool,
}

impl TnaPacket {
    /// Forgets everything of a previous frame, keeping the buffers.
    pub fn reset(&mut self) {
        self.clear_requests();
        self.resubmitted = false;
        self.bypass_egress = false;
        self.rid = 0;
        self.enq_qdepth_cells = 0;
        self.from = None;
        self.deflect_on_drop = false;
        self.deflected = false;
    }

    /// Forgets the deparser's requests, keeping the buffers.
    pub fn clear_requests(&mut self) {
        self.mirror_session = None;
        self.mirror_header.clear();
        self.resubmit = false;
        self.resubmit_header.clear();
    }
}

/// One packet in flight.
#[derive(Debug, Clone, Default)]
pub struct Packet {
    /// Header vector.
    pub phv: Phv,
    /// Frame as received (ingress never modifies it).
    pub data: Vec<u8>,
    /// Offset of the unparsed payload in `data`.
    pub cursor: usize,
    /// Deparsed frame.
    pub out: Vec<u8>,
    /// Frame length on arrival, bytes.
    pub ingress_len: u32,
    /// simple_switch's packet-length register: arrival length adjusted by
    /// add_header/remove_header.
    pub len_reg: i64,
    /// Per-packet registers.
    pub flags: PacketFlags,
    /// Time of the current pipeline pass, ns.
    pub now: u64,
    /// Packet id in the trace: one per frame received.
    pub id: u64,
    /// Copy number in the trace (0 for the received packet, then per copy made of it).
    pub copy: u32,
    /// Copies made of this packet so far (for the next copy's number).
    pub copies: u32,
    /// What a TNA target carries with the packet.
    pub tna: TnaPacket,
}

impl Packet {
    /// A packet shaped for `p`.
    pub fn new(p: &Program) -> Self {
        Packet {
            phv: Phv::new(p),
            ..Default::default()
        }
    }

    /// Loads a received frame, resetting all state but keeping buffers.
    pub fn receive(&mut self, p: &Program, frame: &[u8], now: u64) {
        self.data.clear();
        self.data.extend_from_slice(frame);
        self.loaded(p, now);
    }

    /// Loads a received frame by taking its buffer: `frame` is left holding
    /// this packet's previous (emptied) buffer, for the caller to reuse.
    pub fn receive_buffer(&mut self, p: &Program, frame: &mut Vec<u8>, now: u64) {
        std::mem::swap(&mut self.data, frame);
        frame.clear();
        self.loaded(p, now);
    }

    /// Resets all state but `data`, which holds the frame just received.
    fn loaded(&mut self, p: &Program, now: u64) {
        self.phv.reset(p);
        self.cursor = 0;
        self.out.clear();
        self.ingress_len = self.data.len() as u32;
        self.len_reg = self.data.len() as i64;
        self.flags = PacketFlags::default();
        self.now = now;
        self.tna.reset();
    }

    /// Copies `other` into `self` reusing buffers.
    pub fn copy_from(&mut self, other: &Packet) {
        self.phv.copy_from(&other.phv);
        self.data.clear();
        self.data.extend_from_slice(&other.data);
        self.cursor = other.cursor;
        self.out.clear();
        self.out.extend_from_slice(&other.out);
        self.ingress_len = other.ingress_len;
        self.len_reg = other.len_reg;
        self.flags = other.flags;
        self.now = other.now;
        self.id = other.id;
    }
}

/// Sets every element of `s` to `v`. Per-packet state a program may not have at all (a
/// PHV's wide fields, a parser's checksum units) is often empty, and `fill` of an empty
/// slice still calls `memset` with the empty slice's dangling address, in page 0. On a CPU
/// with AVX-512, glibc 2.36 (Debian 12) picks an EVEX `memset` that writes short lengths
/// with a masked store, and a masked store to an unmapped page takes a fault-suppression
/// assist even with no byte enabled: 67 ns a call against 2.2 ns at a mapped address on
/// the lab machine's EPYC (gone with `GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512VL`). Two
/// such calls per packet halved the engine's packets per CPU-second.
#[inline]
pub(crate) fn refill<T: Copy>(s: &mut [T], v: T) {
    if !s.is_empty() {
        s.fill(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_metadata_slots_cut_to_width_and_skip_what_the_program_lacks() {
        let p = crate::load::load(include_str!("../../tests/engine/fixtures/l3.json"))
            .expect("fixture loads");
        let s = p.std_slots;
        assert_eq!(s.ingress_port.slot, p.std.ingress_port);
        assert_eq!(s.ingress_port.mask, 0x1ff, "ingress_port is 9 bits");
        assert_eq!(s.priority.mask, 0x7, "priority is 3 bits");
        assert_eq!(
            s.qid,
            StdSlot::ABSENT,
            "l3.json has no queueing_metadata.qid"
        );
        let mut phv = Phv::new(&p);
        phv.fields.fill(0x55);
        phv.put(s.ingress_port, 0x3ff);
        assert_eq!(phv.read(s.ingress_port), 0x1ff);
        assert_eq!(phv.fields[p.std.ingress_port as usize], 0x1ff);
        let before = phv.fields.clone();
        phv.put(s.qid, 7);
        assert_eq!(phv.fields, before, "an absent field writes nothing");
        assert_eq!(phv.read(s.qid), 0);
        phv.valid.fill(true);
        phv.reset(&p);
        let metadata: Vec<bool> = p.headers.iter().map(|h| h.metadata).collect();
        assert_eq!(phv.valid, metadata);
        assert_eq!(phv.valid, [true, true, false, false]);
        assert!(phv.fields.iter().all(|&v| v == 0));
    }
}
