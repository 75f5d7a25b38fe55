/* TNA queue telemetry: ingress sends every frame to the port and queue a table
 * names (by ingress port), egress writes what the traffic manager reported in
 * eg_intr_md (queue depths in cells, time in the queue in ns, queue id, length)
 * into a telemetry header after Ethernet, so the frame carries its own queueing.
 * The ingress parser reads the port metadata slot with port_metadata_unpack and
 * ingress copies it into the telemetry header too. */
#include <core.p4>
#include <tna.p4>

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header telemetry_h {
    bit<32> enq_qdepth;
    bit<32> deq_qdepth;
    bit<32> deq_timedelta;
    bit<8> egress_qid;
    bit<16> egress_port;
    bit<16> pkt_length;
    bit<32> port_tag;
}

header bridge_h {
    bit<32> port_tag;
}

struct port_metadata_t {
    bit<32> tag;
    bit<32> unused;
}

struct headers_t {
    bridge_h bridge;
    ethernet_h ethernet;
    telemetry_h telemetry;
}

struct ig_metadata_t {
    port_metadata_t port_md;
}

struct eg_metadata_t { }

parser IgParser(packet_in pkt, out headers_t hdr, out ig_metadata_t ig_md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        ig_md.port_md = port_metadata_unpack<port_metadata_t>(pkt);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout ig_metadata_t ig_md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action send(PortId_t port, QueueId_t qid) {
        ig_tm_md.ucast_egress_port = port;
        ig_tm_md.qid = qid;
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
        hdr.bridge.setValid();
        hdr.bridge.port_tag = ig_md.port_md.tag;
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
        pkt.extract(hdr.bridge);
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
        hdr.telemetry.setValid();
        hdr.telemetry.enq_qdepth = (bit<32>)eg_intr_md.enq_qdepth;
        hdr.telemetry.deq_qdepth = (bit<32>)eg_intr_md.deq_qdepth;
        hdr.telemetry.deq_timedelta = (bit<32>)eg_intr_md.deq_timedelta;
        hdr.telemetry.egress_qid = (bit<8>)eg_intr_md.egress_qid;
        hdr.telemetry.egress_port = (bit<16>)eg_intr_md.egress_port;
        hdr.telemetry.pkt_length = eg_intr_md.pkt_length;
        hdr.telemetry.port_tag = hdr.bridge.port_tag;
        hdr.bridge.setInvalid();
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
