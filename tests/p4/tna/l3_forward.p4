/* TNA L3 forwarder: IPv4 LPM to a next hop (port, MAC rewrite, TTL - 1),
 * IPv4 checksum verified in the ingress parser and recomputed in the
 * ingress deparser, a per-port queue choice and a bridged header carrying
 * the ingress port to egress, where a table rewrites the source MAC. */
#include <core.p4>
#include <tna.p4>

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
const bit<16> ETHERTYPE_IPV4 = 0x0800;

header bridge_h {
    bit<7> pad;
    PortId_t ingress_port;
}

header ethernet_h {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16> ether_type;
}

header ipv4_h {
    bit<4> version;
    bit<4> ihl;
    bit<8> diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3> flags;
    bit<13> frag_offset;
    bit<8> ttl;
    bit<8> protocol;
    bit<16> hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

struct headers_t {
    bridge_h bridge;
    ethernet_h ethernet;
    ipv4_h ipv4;
}

struct ig_metadata_t {
    bool checksum_err;
}

struct eg_metadata_t {
    PortId_t ingress_port;
}

parser IgParser(packet_in pkt, out headers_t hdr, out ig_metadata_t ig_md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    Checksum() ipv4_checksum;

    state start {
        pkt.extract(ig_intr_md);
        transition select(ig_intr_md.resubmit_flag) {
            1: reject;
            0: skip_port_metadata;
        }
    }

    state skip_port_metadata {
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        ipv4_checksum.add(hdr.ipv4);
        ig_md.checksum_err = ipv4_checksum.verify();
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout ig_metadata_t ig_md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action drop() {
        ig_dprsr_md.drop_ctl = 0x1;
    }

    action route(PortId_t port, mac_addr_t next_hop_mac) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.dst_addr = next_hop_mac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { route; drop; }
        const default_action = drop;
        size = 1024;
    }

    action set_queue(QueueId_t qid) {
        ig_tm_md.qid = qid;
    }

    table port_queue {
        key = { ig_intr_md.ingress_port : exact; hdr.ipv4.diffserv : ternary; }
        actions = { set_queue; NoAction; }
        default_action = NoAction;
        size = 256;
    }

    apply {
        if (hdr.ipv4.isValid() && !ig_md.checksum_err && hdr.ipv4.ttl > 1) {
            ipv4_lpm.apply();
            port_queue.apply();
        } else {
            drop();
        }
        hdr.bridge.setValid();
        hdr.bridge.ingress_port = ig_intr_md.ingress_port;
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in ig_metadata_t ig_md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ipv4_checksum;

    apply {
        hdr.ipv4.hdr_checksum = ipv4_checksum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
            hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out headers_t hdr, out eg_metadata_t eg_md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.bridge);
        eg_md.ingress_port = hdr.bridge.ingress_port;
        hdr.bridge.setInvalid();
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Egress(inout headers_t hdr, inout eg_metadata_t eg_md,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    action set_source_mac(mac_addr_t mac) {
        hdr.ethernet.src_addr = mac;
    }

    table port_mac {
        key = { eg_intr_md.egress_port : exact; }
        actions = { set_source_mac; NoAction; }
        default_action = NoAction;
        size = 512;
    }

    apply {
        port_mac.apply();
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
