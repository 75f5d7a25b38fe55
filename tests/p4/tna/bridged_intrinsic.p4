/* A metadata member named like the architecture's own intrinsic metadata: the
 * program's `ig_intr_md` (an ingress_intrinsic_metadata_t) is a copy of the
 * architecture's, changed by a table action and bridged to egress, which writes
 * its ingress_port into the destination MAC. Ingress writes the architecture's
 * ingress_port (never changed) into the source MAC, so a frame shows the two
 * instances apart. In front of the bridged copy goes a one-byte kind, which the
 * egress parser selects on. */
#include <core.p4>
#include <tna.p4>

header kind_h {
    bit<8> kind;
}

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct headers_t {
    ethernet_h ethernet;
}

struct metadata_t {
    kind_h kind;
    ingress_intrinsic_metadata_t ig_intr_md;
}

const bit<8> KIND_PLAIN = 0;
const bit<8> KIND_INTRINSIC = 1;

parser IgParser(packet_in pkt, out headers_t hdr, out metadata_t ig_md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        ig_md.kind.setValid();
        ig_md.kind.kind = KIND_PLAIN;
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t ig_md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action bridge_port(PortId_t delta) {
        ig_md.kind.kind = KIND_INTRINSIC;
        ig_md.ig_intr_md = ig_intr_md;
        ig_md.ig_intr_md.ingress_port = ig_intr_md.ingress_port + delta;
    }

    table bridge_ctrl {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { bridge_port; NoAction; }
        default_action = NoAction;
    }

    apply {
        bridge_ctrl.apply();
        hdr.ethernet.src_addr = (bit<48>)ig_intr_md.ingress_port;
        ig_tm_md.ucast_egress_port = 2;
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in metadata_t ig_md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(ig_md.kind);
        pkt.emit(ig_md.ig_intr_md);
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out headers_t hdr, out metadata_t eg_md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(eg_md.kind);
        transition select(eg_md.kind.kind) {
            KIND_INTRINSIC: parse_intrinsic;
            default: parse_ethernet;
        }
    }

    state parse_intrinsic {
        pkt.extract(eg_md.ig_intr_md);
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
        if (eg_md.ig_intr_md.isValid()) {
            hdr.ethernet.dst_addr = (bit<48>)eg_md.ig_intr_md.ingress_port;
        }
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
