/*
 * Ingress: switch parameters, DSCP class, forwarding, discards, and the
 * bridged header that carries what egress needs across the TM. Tables,
 * actions and parameters carry the v1model program's names (switch_config,
 * dscp_class, ipv4_lpm, l2_forward), so one controller configuration drives
 * both. Buffer admission, thresholds and PAUSE/PFC are the TM's on Tofino:
 * no P4 here (p4src/README.md, "Tables on each target").
 */
#ifndef BUFFERLAB_TNA_INGRESS_P4
#define BUFFERLAB_TNA_INGRESS_P4

#include "headers.p4"
#ifdef BUFFER_SWITCH_T2NA
#include "ghost.p4"
#include "bcn.p4"
#endif

/* Why ingress discarded a frame (the v1model program's reasons). */
const bit<3> DISCARD_RUNT         = 0;
const bit<3> DISCARD_MAC_CONTROL  = 1;
const bit<3> DISCARD_BAD_CHECKSUM = 2;
const bit<3> DISCARD_TTL_EXPIRED  = 3;
const bit<3> DISCARD_FORWARDING   = 4;

control SwitchConfig(inout ig_metadata_t ig_md) {
    /* pool_bytes and all_ports_session are kept for the v1model program's
     * controller configuration; on Tofino the pool is the TM's application
     * pool and PAUSE is the TM's, so only switch_id and the mirror session
     * base (session of port p = port_session_base + p) are used. */
    @name(".set_switch")
    action set_switch(bit<16> switch_id, bit<32> pool_bytes,
                      bit<32> port_session_base, bit<32> all_ports_session) {
        ig_md.switch_id = switch_id;
        ig_md.port_session_base = port_session_base[15:0];
    }

    @name(".switch_config")
    table switch_config {
        actions = { set_switch; }
        default_action = set_switch(0, 1048576, 1, 511);
    }

    apply {
        switch_config.apply();
    }
}

/* DSCP -> egress queue; the queue is also the iCoS (PFC priority group). */
control Classes(in switch_headers_t hdr, inout ig_metadata_t ig_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    @name(".set_queue")
    action set_queue(queue_t queue) {
        ig_tm_md.qid = (QueueId_t)queue;
        ig_tm_md.ingress_cos = queue;
        ig_md.queue = queue;
    }

    @name(".dscp_class")
    table dscp_class {
        key = { ig_md.dscp: exact @name("dscp"); }
        actions = { set_queue; }
        default_action = set_queue(0);
        size = 64;
    }

    apply {
        dscp_class.apply();
    }
}

control Forwarding(inout switch_headers_t hdr, inout ig_metadata_t ig_md,
                   inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    @name(".drop")
    action drop() {
        ig_md.unicast = 0;
        ig_md.discard = 1;
        ig_md.discard_reason = DISCARD_FORWARDING;
    }

    @name(".l2_to_port")
    action l2_to_port(port_t port) {
        ig_tm_md.ucast_egress_port = port;
        ig_md.unicast = 1;
    }

    @name(".flood")
    action flood(bit<16> group) {
        ig_tm_md.mcast_grp_a = group;
        ig_md.unicast = 0;
        hdr.bridged.flooded = 1;
    }

    /* A router rewrites the source MAC to its own port's MAC. */
    @name(".ipv4_forward")
    action ipv4_forward(mac_addr_t dst_mac, port_t port) {
        hdr.ethernet.src_addr = PORT_MAC(ig_md.switch_id, port);
        hdr.ethernet.dst_addr = dst_mac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        ig_tm_md.ucast_egress_port = port;
        ig_md.unicast = 1;
        ig_md.routed = 1;
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
        bool bridged = true;
        if (hdr.ipv4.isValid()) {
            if (ipv4_lpm.apply().hit) {
                bridged = false;
            }
        }
        if (bridged) {
            l2_forward.apply();
        } else if (ig_md.routed == 1) {
            if (!ig_md.checksum_ok) {
                ig_md.discard = 1;
                ig_md.discard_reason = DISCARD_BAD_CHECKSUM;
            } else if (ig_md.ttl_in <= 1) {
                ig_md.discard = 1;
                ig_md.discard_reason = DISCARD_TTL_EXPIRED;
            }
        }
    }
}

control SwitchIngress(inout switch_headers_t hdr,
                      inout ig_metadata_t ig_md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    /* Every frame received, so a controller can tell each host's sending rate. */
    @name(".port_rx")
    Counter<bit<64>, port_slot_t>(PORT_COUNT, CounterType_t.PACKETS_AND_BYTES) port_rx;
    @name(".parser_errors")
    Counter<bit<64>, port_slot_t>(PORT_COUNT, CounterType_t.PACKETS) parser_errors;
    /* Counted at one place per frame (a Tofino counter is updated once per
     * packet), by reason: runt, MAC Control, bad checksum, TTL, forwarding. */
    @name(".ingress_discards")
    Counter<bit<64>, bit<3>>(8, CounterType_t.PACKETS_AND_BYTES) ingress_discards;

    SwitchConfig() config;
    Classes() classes;
    Forwarding() forwarding;
#ifdef BUFFER_SWITCH_T2NA
    QueueDepth() depth;
    CellsToPages() pages;
    BcnCongestionPoint() bcn;
#endif

    apply {
        ig_md.unicast = 0;
        ig_md.routed = 0;
        ig_md.discard = 0;
        ig_md.discard_reason = 0;
        ig_md.queue = 0;
        hdr.bridged.setValid();
        hdr.bridged.pkt_kind = PKT_BRIDGED;
        hdr.bridged.flooded = 0;
        port_rx.count(ig_intr_md.ingress_port);
        if (ig_prsr_md.parser_err != 0) {
            parser_errors.count(ig_intr_md.ingress_port);
        }
        if (!hdr.ethernet.isValid()) {
            ig_md.discard = 1;
            ig_md.discard_reason = DISCARD_RUNT;
        } else if (hdr.ethernet.ether_type == ETHERTYPE_MAC_CONTROL) {
            /* The MAC acts on PAUSE/PFC itself; one that reaches P4 is dropped. */
            ig_md.discard = 1;
            ig_md.discard_reason = DISCARD_MAC_CONTROL;
        } else {
            if (hdr.ipv4.isValid()) {
                ig_md.dscp = hdr.ipv4.diffserv[7:2];
                ig_md.ttl_in = hdr.ipv4.ttl;
            } else {
                ig_md.dscp = 0;
                ig_md.ttl_in = 0;
            }
            config.apply(ig_md);
            classes.apply(hdr, ig_md, ig_tm_md);
            forwarding.apply(hdr, ig_md, ig_tm_md);
        }
        if (ig_md.discard == 1) {
            ig_dprsr_md.drop_ctl = 1;
            ingress_discards.count(ig_md.discard_reason);
        }
#ifdef BUFFER_SWITCH_T2NA
        else if (ig_md.unicast == 1) {
            /* The congestion point on arrivals, as in the v1model program: every
             * unicast arrival counts, Q is the queue it joins (the ghost thread's
             * length). Ingress has no packet length on Tofino: an IPv4 or IPv6
             * frame counts its IP length and Ethernet header (and RLT), anything
             * else a minimum frame. */
            ig_md.slot = QUEUE_SLOT(ig_tm_md.ucast_egress_port, ig_md.queue);
            if (hdr.ipv4.isValid()) {
                ig_md.frame_bytes = (bit<32>)hdr.ipv4.total_len + 14;
            } else if (hdr.ipv6.isValid()) {
                ig_md.frame_bytes = (bit<32>)hdr.ipv6.payload_len + 54;
            } else {
                ig_md.frame_bytes = 60;
            }
            if (hdr.rlt.isValid()) {
                ig_md.frame_bytes = ig_md.frame_bytes + 10;
            }
            depth.apply(ig_md, ig_tm_md.ucast_egress_port);
            pages.apply(ig_md.bcn);
            bcn.apply(ig_md.bcn, hdr.rlt, ig_tm_md.ucast_egress_port, ig_md.queue, ig_md.slot,
                      ig_md.frame_bytes, ig_md.switch_id, ig_md.port_session_base,
                      ig_intr_md.ingress_port, ig_intr_md.ingress_mac_tstamp,
                      ig_md.frame_bytes[15:0]);
            if (ig_md.bcn.send == 1) {
                ig_dprsr_md.mirror_type = MIRROR_TYPE_BCN;
            }
        }
#endif
        hdr.bridged.switch_id = ig_md.switch_id;
        hdr.bridged.ingress_port = ig_intr_md.ingress_port;
        hdr.bridged.port_session_base = ig_md.port_session_base;
        hdr.bridged.ingress_tstamp = ig_intr_md.ingress_mac_tstamp;
        hdr.bridged.queue = ig_md.queue;
    }
}

#endif
