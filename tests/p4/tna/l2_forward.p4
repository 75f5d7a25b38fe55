/* TNA L2 switch for the live tests: known destination MACs to their port, anything
 * else flooded through multicast group 1; the ingress port rides to egress in a
 * bridged header, and egress drops the flooded copy going back out of it. */
#include <core.p4>
#include <tna.p4>

header bridge_h {
    @padding bit<7> _pad;
    PortId_t ingress_port;
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

    action flood(MulticastGroupId_t group) {
        ig_tm_md.mcast_grp_a = group;
    }

    table l2_forward {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { to_port; flood; }
        default_action = flood(1);
        size = 1024;
    }

    apply {
        l2_forward.apply();
        hdr.bridge.setValid();
        hdr.bridge.ingress_port = ig_intr_md.ingress_port;
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in empty_t ig_md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out headers_t hdr, out empty_t eg_md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.bridge);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Egress(inout headers_t hdr, inout empty_t eg_md,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {
        if (eg_intr_md.egress_port == hdr.bridge.ingress_port) {
            eg_dprsr_md.drop_ctl = 1;
        }
        hdr.bridge.setInvalid();
    }
}

control EgDeparser(packet_out pkt, inout headers_t hdr, in empty_t eg_md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe;

Switch(pipe) main;
