/*
 * Parsers. Both gresses read the frame as the v1model program does
 * (Ethernet, optional RLT, IPv4 without options and not a later fragment or
 * IPv6's fixed header, UDP, and a probe's data header and telemetry block);
 * what differs is what Tofino puts in front: ingress intrinsic metadata and
 * the port metadata slot; egress intrinsic metadata, then the bridged header
 * or, on a BCN copy, the mirror header.
 */
#ifndef BUFFERLAB_TNA_PARSER_P4
#define BUFFERLAB_TNA_PARSER_P4

#include "headers.p4"

parser FrameParser(packet_in pkt, inout switch_headers_t hdr, out bool ipv4_checksum_ok) {
    Checksum() ipv4_checksum;

    state start {
        ipv4_checksum_ok = true;
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_RLT: parse_rlt;
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

    state parse_rlt {
        pkt.extract(hdr.rlt);
        transition select(hdr.rlt.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        ipv4_checksum.add(hdr.ipv4);
        // verify() is true when the checksum is wrong (the error flag Tofino's parser sets).
        ipv4_checksum_ok = !ipv4_checksum.verify();
        transition select(hdr.ipv4.ihl, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (4w5, 13w0, IP_PROTO_UDP): parse_udp;
            default: accept;
        }
    }

    state parse_ipv6 {
        pkt.extract(hdr.ipv6);
        transition accept;
    }

    state parse_udp {
        pkt.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {
            UDP_PORT_PROBE: parse_probe_data;
            default: accept;
        }
    }

    state parse_probe_data {
        pkt.extract(hdr.data);
        transition select(hdr.data.magic) {
            DATA_MAGIC: parse_telemetry;
            default: accept;
        }
    }

    state parse_telemetry {
        pkt.extract(hdr.telemetry);
        transition accept;
    }
}

parser SwitchIngressParser(packet_in pkt,
                           out switch_headers_t hdr,
                           out ig_metadata_t ig_md,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    FrameParser() frame;

    state start {
        pkt.extract(ig_intr_md);
        /* No resubmission here: the slot always holds port metadata, unused. */
        pkt.advance(PORT_METADATA_SIZE);
        frame.apply(pkt, hdr, ig_md.checksum_ok);
        transition accept;
    }
}

parser SwitchEgressParser(packet_in pkt,
                          out switch_headers_t hdr,
                          out eg_metadata_t eg_md,
                          out egress_intrinsic_metadata_t eg_intr_md) {
    FrameParser() frame;
    bool unused_checksum_ok;

    state start {
        pkt.extract(eg_intr_md);
        transition select(pkt.lookahead<bit<8>>()) {
            PKT_BCN_COPY: parse_bcn_copy;
            default: parse_bridged;
        }
    }

    state parse_bridged {
        pkt.extract(hdr.bridged);
        frame.apply(pkt, hdr, unused_checksum_ok);
        transition accept;
    }

    /* Only the sample's Ethernet header is read (its source MAC is the BCN
     * frame's destination); the rest of the sample stays payload, byte-exact. */
    state parse_bcn_copy {
        pkt.extract(eg_md.bcn.mirror);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

#endif
