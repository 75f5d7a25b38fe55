/* TNA Hash with Tofino's predefined CRCs, a CUSTOM CRCPolynomial (CRC-32C) and
 * XOR8, each over a 9-byte key the packet carries (the CRC catalogue's
 * "123456789" gives its published check values), written into a report header
 * the STF reads back; a @symmetric CRC16 of the flow (addresses and ports), the
 * same for both directions; and an ActionSelector whose member is chosen by the CRC16
 * of the flow (IPv4 source, UDP source port), keeping the Hash<8>'s low 8 bits. */
#include <core.p4>
#include <tna.p4>
#include "common.p4"

header report_h {
    bit<72> key;
    bit<8> crc8;
    bit<8> xor8;
    bit<16> crc16;
    bit<32> crc32;
    bit<32> crc32c;
    bit<64> crc64;
    bit<16> flow;
}

struct hash_headers_t {
    ethernet_h ethernet;
    ipv4_h ipv4;
    udp_h udp;
    report_h report;
}

parser IgParser(packet_in pkt, out hash_headers_t hdr, out empty_metadata_t ig_md,
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

control Ingress(inout hash_headers_t hdr, inout empty_metadata_t ig_md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Hash<bit<8>>(HashAlgorithm_t.CRC8) crc8;
    Hash<bit<8>>(HashAlgorithm_t.XOR8) xor8;
    Hash<bit<16>>(HashAlgorithm_t.CRC16) crc16;
    Hash<bit<32>>(HashAlgorithm_t.CRC32) crc32;
    CRCPolynomial<bit<32>>(32w0x1EDC6F41, true, false, false, 32w0xFFFFFFFF, 32w0xFFFFFFFF) castagnoli;
    Hash<bit<32>>(HashAlgorithm_t.CUSTOM, castagnoli) crc32c;
    Hash<bit<64>>(HashAlgorithm_t.CRC64) crc64;
    @symmetric("hdr.ipv4.src_addr", "hdr.ipv4.dst_addr")
    @symmetric("hdr.udp.src_port", "hdr.udp.dst_port")
    Hash<bit<16>>(HashAlgorithm_t.CRC16) flow;

    Hash<bit<8>>(HashAlgorithm_t.CRC16) flow_hash;
    ActionProfile(64) next_hops;
    ActionSelector(next_hops, flow_hash, SelectorMode_t.FAIR, 8, 4) next_hop_selector;

    action forward(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
    }

    table next_hop {
        key = {
            hdr.ipv4.dst_addr : exact;
            hdr.ipv4.src_addr : selector;
            hdr.udp.src_port : selector;
        }
        actions = { forward; }
        size = 16;
        implementation = next_hop_selector;
    }

    apply {
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
        if (hdr.report.isValid()) {
            hdr.report.crc8 = crc8.get({hdr.report.key});
            hdr.report.xor8 = xor8.get({hdr.report.key});
            hdr.report.crc16 = crc16.get({hdr.report.key});
            hdr.report.crc32 = crc32.get({hdr.report.key});
            hdr.report.crc32c = crc32c.get({hdr.report.key});
            hdr.report.crc64 = crc64.get({hdr.report.key});
            hdr.report.flow = flow.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr,
                                        hdr.udp.src_port, hdr.udp.dst_port});
        }
        if (hdr.ipv4.isValid()) {
            next_hop.apply();
        }
    }
}

control IgDeparser(packet_out pkt, inout hash_headers_t hdr, in empty_metadata_t ig_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ingress(), IgDeparser(),
         PassEgressParser(), PassEgress(), PassEgressDeparser()) pipe;

Switch(pipe) main;
