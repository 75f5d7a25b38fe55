/* Shared by the TNA test programs: Ethernet/IPv4/UDP headers and the ingress
 * parser start every TNA program has (intrinsic metadata, then port
 * metadata or, on a resubmitted pass, the resubmit header). */
#ifndef TNA_TEST_COMMON
#define TNA_TEST_COMMON

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8> IP_PROTO_UDP = 17;

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

header udp_h {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

struct headers_t {
    ethernet_h ethernet;
    ipv4_h ipv4;
    udp_h udp;
}

parser PacketParser(packet_in pkt, inout headers_t hdr) {
    state start {
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
        transition accept;
    }
}

struct empty_metadata_t { }

/* Ingress parser start: intrinsic metadata, then the port metadata slot. */
parser IngressStart(packet_in pkt, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition accept;
    }
}

/* An egress that passes Ethernet frames through unchanged. */
parser PassEgressParser(packet_in pkt, out headers_t hdr, out empty_metadata_t eg_md,
                        out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control PassEgress(inout headers_t hdr, inout empty_metadata_t eg_md,
                   in egress_intrinsic_metadata_t eg_intr_md) {
    apply { }
}

control PassEgressDeparser(packet_out pkt, inout headers_t hdr, in empty_metadata_t eg_md) {
    apply {
        pkt.emit(hdr);
    }
}

#endif
