/* TNA DirectRegister and DirectRegisterAction: a per-entry hit counter of a flow
 * table (one cell per entry, and one the table's miss uses), each packet's count
 * written into a report header with a flag saying whether the table hit. */
#include <core.p4>
#include <tna.p4>
#include "common.p4"

header report_h {
    bit<32> hits;
    bit<8> missed;
}

struct direct_headers_t {
    ethernet_h ethernet;
    ipv4_h ipv4;
    udp_h udp;
    report_h report;
}

parser IgParser(packet_in pkt, out direct_headers_t hdr, out empty_metadata_t ig_md,
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

control Ingress(inout direct_headers_t hdr, inout empty_metadata_t ig_md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    DirectRegister<bit<32>>(0) entry_hits;
    DirectRegisterAction<bit<32>, bit<32>>(entry_hits) count_hit = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = value + 1;
            rv = value;
        }
    };

    action hit() {
        hdr.report.hits = count_hit.execute();
    }

    action miss() {
        hdr.report.hits = count_hit.execute();
        hdr.report.missed = 1;
    }

    table flows {
        key = { hdr.ipv4.src_addr : exact; }
        actions = { hit; miss; }
        default_action = miss;
        size = 16;
        registers = entry_hits;
    }

    apply {
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
        if (hdr.report.isValid()) {
            flows.apply();
        }
    }
}

control IgDeparser(packet_out pkt, inout direct_headers_t hdr, in empty_metadata_t ig_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ingress(), IgDeparser(),
         PassEgressParser(), PassEgress(), PassEgressDeparser()) pipe;

Switch(pipe) main;
