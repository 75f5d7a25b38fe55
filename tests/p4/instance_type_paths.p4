// Every packet path writes what v1model says it sees: instance_type in ingress
// and egress, egress_rid, packet_length, ingress_port; E2E clones, multicast
// replicas, resubmission, recirculation and the drop port.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

const bit<32> E2E_SESSION = 11;
const bit<32> I2E_SESSION = 10;
const bit<32> MISSING_SESSION = 99;

// op selects the path; the switch fills the other fields.
header path_t {
    bit<8>  op;
    bit<8>  ingress_instance;
    bit<8>  egress_instance;
    bit<16> egress_rid;
    bit<16> ingress_length;
    bit<16> egress_length;
    bit<8>  ingress_port;
    bit<8>  passes;
}

struct headers_t {
    ethernet_t ethernet;
    path_t     path;
}

struct metadata_t {
    @field_list(0)
    bit<8> passes;
}

parser PathParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88b6: parse_path;
            default: accept;
        }
    }
    state parse_path {
        pkt.extract(hdr.path);
        transition accept;
    }
}

control PathVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control PathIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    apply {
        if (!hdr.path.isValid()) {
            mark_to_drop(standard_metadata);
            exit;
        }
        hdr.path.ingress_instance = (bit<8>)standard_metadata.instance_type;
        hdr.path.ingress_length = (bit<16>)standard_metadata.packet_length;
        hdr.path.ingress_port = (bit<8>)standard_metadata.ingress_port;
        hdr.path.passes = meta.passes;
        standard_metadata.egress_spec = 1;
        if (hdr.path.op == 3) {
            standard_metadata.mcast_grp = 1;
        } else if (hdr.path.op == 4) {
            // The drop port (511 by default) discards the packet after ingress.
            standard_metadata.egress_spec = 511;
        } else if (hdr.path.op == 5 && standard_metadata.instance_type == 4) {
            standard_metadata.egress_spec = 3;
        } else if (hdr.path.op == 6) {
            // A clone to a session nobody configured makes no copy.
            clone(CloneType.I2E, MISSING_SESSION);
        } else if (hdr.path.op == 7) {
            clone(CloneType.I2E, I2E_SESSION);
            standard_metadata.egress_spec = 2;
        } else if (hdr.path.op == 8) {
            if (standard_metadata.instance_type == 6) {
                standard_metadata.egress_spec = 3;
            } else {
                meta.passes = meta.passes + 1;
                resubmit_preserving_field_list(0);
            }
        }
    }
}

control PathEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    apply {
        hdr.path.egress_instance = (bit<8>)standard_metadata.instance_type;
        hdr.path.egress_rid = standard_metadata.egress_rid;
        hdr.path.egress_length = (bit<16>)standard_metadata.packet_length;
        if (standard_metadata.instance_type == 2) {
            hdr.path.passes = meta.passes;
        }
        if (standard_metadata.instance_type == 0) {
            if (hdr.path.op == 2) {
                clone(CloneType.E2E, E2E_SESSION);
            } else if (hdr.path.op == 9) {
                meta.passes = 5;
                clone_preserving_field_list(CloneType.E2E, E2E_SESSION, 0);
            } else if (hdr.path.op == 5 && meta.passes == 0) {
                // Recirculated packets are NORMAL again in egress: the preserved
                // pass count stops the loop.
                meta.passes = meta.passes + 1;
                recirculate_preserving_field_list(0);
            }
        }
    }
}

control PathComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control PathDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.path);
    }
}

V1Switch(PathParser(), PathVerifyChecksum(), PathIngress(), PathEgress(),
         PathComputeChecksum(), PathDeparser()) main;
