/*
 * forward: plain L2 / IPv4 forwarding, the Mininet pingall demo. Same
 * parser, forwarding tables (l2_forward, ipv4_lpm, switch_config) and
 * deparser as buffer_switch, without buffer accounting or feedback, so
 * one controller configuration drives both programs.
 */
#include <core.p4>
#include <v1model.p4>

#include "include/headers.p4"
#include "include/metadata.p4"
#include "include/discards.p4"
#include "include/parser.p4"
#include "include/switch_config.p4"
#include "include/forwarding.p4"
#include "include/deparser.p4"

control ForwardIngress(inout headers_t hdr,
                       inout metadata_t meta,
                       inout standard_metadata_t standard_metadata) {
    SwitchConfig() config;
    Forwarding() forwarding;

    apply {
        meta.unicast = 0;
        meta.routed = 0;
        if (!hdr.ethernet.isValid()) {
            mark_to_drop(standard_metadata);
            ingress_discards.count(DISCARD_RUNT);
        } else if (hdr.ethernet.ether_type == ETHERTYPE_MAC_CONTROL) {
            mark_to_drop(standard_metadata);
            ingress_discards.count(DISCARD_MAC_CONTROL);
        } else {
            config.apply(meta);
            forwarding.apply(hdr, meta, standard_metadata);
        }
    }
}

control ForwardEgress(inout headers_t hdr,
                      inout metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    apply {
        if (FLOOD_ECHO(standard_metadata)) {
            mark_to_drop(standard_metadata);
        }
    }
}

V1Switch(BufferParser(),
         BufferVerifyChecksum(),
         ForwardIngress(),
         ForwardEgress(),
         BufferComputeChecksum(),
         BufferDeparser()) main;
