/* TNA Hash: an ECMP group chosen by a CRC16 of the 5-tuple (an
 * ActionSelector over an ActionProfile), a custom CRC32 polynomial hash
 * kept in metadata, an identity hash, and a Random value for sampling. */
#include <core.p4>
#include <tna.p4>
#include "common.p4"

struct ig_metadata_t {
    bit<16> flow_hash;
    bit<32> custom_hash;
    bit<8> low_byte;
    bit<16> sample;
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
    Hash<bit<16>>(HashAlgorithm_t.CRC16) flow_crc;
    CRCPolynomial<bit<32>>(32w0x1EDC6F41, true, false, false, 32w0xFFFFFFFF, 32w0xFFFFFFFF) crc32c;
    Hash<bit<32>>(HashAlgorithm_t.CUSTOM, crc32c) crc32c_hash;
    Hash<bit<8>>(HashAlgorithm_t.IDENTITY) low_byte;
    Random<bit<16>>() sampler;

    Hash<bit<16>>(HashAlgorithm_t.CRC16) selector_hash;
    ActionProfile(256) ecmp_members;
    ActionSelector(ecmp_members, selector_hash, SelectorMode_t.FAIR, 16, 64) ecmp_selector;

    action set_next_hop(PortId_t port, mac_addr_t dst) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.dst_addr = dst;
    }

    table ecmp {
        key = {
            hdr.ipv4.dst_addr : exact;
            hdr.ipv4.src_addr : selector;
            hdr.ipv4.dst_addr : selector;
            hdr.ipv4.protocol : selector;
            hdr.udp.src_port : selector;
            hdr.udp.dst_port : selector;
        }
        actions = { set_next_hop; }
        size = 1024;
        implementation = ecmp_selector;
    }

    apply {
        ig_md.flow_hash = flow_crc.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                                        hdr.udp.src_port, hdr.udp.dst_port});
        ig_md.custom_hash = crc32c_hash.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        ig_md.low_byte = low_byte.get({hdr.ipv4.dst_addr[7:0]});
        ig_md.sample = sampler.get();
        if (hdr.ipv4.isValid()) {
            ecmp.apply();
        }
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in ig_metadata_t ig_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ingress(), IgDeparser(),
         PassEgressParser(), PassEgress(), PassEgressDeparser()) pipe;

Switch(pipe) main;
