/*
 * Parser and checksum verification. Ethernet, an optional RLT, IPv4
 * without options and not a later fragment (or IPv6's fixed header), UDP, and for probes (UDP
 * destination port 47000 with the data header's magic) the telemetry
 * block. Anything else stays payload and is forwarded untouched.
 */
#ifndef BUFFERLAB_PARSER_P4
#define BUFFERLAB_PARSER_P4

#include "metadata.p4"

parser BufferParser(packet_in packet,
                    out headers_t hdr,
                    inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_RLT: parse_rlt;
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

    state parse_rlt {
        packet.extract(hdr.rlt);
        transition select(hdr.rlt.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        /* UDP is only where we expect it: no options, first fragment. */
        transition select(hdr.ipv4.ihl, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (4w5, 13w0, IP_PROTO_UDP): parse_udp;
            default: accept;
        }
    }

    state parse_ipv6 {
        packet.extract(hdr.ipv6);
        transition accept;
    }

    state parse_udp {
        packet.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {
            UDP_PORT_PROBE: parse_probe_data;
            default: accept;
        }
    }

    state parse_probe_data {
        packet.extract(hdr.data);
        transition select(hdr.data.magic) {
            DATA_MAGIC: parse_telemetry;
            default: accept;
        }
    }

    state parse_telemetry {
        packet.extract(hdr.telemetry);
        transition accept;
    }
}

control BufferVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv,
              hdr.ipv4.total_len, hdr.ipv4.identification,
              hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

#endif
