// Direct meter attached to a policer table; colour read in the action.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct headers_t {
    ethernet_t ethernet;
}
struct metadata_t {
    bit<32> color;
}

parser DmParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control DmVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control DmIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    direct_meter<bit<32>>(MeterType.packets) source_rate;

    action metered() {
        source_rate.read(meta.color);
    }
    table policer {
        key = { hdr.ethernet.srcAddr : exact; }
        actions = { metered; NoAction; }
        meters = source_rate;
        size = 128;
    }
    table color_action {
        key = { meta.color : exact; }
        actions = { NoAction; }
    }
    apply {
        standard_metadata.egress_spec = 1;
        policer.apply();
        if (meta.color == 2) {
            mark_to_drop(standard_metadata);
        } else {
            color_action.apply();
        }
    }
}

control DmEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control DmComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control DmDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.ethernet); }
}

V1Switch(DmParser(), DmVerifyChecksum(), DmIngress(), DmEgress(),
         DmComputeChecksum(), DmDeparser()) main;
