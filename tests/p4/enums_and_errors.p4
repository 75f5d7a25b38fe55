// Enums, serializable enums as header fields and table keys, error values in metadata.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

enum bit<8> opcode_t {
    PING = 1,
    PONG = 2,
    DROP = 3
}

enum color_t { GREEN, YELLOW, RED }

header op_t {
    opcode_t opcode;
    bit<8>   arg;
}

struct headers_t {
    ethernet_t ethernet;
    op_t       op;
}
struct metadata_t {
    error   parse_status;
    opcode_t last_op;
}

parser EnumParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88b7: parse_op;
            default: accept;
        }
    }
    state parse_op {
        pkt.extract(hdr.op);
        transition select(hdr.op.opcode) {
            opcode_t.PING: accept;
            opcode_t.PONG: accept;
            default: reject;
        }
    }
}

control EnumVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control EnumIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    color_t color = color_t.GREEN;

    action reply(opcode_t answer) {
        hdr.op.opcode = answer;
        standard_metadata.egress_spec = standard_metadata.ingress_port;
    }
    table responder {
        key = { hdr.op.opcode : exact; }
        actions = { reply; NoAction; }
        const entries = {
            opcode_t.PING : reply(opcode_t.PONG);
        }
    }
    apply {
        meta.parse_status = standard_metadata.parser_error;
        if (meta.parse_status != error.NoError) {
            color = color_t.RED;
        }
        if (hdr.op.isValid()) {
            meta.last_op = hdr.op.opcode;
            responder.apply();
        }
        if (color == color_t.RED) {
            mark_to_drop(standard_metadata);
        }
    }
}

control EnumEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) { apply { } }

control EnumComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control EnumDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.op);
    }
}

V1Switch(EnumParser(), EnumVerifyChecksum(), EnumIngress(), EnumEgress(),
         EnumComputeChecksum(), EnumDeparser()) main;
