/*
 * Flow control driven by egress buffer occupancy: IEEE 802.3x PAUSE
 * (whole link, watches the egress port's occupancy) or 802.1Qbb PFC (per
 * priority, watches the egress queue's occupancy; PFC priority i is
 * queue i). A "unit" is what one PAUSE/PFC frame stops: unit 8 is the
 * link, units 0..7 the PFC priorities; all state is kept per (port, unit).
 *
 * XOFF (ingress): a frame from port p that takes the watched occupancy of
 * its egress port/queue e to xoff_bytes or above makes the switch send
 * PAUSE or PFC (quanta) out of p, unless p's unit was paused less than
 * refresh_us ago. Only the source whose frame crossed the threshold is
 * paused (seed 001).
 *
 * XON and refresh (egress): when a frame leaves e and e's occupancy is
 * below xon_bytes, every paused port except e gets quanta 0; while e stays
 * at or above xon_bytes, every refresh_us the paused ports get quanta
 * again, before their pause times out. Both fan out through an
 * egress-to-egress clone to the all-ports multicast group, pruned per
 * copy by the `paused` register.
 */
#ifndef BUFFERLAB_PAUSE_P4
#define BUFFERLAB_PAUSE_P4

#include "metadata.p4"
#include "admission.p4"

/* Every PAUSE/PFC frame is 60 bytes: 14 + opcode 2 + parameters + zeros. */
const bit<32> PAUSE_FRAME_BYTES = 60;
/* 512 ports x 16 units. */
#define PAUSE_SLOT_COUNT 8192

/* Units we sent XOFF to and have not released yet (index: p * 16 + unit). */
@name(".paused")
register<bit<1>>(PAUSE_SLOT_COUNT) paused;
/* When each unit was last sent a non-zero pause (µs). */
@name(".pause_sent_at")
register<bit<48>>(PAUSE_SLOT_COUNT) pause_sent_at;
/* Egress units (e * 16 + unit) whose occupancy triggered an XOFF not yet
 * answered by XON. */
@name(".xoff_active")
register<bit<1>>(PAUSE_SLOT_COUNT) xoff_active;
/* When the paused units were last refreshed on behalf of each egress unit (µs). */
@name(".pause_refresh_at")
register<bit<48>>(PAUSE_SLOT_COUNT) pause_refresh_at;

control PauseIngress(inout headers_t hdr,
                     inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    @name(".bcn_suppressed")
    counter(QUEUE_COUNT, CounterType.packets) bcn_suppressed;

    /* 802.3x on the egress port's occupancy: thresholds in bytes, quanta
     * in 512 bit times, refresh_us below the pause time quanta stand for. */
    @name(".pause_enable")
    action pause_enable(bit<32> xoff_bytes, bit<32> xon_bytes,
                        bit<16> quanta, bit<48> refresh_us) {
        meta.pause_enabled = 1;
        meta.pause_unit = PAUSE_UNIT_LINK;
        meta.pause_xoff_bytes = xoff_bytes;
        meta.pause_xon_bytes = xon_bytes;
        meta.pause_quanta = quanta;
        meta.pause_refresh_us = refresh_us;
    }

    /* 802.1Qbb on each egress queue's occupancy, same units. */
    @name(".pfc_enable")
    action pfc_enable(bit<32> xoff_bytes, bit<32> xon_bytes,
                      bit<16> quanta, bit<48> refresh_us) {
        meta.pause_enabled = 1;
        meta.pause_unit = (bit<4>)meta.queue;
        meta.pause_xoff_bytes = xoff_bytes;
        meta.pause_xon_bytes = xon_bytes;
        meta.pause_quanta = quanta;
        meta.pause_refresh_us = refresh_us;
    }

    @name(".pause_disable")
    action pause_disable() {
        meta.pause_enabled = 0;
    }

    @name(".pause_config")
    table pause_config {
        key = { meta.out_port: exact @name("port"); }
        actions = { pause_enable; pfc_enable; pause_disable; }
        default_action = pause_disable();
        size = PORT_COUNT;
    }

    apply {
        pause_config.apply();
        if (meta.pause_enabled == 1) {
            bit<32> watched = meta.queue_used;
            if (meta.pause_unit == PAUSE_UNIT_LINK) {
                watched = meta.port_used;
            }
            if (watched + meta.acct_bytes >= meta.pause_xoff_bytes) {
                bit<32> source = PAUSE_SLOT(standard_metadata.ingress_port, meta.pause_unit);
                bit<32> congested = PAUSE_SLOT(meta.out_port, meta.pause_unit);
                bit<48> now = standard_metadata.ingress_global_timestamp;
                bit<1> is_paused;
                bit<48> sent_at;
                paused.read(is_paused, source);
                pause_sent_at.read(sent_at, source);
                if (is_paused == 0 || now - sent_at >= meta.pause_refresh_us) {
                    paused.write(source, 1);
                    pause_sent_at.write(source, now);
                    xoff_active.write(congested, 1);
                    pause_refresh_at.write(congested, now);
                    /* One clone per frame: losslessness wins over feedback. */
                    if (meta.gen_kind == GEN_BCN) {
                        bcn_suppressed.count(meta.queue_index);
                    }
                    meta.gen_kind = GEN_PAUSE;
                    meta.gen_cp_port = meta.out_port;
                    meta.gen_pause_unit = meta.pause_unit;
                    meta.gen_quanta = meta.pause_quanta;
                }
            }
        }
    }
}

/* On each dequeue of an accounted frame from e: XON or refresh fan-out. */
control PauseDequeue(inout headers_t hdr,
                     inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    apply {
        if (meta.pause_enabled == 1) {
            bit<32> congested = PAUSE_SLOT(standard_metadata.egress_port, meta.pause_unit);
            bit<32> left = meta.queue_left;
            if (meta.pause_unit == PAUSE_UNIT_LINK) {
                left = meta.port_left;
            }
            bit<1> active;
            xoff_active.read(active, congested);
            if (active == 1) {
                bit<48> now = standard_metadata.egress_global_timestamp;
                meta.gen_cp_port = standard_metadata.egress_port;
                meta.gen_pause_unit = meta.pause_unit;
                if (left < meta.pause_xon_bytes) {
                    xoff_active.write(congested, 0);
                    meta.gen_kind = GEN_XON;
                    meta.gen_quanta = 0;
                    clone_preserving_field_list(CloneType.E2E, meta.all_ports_session,
                                                GEN_FIELD_LIST);
                } else {
                    bit<48> refreshed_at;
                    pause_refresh_at.read(refreshed_at, congested);
                    if (now - refreshed_at >= meta.pause_refresh_us) {
                        pause_refresh_at.write(congested, now);
                        meta.gen_kind = GEN_PAUSE_REFRESH;
                        meta.gen_quanta = meta.pause_quanta;
                        clone_preserving_field_list(CloneType.E2E, meta.all_ports_session,
                                                    GEN_FIELD_LIST);
                    }
                }
            }
        }
    }
}

/* Rewrites clones into PAUSE/PFC frames: the ingress clone of an XOFF,
 * and each all-ports copy of an XON or refresh (kept only where that unit
 * is paused and the port is not the congested port itself). */
control PauseGenerate(inout headers_t hdr,
                      inout metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    @name(".pause_frames")
    counter(PORT_COUNT, CounterType.packets) pause_frames;
    @name(".xon_frames")
    counter(PORT_COUNT, CounterType.packets) xon_frames;

    /* Ethernet header of a MAC Control frame; the clone's own headers go. */
    action mac_control_frame(bit<16> opcode) {
        hdr.gen_ethernet.setValid();
        hdr.gen_ethernet.dst_addr = MAC_CONTROL_DA;
        hdr.gen_ethernet.src_addr = PORT_MAC(meta.switch_id, standard_metadata.egress_port);
        hdr.gen_ethernet.ether_type = ETHERTYPE_MAC_CONTROL;
        hdr.mac_control.setValid();
        hdr.mac_control.opcode = opcode;
        hdr.ethernet.setInvalid();
        hdr.rlt.setInvalid();
        hdr.ipv4.setInvalid();
        hdr.udp.setInvalid();
        hdr.data.setInvalid();
        hdr.telemetry.setInvalid();
        truncate(PAUSE_FRAME_BYTES);
    }

    action pause_frame(bit<16> quanta) {
        mac_control_frame(MAC_CONTROL_OP_PAUSE);
        hdr.pause.setValid();
        hdr.pause.quanta = quanta;
        hdr.pause_pad.setValid();
        hdr.pause_pad.zero0 = 0;
        hdr.pause_pad.zero1 = 0;
        hdr.pause_pad.zero2 = 0;
    }

    /* Only the unit's priority is enabled; the other times stay 0. */
    action pfc_frame(bit<16> quanta) {
        mac_control_frame(MAC_CONTROL_OP_PFC);
        hdr.pfc.setValid();
        hdr.pfc.class_enable = 16w1 << meta.gen_pause_unit;
        hdr.pfc.time0 = (meta.gen_pause_unit == 0) ? quanta : 0;
        hdr.pfc.time1 = (meta.gen_pause_unit == 1) ? quanta : 0;
        hdr.pfc.time2 = (meta.gen_pause_unit == 2) ? quanta : 0;
        hdr.pfc.time3 = (meta.gen_pause_unit == 3) ? quanta : 0;
        hdr.pfc.time4 = (meta.gen_pause_unit == 4) ? quanta : 0;
        hdr.pfc.time5 = (meta.gen_pause_unit == 5) ? quanta : 0;
        hdr.pfc.time6 = (meta.gen_pause_unit == 6) ? quanta : 0;
        hdr.pfc.time7 = (meta.gen_pause_unit == 7) ? quanta : 0;
        hdr.pfc_pad.setValid();
        hdr.pfc_pad.zero0 = 0;
        hdr.pfc_pad.zero1 = 0;
    }

    apply {
        bit<32> port = (bit<32>)standard_metadata.egress_port;
        bit<32> slot = PAUSE_SLOT(standard_metadata.egress_port, meta.gen_pause_unit);
        bit<16> quanta = meta.gen_quanta;
        bool send = true;
        if (standard_metadata.instance_type == INSTANCE_EGRESS_CLONE) {
            bit<1> is_paused;
            paused.read(is_paused, slot);
            if (standard_metadata.egress_port == meta.gen_cp_port || is_paused == 0) {
                send = false;
            } else if (meta.gen_kind == GEN_XON) {
                paused.write(slot, 0);
            } else {
                pause_sent_at.write(slot, standard_metadata.egress_global_timestamp);
            }
        }
        if (!send) {
            mark_to_drop(standard_metadata);
        } else {
            if (meta.gen_pause_unit == PAUSE_UNIT_LINK) {
                pause_frame(quanta);
            } else {
                pfc_frame(quanta);
            }
            if (quanta == 0) {
                xon_frames.count(port);
            } else {
                pause_frames.count(port);
            }
        }
    }
}

#endif
