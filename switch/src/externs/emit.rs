//! What a TNA parser reads from the target and a deparser hands back to it:
//! the port-metadata slot in front of the frame, and the mirror and resubmit
//! requests with the header each carries into its next pass.

use crate::bits::{get_bits, BitWriter};
use crate::packet::Packet;
use crate::program::{FieldId, Program};

/// `port_metadata_unpack`: reads `fields` (most significant first) from the port
/// metadata at the parser's cursor and moves the cursor `bits` on. A frame too short
/// for the slot leaves the fields 0 (the engine always prepends the whole slot).
pub(super) fn port_metadata_unpack(
    p: &Program,
    pkt: &mut Packet,
    bits: u32,
    fields: &[(FieldId, u32)],
) {
    let start = pkt.cursor * 8;
    if start + bits as usize > pkt.data.len() * 8 {
        return;
    }
    let mut at = start;
    for &(f, w) in fields {
        let v = get_bits(&pkt.data, at, w);
        pkt.phv.set(p, f, v);
        at += w as usize;
    }
    pkt.cursor += bits as usize / 8;
}

/// Which header a deparser request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Slot {
    /// The mirror header, in front of a mirrored copy.
    Mirror,
    /// The resubmit header, in place of the port metadata on the next pass.
    Resubmit,
}

/// Packs `fields` (most significant first, whatever their header's validity: the
/// deparser sends the listed fields) into the request's header bytes.
pub(super) fn pack_fields(p: &Program, pkt: &mut Packet, fields: &[FieldId], slot: Slot) {
    let mut buf = std::mem::take(match slot {
        Slot::Mirror => &mut pkt.tna.mirror_header,
        Slot::Resubmit => &mut pkt.tna.resubmit_header,
    });
    buf.clear();
    let mut w = BitWriter::new(&mut buf);
    for &f in fields {
        w.push(p.wire[f as usize].width, pkt.phv.get(p, f));
    }
    w.finish();
    match slot {
        Slot::Mirror => pkt.tna.mirror_header = buf,
        Slot::Resubmit => pkt.tna.resubmit_header = buf,
    }
}
