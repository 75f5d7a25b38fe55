/* TNA RegisterAction: a per-flow packet counter that saturates at a
 * threshold and reports whether it did (a stateful ALU read-modify-write),
 * a running maximum of the IPv4 total length, a read-only RegisterAction
 * and execute_log into a sample log. */
#include <core.p4>
#include <tna.p4>
#include "common.p4"

struct ig_metadata_t {
    bit<16> flow;
    bit<32> count;
    bit<1> over;
    bit<16> max_len;
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
    const bit<32> LIMIT = 100;

    Register<bit<32>, bit<16>>(1024, 0) flow_packets;
    RegisterAction<bit<32>, bit<16>, bit<1>>(flow_packets) count_flow = {
        void apply(inout bit<32> value, out bit<1> over) {
            if (value < LIMIT) {
                value = value + 1;
                over = 0;
            } else {
                over = 1;
            }
        }
    };
    RegisterAction<bit<32>, bit<16>, bit<32>>(flow_packets) read_flow = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };

    Register<bit<16>, bit<1>>(1) longest;
    RegisterAction<bit<16>, bit<1>, bit<16>>(longest) track_longest = {
        void apply(inout bit<16> value, out bit<16> rv) {
            value = max(value, hdr.ipv4.total_len);
            rv = value;
        }
    };

    Register<bit<32>, bit<8>>(256) samples;
    RegisterAction<bit<32>, bit<8>, bit<32>>(samples) log_sample = {
        void apply(inout bit<32> value) {
            value = hdr.ipv4.src_addr;
        }
    };

    action set_flow(bit<16> flow) {
        ig_md.flow = flow;
    }

    table flows {
        key = { hdr.ipv4.src_addr : exact; hdr.ipv4.dst_addr : exact; }
        actions = { set_flow; NoAction; }
        default_action = NoAction;
        size = 1024;
    }

    apply {
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
        if (hdr.ipv4.isValid()) {
            flows.apply();
            ig_md.over = count_flow.execute(ig_md.flow);
            ig_md.count = read_flow.execute(ig_md.flow);
            ig_md.max_len = track_longest.execute(0);
            log_sample.execute_log();
            if (ig_md.over == 1) {
                ig_dprsr_md.drop_ctl = 1;
            }
        }
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in ig_metadata_t ig_md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ingress(), IgDeparser(),
         PassEgressParser(), PassEgress(), PassEgressDeparser()) pipe;

Switch(pipe) main;
