/* TNA with three pipes (an asymmetric switch): pipe_a and pipe_c forward by
 * destination MAC with the same control (each pipe has its own table),
 * pipe_b counts and forwards every packet to one port. Control-plane names
 * carry the pipe: pipe_a.IngressA.dmac, pipe_c.IngressA.dmac. */
#include <core.p4>
#include <tna.p4>
#include "common.p4"

parser IgParser(packet_in pkt, out headers_t hdr, out empty_metadata_t ig_md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    IngressStart() start_;

    state start {
        start_.apply(pkt, ig_intr_md);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control IngressA(inout headers_t hdr, inout empty_metadata_t ig_md,
                 in ingress_intrinsic_metadata_t ig_intr_md,
                 in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                 inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                 inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action forward(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
    }

    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    table dmac {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { forward; drop; }
        const default_action = drop;
        size = 4096;
    }

    apply {
        dmac.apply();
    }
}

control IngressB(inout headers_t hdr, inout empty_metadata_t ig_md,
                 in ingress_intrinsic_metadata_t ig_intr_md,
                 in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                 inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                 inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Counter<bit<32>, PortId_t>(512, CounterType_t.PACKETS) seen;

    apply {
        seen.count(ig_intr_md.ingress_port);
        ig_tm_md.ucast_egress_port = 128;
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in empty_metadata_t ig_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), IngressA(), IgDeparser(),
         PassEgressParser(), PassEgress(), PassEgressDeparser()) pipe_a;

Pipeline(IgParser(), IngressB(), IgDeparser(),
         PassEgressParser(), PassEgress(), PassEgressDeparser()) pipe_b;

Pipeline(IgParser(), IngressA(), IgDeparser(),
         PassEgressParser(), PassEgress(), PassEgressDeparser()) pipe_c;

Switch(pipe_a, pipe_b, pipe_c) main;
