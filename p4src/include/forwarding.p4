/*
 * Forwarding: IPv4 longest prefix match to (next-hop MAC, port); frames
 * the route table does not claim are bridged on destination MAC; unknown
 * and broadcast destinations go to the multicast group the controller
 * names in l2_forward's default action.
 */
#ifndef BUFFERLAB_FORWARDING_P4
#define BUFFERLAB_FORWARDING_P4

#include "metadata.p4"
#include "discards.p4"

control Forwarding(inout headers_t hdr,
                   inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    @name(".drop")
    action drop() {
        mark_to_drop(standard_metadata);
        meta.unicast = 0;
        ingress_discards.count(DISCARD_FORWARDING);
    }

    @name(".l2_to_port")
    action l2_to_port(port_t port) {
        standard_metadata.egress_spec = port;
        meta.unicast = 1;
    }

    @name(".flood")
    action flood(bit<16> group) {
        standard_metadata.mcast_grp = group;
        meta.unicast = 0;
    }

    /* A router rewrites the source MAC to its own port's MAC. */
    @name(".ipv4_forward")
    action ipv4_forward(mac_addr_t dst_mac, port_t port) {
        hdr.ethernet.src_addr = PORT_MAC(meta.switch_id, port);
        hdr.ethernet.dst_addr = dst_mac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        standard_metadata.egress_spec = port;
        meta.unicast = 1;
        meta.routed = 1;
    }

    @name(".ipv4_lpm")
    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr: lpm @name("dst_addr"); }
        actions = { ipv4_forward; drop; NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    @name(".l2_forward")
    table l2_forward {
        key = { hdr.ethernet.dst_addr: exact @name("dst_addr"); }
        actions = { l2_to_port; flood; drop; }
        default_action = drop();
        size = 1024;
    }

    apply {
        bit<8> ttl_in = 0;
        bool bridged = true;
        if (hdr.ipv4.isValid()) {
            ttl_in = hdr.ipv4.ttl;
            if (ipv4_lpm.apply().hit) {
                bridged = false;
            }
        }
        if (bridged) {
            l2_forward.apply();
        } else if (meta.routed == 1) {
            if (standard_metadata.checksum_error == 1) {
                mark_to_drop(standard_metadata);
                meta.unicast = 0;
                ingress_discards.count(DISCARD_BAD_CHECKSUM);
            } else if (ttl_in <= 1) {
                mark_to_drop(standard_metadata);
                meta.unicast = 0;
                ingress_discards.count(DISCARD_TTL_EXPIRED);
            }
        }
    }
}

#endif
