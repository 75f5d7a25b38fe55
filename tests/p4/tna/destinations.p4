/* Where ingress sends a packet on Tofino: a unicast port, a multicast group, both, or
 * nowhere (the traffic manager drops a packet with no destination). A table keyed on
 * the destination MAC picks one; egress passes frames through unchanged. */
#include <core.p4>
#include <tna.p4>

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct headers_t {
    ethernet_h ethernet;
}

struct empty_t { }

parser IgParser(packet_in pkt, out headers_t hdr, out empty_t ig_md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout empty_t ig_md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action to_port(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
    }

    action to_group(MulticastGroupId_t group) {
        ig_tm_md.mcast_grp_a = group;
    }

    action to_both(PortId_t port, MulticastGroupId_t group) {
        ig_tm_md.ucast_egress_port = port;
        ig_tm_md.mcast_grp_a = group;
    }

    table destination {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { to_port; to_group; to_both; NoAction; }
        default_action = NoAction;
        size = 16;
    }

    apply {
        destination.apply();
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in empty_t ig_md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

/* No eg_intr_md extracted: the target does not put it in front of the packet. */
parser EgParser(packet_in pkt, out headers_t hdr, out empty_t eg_md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Egress(inout headers_t hdr, inout empty_t eg_md,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control EgDeparser(packet_out pkt, inout headers_t hdr, in empty_t eg_md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe;

Switch(pipe) main;
