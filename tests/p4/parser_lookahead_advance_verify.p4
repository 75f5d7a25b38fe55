// Parser errors: lookahead to peek, advance to skip options, verify with user errors.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

error { BadIpVersion, OptionsTooLong }

header ipv4_options_hint_t {
    bit<8> firstOption;
}

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    udp_t      udp;
}
struct metadata_t {
    bit<8> first_option;
}

parser PeekParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(pkt.lookahead<bit<4>>()) {
            4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        verify(hdr.ipv4.version == 4, error.BadIpVersion);
        verify(hdr.ipv4.ihl <= 10, error.OptionsTooLong);
        transition select(hdr.ipv4.ihl) {
            5: parse_l4;
            default: skip_options;
        }
    }
    state skip_options {
        meta.first_option = pkt.lookahead<ipv4_options_hint_t>().firstOption;
        pkt.advance(((bit<32>)hdr.ipv4.ihl - 5) * 32);
        transition parse_l4;
    }
    state parse_l4 {
        transition select(hdr.ipv4.protocol) {
            PROTO_UDP: parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition accept;
    }
}

control PeekVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control PeekIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.parser_error == error.BadIpVersion) {
            standard_metadata.egress_spec = 2;
        } else if (standard_metadata.parser_error == error.PacketTooShort) {
            mark_to_drop(standard_metadata);
        } else {
            standard_metadata.egress_spec = 1;
        }
    }
}

control PeekEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) { apply { } }

control PeekComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control PeekDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
    }
}

V1Switch(PeekParser(), PeekVerifyChecksum(), PeekIngress(), PeekEgress(),
         PeekComputeChecksum(), PeekDeparser()) main;
