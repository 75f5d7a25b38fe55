/* TNA RegisterParam and MathUnit inside RegisterActions: a counter that counts
 * up to a limit the control plane sets (a RegisterParam, initially 3), and two
 * math units approximating 3·x and 1000/x as Tofino's stateful ALU does (a
 * 4-bit mantissa and an exponent), all written into a report header. */
#include <core.p4>
#include <tna.p4>
#include "common.p4"

header report_h {
    bit<32> input;
    bit<32> count;
    bit<32> tripled;
    bit<32> per_thousand;
}

struct math_headers_t {
    ethernet_h ethernet;
    ipv4_h ipv4;
    udp_h udp;
    report_h report;
}

parser IgParser(packet_in pkt, out math_headers_t hdr, out empty_metadata_t ig_md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            IP_PROTO_UDP: parse_udp;
            default: accept;
        }
    }

    state parse_udp {
        pkt.extract(hdr.udp);
        pkt.extract(hdr.report);
        transition accept;
    }
}

control Ingress(inout math_headers_t hdr, inout empty_metadata_t ig_md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    RegisterParam<bit<32>>(3) limit;
    MathUnit<bit<32>>(MathOp_t.MUL, 3) times_three;
    MathUnit<bit<32>>(MathOp_t.DIV, 1000) thousand_over;

    Register<bit<32>, bit<1>>(1, 0) packets;
    RegisterAction<bit<32>, bit<1>, bit<32>>(packets) count_to_limit = {
        void apply(inout bit<32> value, out bit<32> rv) {
            if (value < limit.read()) {
                value = value + 1;
            }
            rv = value;
        }
    };

    Register<bit<32>, bit<1>>(1, 0) last_tripled;
    RegisterAction<bit<32>, bit<1>, bit<32>>(last_tripled) triple = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = times_three.execute(hdr.report.input);
            rv = value;
        }
    };

    Register<bit<32>, bit<1>>(1, 0) last_quotient;
    RegisterAction<bit<32>, bit<1>, bit<32>>(last_quotient) divide = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = thousand_over.execute(hdr.report.input);
            rv = value;
        }
    };

    apply {
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
        if (hdr.report.isValid()) {
            hdr.report.count = count_to_limit.execute(0);
            hdr.report.tripled = triple.execute(0);
            hdr.report.per_thousand = divide.execute(0);
        }
    }
}

control IgDeparser(packet_out pkt, inout math_headers_t hdr, in empty_metadata_t ig_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ingress(), IgDeparser(),
         PassEgressParser(), PassEgress(), PassEgressDeparser()) pipe;

Switch(pipe) main;
