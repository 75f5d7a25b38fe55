/* T2NA ParserCounter stack: a report header gives an outer length and an inner
 * one; the parser loads the outer, pushes the inner (with update_with_top when
 * the report's flag is 1), consumes the inner, pops and consumes what is left of
 * the outer, recording is_zero after each step in the report. With the flag the
 * outer counter was counted down with the inner one; without it, it was not. */
#include <core.p4>
#include <t2na.p4>
#include "common.p4"

header report_h {
    bit<8> outer;
    bit<8> inner;
    bit<8> rest;
    bit<8> flag;
    bit<8> inner_done;
    bit<8> outer_zero_after_pop;
    bit<8> outer_done;
}

struct counter_headers_t {
    ethernet_h ethernet;
    report_h report;
}

parser IgParser(packet_in pkt, out counter_headers_t hdr, out empty_metadata_t ig_md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    ParserCounter() length;

    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x88b5: parse_report;
            default: accept;
        }
    }

    state parse_report {
        pkt.extract(hdr.report);
        length.set(hdr.report.outer);
        transition select(hdr.report.flag) {
            1: push_updating;
            default: push_plain;
        }
    }

    state push_updating {
        length.push(hdr.report.inner, true);
        transition consume;
    }

    state push_plain {
        length.push(hdr.report.inner);
        transition consume;
    }

    state consume {
        length.decrement(hdr.report.inner);
        hdr.report.inner_done = (bit<8>) (bit<1>) length.is_zero();
        length.pop();
        hdr.report.outer_zero_after_pop = (bit<8>) (bit<1>) length.is_zero();
        length.decrement(hdr.report.rest);
        hdr.report.outer_done = (bit<8>) (bit<1>) length.is_zero();
        transition accept;
    }
}

control Ingress(inout counter_headers_t hdr, inout empty_metadata_t ig_md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
    }
}

control IgDeparser(packet_out pkt, inout counter_headers_t hdr, in empty_metadata_t ig_md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out counter_headers_t hdr, out empty_metadata_t eg_md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control Egress(inout counter_headers_t hdr, inout empty_metadata_t eg_md,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control EgDeparser(packet_out pkt, inout counter_headers_t hdr, in empty_metadata_t eg_md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe;

Switch(pipe) main;
