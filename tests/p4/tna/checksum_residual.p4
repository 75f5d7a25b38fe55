/* TNA Checksum both ways: the ingress parser verifies the IPv4 header checksum
 * (verify() is the error flag) and takes the UDP checksum's residual (get() after
 * subtracting the fields ingress will change); ingress rewrites the source address and
 * port (a NAT), and the deparser recomputes the IPv4 checksum and updates the UDP one
 * incrementally from the residual. A frame with a wrong IPv4 checksum is dropped. */
#include <core.p4>
#include <tna.p4>

header ethernet_h { bit<48> dst_addr; bit<48> src_addr; bit<16> ether_type; }
header ipv4_h {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> total_len;
    bit<16> identification; bit<3> flags; bit<13> frag_offset;
    bit<8> ttl; bit<8> protocol; bit<16> hdr_checksum;
    bit<32> src_addr; bit<32> dst_addr;
}
header udp_h { bit<16> src_port; bit<16> dst_port; bit<16> length; bit<16> checksum; }

struct headers_t { ethernet_h ethernet; ipv4_h ipv4; udp_h udp; }
struct ig_metadata_t { bool ipv4_checksum_err; bit<16> udp_residual; }
struct empty_t { }

parser IgParser(packet_in pkt, out headers_t hdr, out ig_metadata_t ig_md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    Checksum() ipv4_checksum;
    Checksum() udp_checksum;

    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.ipv4);
        ipv4_checksum.add(hdr.ipv4);
        ig_md.ipv4_checksum_err = ipv4_checksum.verify();
        udp_checksum.subtract({hdr.ipv4.src_addr});
        pkt.extract(hdr.udp);
        udp_checksum.subtract({hdr.udp.checksum});
        udp_checksum.subtract({hdr.udp.src_port});
        ig_md.udp_residual = udp_checksum.get();
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout ig_metadata_t ig_md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action nat(bit<32> src_addr, bit<16> src_port) {
        hdr.ipv4.src_addr = src_addr;
        hdr.udp.src_port = src_port;
        ig_tm_md.ucast_egress_port = 2;
    }

    table translate {
        key = { hdr.ipv4.src_addr : exact; hdr.udp.src_port : exact; }
        actions = { nat; NoAction; }
        default_action = NoAction;
        size = 16;
    }

    apply {
        if (ig_md.ipv4_checksum_err) {
            ig_dprsr_md.drop_ctl = 1;
        } else {
            translate.apply();
        }
        ig_tm_md.bypass_egress = 1;
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in ig_metadata_t ig_md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ipv4_checksum;
    Checksum() udp_checksum;

    apply {
        hdr.ipv4.hdr_checksum = ipv4_checksum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
            hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        hdr.udp.checksum = udp_checksum.update({hdr.ipv4.src_addr, hdr.udp.src_port,
                                               ig_md.udp_residual}, true);
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out headers_t hdr, out empty_t eg_md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}
control Egress(inout headers_t hdr, inout empty_t eg_md,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}
control EgDeparser(packet_out pkt, inout headers_t hdr, in empty_t eg_md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe;

Switch(pipe) main;
