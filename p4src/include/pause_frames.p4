/*
 * PAUSE/PFC state per (port, unit) and the egress rewrite of clones into
 * 802.3x PAUSE or 802.1Qbb PFC frames (formats: p4src/README.md). Which
 * clones are asked for, and when, is pause.p4's decision.
 */
#ifndef BUFFERLAB_PAUSE_FRAMES_P4
#define BUFFERLAB_PAUSE_FRAMES_P4

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
