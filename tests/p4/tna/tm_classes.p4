/* TNA traffic-manager classes: ingress sends each frame to a port and queue with
 * an iCoS (the priority group the TM counts it in, and its PFC class) and
 * deflect_on_drop, all from a table keyed by ingress port; egress writes what
 * the TM reported (queue depth in cells, queue, whether it was deflected) into
 * a header after Ethernet. */
#include <core.p4>
#include <tna.p4>

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header report_h {
    bit<32> enq_qdepth;
    bit<8> egress_qid;
    bit<8> deflection_flag;
}

struct headers_t {
    ethernet_h ethernet;
    report_h report;
}

struct ig_metadata_t { }

struct eg_metadata_t { }

parser IgParser(packet_in pkt, out headers_t hdr, out ig_metadata_t ig_md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout ig_metadata_t ig_md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action send(PortId_t port, QueueId_t qid, bit<3> icos, bit<1> deflect) {
        ig_tm_md.ucast_egress_port = port;
        ig_tm_md.qid = qid;
        ig_tm_md.ingress_cos = icos;
        ig_tm_md.deflect_on_drop = deflect;
    }

    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    table forward {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { send; drop; }
        default_action = drop;
        size = 64;
    }

    apply {
        forward.apply();
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in ig_metadata_t ig_md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out headers_t hdr, out eg_metadata_t eg_md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Egress(inout headers_t hdr, inout eg_metadata_t eg_md,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {
        hdr.report.setValid();
        hdr.report.enq_qdepth = (bit<32>)eg_intr_md.enq_qdepth;
        hdr.report.egress_qid = (bit<8>)eg_intr_md.egress_qid;
        hdr.report.deflection_flag = (bit<8>)eg_intr_md.deflection_flag;
    }
}

control EgDeparser(packet_out pkt, inout headers_t hdr, in eg_metadata_t eg_md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe;

Switch(pipe) main;
