// Table properties and control-plane annotations: @name, @id, size, scopes, idle timeout.
#include <core.p4>
#include <v1model.p4>
#include "include/std_headers.p4"

struct headers_t {
    ethernet_t ethernet;
}
struct metadata_t {
    bit<16> vrf;
}

parser PropParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control PropVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control PropIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    @name("set_vrf") action assign_vrf(bit<16> vrf) {
        meta.vrf = vrf;
    }
    @id(0x01000101) action forward(@id(7) port_t port, bit<16> vrf_hint) {
        standard_metadata.egress_spec = port;
        meta.vrf = vrf_hint;
    }
    action drop() {
        mark_to_drop(standard_metadata);
    }
    @name(".global_port_vrf") table port_vrf {
        key = { standard_metadata.ingress_port : exact @name("port"); }
        actions = { assign_vrf; @defaultonly drop; }
        const default_action = drop();
        size = 32;
    }
    @id(0x02000042) table l2_by_vrf {
        key = {
            meta.vrf : exact;
            hdr.ethernet.dstAddr : exact;
            hdr.ethernet.etherType & 0xff00 : ternary @name("ethertype_hi");
        }
        actions = { @tableonly forward; drop; }
        default_action = drop();
        support_timeout = true;
        size = 2048;
    }
    apply {
        port_vrf.apply();
        l2_by_vrf.apply();
    }
}

control PropEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) { apply { } }

control PropComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control PropDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.ethernet); }
}

V1Switch(PropParser(), PropVerifyChecksum(), PropIngress(), PropEgress(),
         PropComputeChecksum(), PropDeparser()) main;
