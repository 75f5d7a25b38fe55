// Parser errors reach standard_metadata.parser_error: PacketTooShort,
// StackOutOfBounds, HeaderTooShort (extract_VL past the varbit's maximum) and a
// program error from verify; ingress sends each to its own port. A select without
// a default has no NoMatch path in p4c-bm2-ss + BMv2 (parsing just ends).
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

error { OptionTooLong }

header option_t {
    bit<8> kind;
    bit<8> length;
}

// Up to 4 bytes of option data.
header option_data_t {
    varbit<32> data;
}

header tag_t {
    bit<7> value;
    bit<1> more;
}

struct headers_t {
    ethernet_t    ethernet;
    option_t      option;
    option_data_t option_data;
    tag_t[2]      tags;
}

struct metadata_t { }

parser ErrParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88b5: parse_option;
            0x88b7: parse_tag;
            0x0800: accept;
        }
    }
    state parse_option {
        pkt.extract(hdr.option);
        // kind 1 options are capped at 2 bytes by the program itself.
        verify(hdr.option.kind != 1 || hdr.option.length <= 2, error.OptionTooLong);
        pkt.extract(hdr.option_data, (bit<32>)hdr.option.length * 8);
        transition accept;
    }
    state parse_tag {
        pkt.extract(hdr.tags.next);
        transition select(hdr.tags.last.more) {
            1: parse_tag;
            default: accept;
        }
    }
}

control ErrVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control ErrIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.parser_error == error.NoError) {
            standard_metadata.egress_spec = 1;
        } else if (standard_metadata.parser_error == error.PacketTooShort) {
            standard_metadata.egress_spec = 2;
        } else if (standard_metadata.parser_error == error.NoMatch) {
            standard_metadata.egress_spec = 3;
        } else if (standard_metadata.parser_error == error.StackOutOfBounds) {
            standard_metadata.egress_spec = 4;
        } else if (standard_metadata.parser_error == error.HeaderTooShort) {
            standard_metadata.egress_spec = 5;
        } else if (standard_metadata.parser_error == error.OptionTooLong) {
            standard_metadata.egress_spec = 6;
        } else {
            standard_metadata.egress_spec = 7;
        }
        // Marks which headers the parser left valid.
        if (hdr.option.isValid()) {
            hdr.option.kind = hdr.option.kind | 0x80;
        }
        if (hdr.tags[1].isValid()) {
            hdr.tags[1].value = 0x7f;
        }
    }
}

control ErrEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) { apply { } }

control ErrComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control ErrDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.option);
        pkt.emit(hdr.option_data);
        pkt.emit(hdr.tags);
    }
}

V1Switch(ErrParser(), ErrVerifyChecksum(), ErrIngress(), ErrEgress(),
         ErrComputeChecksum(), ErrDeparser()) main;
