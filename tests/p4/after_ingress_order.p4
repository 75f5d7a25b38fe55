// The order simple_switch applies its after-ingress and after-egress decisions:
// clones are made before the drop check, resubmit wins over multicast, multicast
// over the drop port, mark_to_drop cancels an earlier multicast group, an egress
// drop cancels a recirculation, an unknown group replicates nothing.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

const bit<32> I2E_SESSION = 1;
const bit<32> E2E_SESSION = 2;

header order_t {
    bit<8> op;
    bit<8> egress_instance;
}

struct headers_t {
    ethernet_t ethernet;
    order_t    order;
}

struct metadata_t {
    @field_list(0)
    bit<8> passes;
}

parser OrdParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.order);
        transition accept;
    }
}

control OrdVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control OrdIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
        bit<8> op = hdr.order.op;
        if (op == 1) {
            clone(CloneType.I2E, I2E_SESSION);
            mark_to_drop(standard_metadata);
        } else if (op == 3) {
            standard_metadata.mcast_grp = 1;
            mark_to_drop(standard_metadata);
        } else if (op == 4) {
            mark_to_drop(standard_metadata);
            standard_metadata.mcast_grp = 1;
        } else if (op == 5 || op == 8) {
            if (standard_metadata.instance_type == 6) {
                standard_metadata.egress_spec = 3;
            } else {
                meta.passes = 1;
                if (op == 5) {
                    standard_metadata.mcast_grp = 1;
                } else {
                    clone(CloneType.I2E, I2E_SESSION);
                }
                resubmit_preserving_field_list(0);
            }
        } else if (op == 6 && standard_metadata.instance_type == 4) {
            standard_metadata.egress_spec = 7;
        } else if (op == 7) {
            standard_metadata.mcast_grp = 9;
        }
    }
}

control OrdEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        hdr.order.egress_instance = (bit<8>)standard_metadata.instance_type;
        if (standard_metadata.instance_type == 0 && meta.passes == 0) {
            if (hdr.order.op == 2) {
                clone(CloneType.E2E, E2E_SESSION);
                mark_to_drop(standard_metadata);
            } else if (hdr.order.op == 6) {
                meta.passes = 1;
                recirculate_preserving_field_list(0);
                mark_to_drop(standard_metadata);
            }
        }
        if (hdr.order.op == 9) {
            truncate(1000);
        }
    }
}

control OrdComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control OrdDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.order);
    }
}

V1Switch(OrdParser(), OrdVerifyChecksum(), OrdIngress(), OrdEgress(),
         OrdComputeChecksum(), OrdDeparser()) main;
