/* T2NA: a ghost thread that records each queue's length from the TM into
 * a register, which ingress reads to mark ECN before the packet is queued
 * (the Tofino 2 way to see congestion at ingress); a two-result
 * RegisterAction2 and the Pktgen extern in the ingress deparser. */
#include <core.p4>
#include <t2na.p4>
#include "common.p4"

header pktgen_prefix_h {
    bit<16> reason;
}

struct ig_metadata_t {
    bit<32> qlength;
    bit<32> old_count;
    bit<32> new_count;
    pktgen_prefix_h prefix;
}

parser IgParser(packet_in pkt, out headers_t hdr, out ig_metadata_t ig_md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    IngressStart() start_;
    PacketParser() packets;

    state start {
        start_.apply(pkt, ig_intr_md);
        packets.apply(pkt, hdr);
        transition accept;
    }
}

Register<bit<32>, bit<11>>(2048) queue_length;

control Ghost(in ghost_intrinsic_metadata_t gh_intr_md) {
    RegisterAction<bit<32>, bit<11>, bit<32>>(queue_length) store_length = {
        void apply(inout bit<32> value) {
            value = (bit<32>) gh_intr_md.qlength;
        }
    };

    apply {
        store_length.execute(gh_intr_md.qid);
    }
}

control Ingress(inout headers_t hdr, inout ig_metadata_t ig_md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    RegisterAction<bit<32>, bit<11>, bit<32>>(queue_length) read_length = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };

    Register<bit<32>, bit<8>>(256) counts;
    RegisterAction2<bit<32>, bit<8>, bit<32>, bit<32>>(counts) count_twice = {
        void apply(inout bit<32> value, out bit<32> before, out bit<32> after) {
            before = value;
            value = value + 1;
            after = value;
        }
    };

    apply {
        ig_tm_md.ucast_egress_port = 2;
        ig_tm_md.qid = 0;
        ig_md.qlength = read_length.execute(0);
        ig_md.old_count = count_twice.execute(hdr.ipv4.protocol, ig_md.new_count);
        if (ig_md.qlength > 100 && hdr.ipv4.isValid()) {
            hdr.ipv4.diffserv[1:0] = 3;
        }
        if (ig_md.new_count == 1000) {
            ig_dprsr_md.pktgen = 1;
            ig_md.prefix.setValid();
            ig_md.prefix.reason = 1;
        }
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in ig_metadata_t ig_md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Pktgen() pktgen;

    apply {
        if (ig_dprsr_md.pktgen == 1) {
            pktgen.emit(ig_md.prefix);
        }
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out headers_t hdr, out empty_metadata_t eg_md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control Egress(inout headers_t hdr, inout empty_metadata_t eg_md,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control EgDeparser(packet_out pkt, inout headers_t hdr, in empty_metadata_t eg_md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser(), Ghost()) pipe;

Switch(pipe) main;
