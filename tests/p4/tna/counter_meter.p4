/* TNA counters and meters: an indexed per-port packet-and-byte Counter, a
 * DirectCounter on the ACL table, a colour-blind byte Meter per port whose
 * colour sets packet_color, and a DirectMeter policing the ACL entries;
 * an Lpf of packet lengths and a Wred marking ECN in egress. */
#include <core.p4>
#include <tna.p4>
#include "common.p4"

struct ig_metadata_t {
    bit<8> port_color;
    bit<8> acl_color;
}

struct eg_metadata_t {
    bit<16> avg_len;
    bit<8> wred_drop;
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
    Counter<bit<64>, PortId_t>(512, CounterType_t.PACKETS_AND_BYTES) port_packets;
    Meter<PortId_t>(512, MeterType_t.BYTES) port_meter;
    DirectCounter<bit<32>>(CounterType_t.PACKETS) acl_hits;
    DirectMeter(MeterType_t.PACKETS) acl_policer;

    action permit() {
        acl_hits.count();
        ig_md.acl_color = acl_policer.execute();
    }

    action deny() {
        acl_hits.count();
        ig_md.acl_color = acl_policer.execute();
        ig_dprsr_md.drop_ctl = 1;
    }

    table acl {
        key = { hdr.ipv4.src_addr : ternary; hdr.ipv4.dst_addr : ternary; }
        actions = { permit; deny; }
        const default_action = permit;
        size = 512;
        counters = acl_hits;
        meters = acl_policer;
    }

    apply {
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port ^ 1;
        port_packets.count(ig_intr_md.ingress_port);
        ig_md.port_color = port_meter.execute(ig_intr_md.ingress_port);
        ig_tm_md.packet_color = ig_md.port_color[1:0];
        acl.apply();
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in ig_metadata_t ig_md) {
    apply {
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out headers_t hdr, out eg_metadata_t eg_md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    PacketParser() packets;

    state start {
        pkt.extract(eg_intr_md);
        packets.apply(pkt, hdr);
        transition accept;
    }
}

control Egress(inout headers_t hdr, inout eg_metadata_t eg_md,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Lpf<bit<16>, PortId_t>(512) length_filter;
    Wred<bit<19>, PortId_t>(512, 1, 0) queue_wred;

    apply {
        eg_md.avg_len = length_filter.execute(eg_intr_md.pkt_length, eg_intr_md.egress_port);
        eg_md.wred_drop = queue_wred.execute(eg_intr_md.deq_qdepth, eg_intr_md.egress_port);
        if (eg_md.wred_drop == 1 && hdr.ipv4.isValid()) {
            hdr.ipv4.diffserv[1:0] = 3;
        }
    }
}

control EgDeparser(packet_out pkt, inout headers_t hdr, in eg_metadata_t eg_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe;

Switch(pipe) main;
