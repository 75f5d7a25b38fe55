/* T2NA's ghost thread: the ghost control keeps each queue's length (cells) in a
 * register indexed by the queue's id; ingress reads the length of the queue it sends
 * to (port 2, queue 0: id 2 * 16 + 0 = 32) and writes it into the IPv4 identification,
 * so each frame carries the queue length ingress saw when it arrived. */
#include <core.p4>
#include <t2na.p4>
#include "common.p4"

const bit<11> PORT2_QUEUE0 = 32;

Register<bit<32>, bit<11>>(2048) queue_cells;

control Ghost(in ghost_intrinsic_metadata_t gh_intr_md) {
    RegisterAction<bit<32>, bit<11>, bit<32>>(queue_cells) store_length = {
        void apply(inout bit<32> value) {
            value = (bit<32>) gh_intr_md.qlength;
        }
    };

    apply {
        store_length.execute(gh_intr_md.qid);
    }
}

struct ig_metadata_t {
    bit<32> cells;
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

control Ingress(inout headers_t hdr, inout ig_metadata_t ig_md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    RegisterAction<bit<32>, bit<11>, bit<32>>(queue_cells) read_length = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };

    apply {
        ig_tm_md.ucast_egress_port = 2;
        ig_tm_md.qid = 0;
        ig_md.cells = read_length.execute(PORT2_QUEUE0);
        if (hdr.ipv4.isValid()) {
            hdr.ipv4.identification = (bit<16>) ig_md.cells;
        }
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in ig_metadata_t ig_md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr);
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

Pipeline(IgParser(), Ingress(), IgDeparser(),
         PassEgressParser(), Egress(), EgDeparser(), Ghost()) pipe;

Switch(pipe) main;
