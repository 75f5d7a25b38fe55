/* TNA Lpf and Wred, indexed (per ingress port) and direct (per entry of a flow
 * table), each filtering the sample a report header carries and writing its
 * output back into the report: an Lpf's filtered value, a Wred's drop_value or
 * no_drop_value (0xd / 0xa for the direct one). Cells are configured by the
 * control plane (Engine.lpf_set / wred_set); an unconfigured Lpf returns its
 * input and an unconfigured Wred never drops. */
#include <core.p4>
#include <tna.p4>
#include "common.p4"

header report_h {
    bit<16> sample;
    bit<16> lpf_out;
    bit<16> direct_lpf_out;
    bit<8> wred_out;
    bit<8> direct_wred_out;
}

struct filter_headers_t {
    ethernet_h ethernet;
    ipv4_h ipv4;
    udp_h udp;
    report_h report;
}

parser IgParser(packet_in pkt, out filter_headers_t hdr, out empty_metadata_t ig_md,
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

control Ingress(inout filter_headers_t hdr, inout empty_metadata_t ig_md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Lpf<bit<16>, PortId_t>(512) port_lpf;
    Wred<bit<16>, PortId_t>(512, 1, 0) port_wred;
    DirectLpf<bit<16>>() flow_lpf;
    DirectWred<bit<16>>(8w0xd, 8w0xa) flow_wred;

    action filter_flow() {
        hdr.report.direct_lpf_out = flow_lpf.execute(hdr.report.sample);
    }

    table lpf_flows {
        key = { hdr.ipv4.src_addr : exact; }
        actions = { filter_flow; NoAction; }
        default_action = NoAction;
        size = 16;
        filters = flow_lpf;
    }

    action police_flow() {
        hdr.report.direct_wred_out = flow_wred.execute(hdr.report.sample);
    }

    table wred_flows {
        key = { hdr.ipv4.src_addr : exact; }
        actions = { police_flow; NoAction; }
        default_action = NoAction;
        size = 16;
        filters = flow_wred;
    }

    apply {
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
        if (hdr.report.isValid()) {
            hdr.report.lpf_out = port_lpf.execute(hdr.report.sample, ig_intr_md.ingress_port);
            hdr.report.wred_out = port_wred.execute(hdr.report.sample, ig_intr_md.ingress_port);
            lpf_flows.apply();
            wred_flows.apply();
        }
    }
}

control IgDeparser(packet_out pkt, inout filter_headers_t hdr, in empty_metadata_t ig_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ingress(), IgDeparser(),
         PassEgressParser(), PassEgress(), PassEgressDeparser()) pipe;

Switch(pipe) main;
