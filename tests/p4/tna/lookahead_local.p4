/* A header local initialised from a lookahead in a parse state, and a select on
 * it: ingress bridges a two-byte header {kind, tag} chosen per ingress port;
 * the egress parser looks at it before deciding how to take it off (as a mirror
 * header is told from a bridged one): kind 1 is extracted, kind 2 skipped, any
 * other kind rejected (dropped). Egress writes the extracted tag into the
 * destination MAC and the looked-ahead tag into the source MAC. */
#include <core.p4>
#include <tna.p4>

header bridge_h {
    bit<8> kind;
    bit<8> tag;
}

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct headers_t {
    bridge_h bridge;
    ethernet_h ethernet;
}

struct metadata_t {
    bridge_h bridge;
    bit<8> peeked_tag;
}

const bit<8> KIND_EXTRACT = 1;
const bit<8> KIND_SKIP = 2;

parser IgParser(packet_in pkt, out headers_t hdr, out metadata_t ig_md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t ig_md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_kind(bit<8> kind, bit<8> tag) {
        hdr.bridge.setValid();
        hdr.bridge.kind = kind;
        hdr.bridge.tag = tag;
    }

    table bridge_kind {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { set_kind; }
        default_action = set_kind(3, 0);
    }

    apply {
        bridge_kind.apply();
        ig_tm_md.ucast_egress_port = 2;
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in metadata_t ig_md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out headers_t hdr, out metadata_t eg_md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition peek;
    }

    state peek {
        bridge_h peeked = pkt.lookahead<bridge_h>();
        eg_md.peeked_tag = peeked.tag;
        transition select(peeked.kind) {
            KIND_EXTRACT: extract_bridge;
            KIND_SKIP: skip_bridge;
            default: reject;
        }
    }

    state extract_bridge {
        pkt.extract(eg_md.bridge);
        transition parse_ethernet;
    }

    state skip_bridge {
        pkt.advance(16);
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Egress(inout headers_t hdr, inout metadata_t eg_md,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {
        if (eg_md.bridge.isValid()) {
            hdr.ethernet.dst_addr[7:0] = eg_md.bridge.tag;
        }
        hdr.ethernet.src_addr[7:0] = eg_md.peeked_tag;
    }
}

control EgDeparser(packet_out pkt, inout headers_t hdr, in metadata_t eg_md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe;

Switch(pipe) main;
