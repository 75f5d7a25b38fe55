/*
 * IEEE 802.3x PAUSE driven by the egress port's buffer occupancy.
 *
 * XOFF (ingress): a frame from port p that takes the occupancy of its
 * egress port e to xoff_bytes or above makes the switch send PAUSE
 * (quanta) out of p, unless p was paused less than refresh_us ago. Only
 * the source whose frame crossed the threshold is paused (seed 001).
 *
 * XON and refresh (egress): when a frame leaves e and e's occupancy is
 * below xon_bytes, every paused port except e gets PAUSE(0); while e
 * stays at or above xon_bytes, every refresh_us the paused ports get
 * PAUSE(quanta) again, before their pause times out. Both fan out through
 * an egress-to-egress clone to the all-ports multicast group, pruned per
 * copy by the paused_ports register.
 */
#ifndef BUFFERLAB_PAUSE_P4
#define BUFFERLAB_PAUSE_P4

#include "metadata.p4"
#include "admission.p4"

/* 14 + opcode 2 + quanta 2 + 42 reserved bytes. */
const bit<32> PAUSE_FRAME_BYTES = 60;

/* Ports we sent XOFF to and have not released yet. */
@name(".paused_ports")
register<bit<1>>(PORT_COUNT) paused_ports;
/* When each port was last sent PAUSE (ingress_global_timestamp, µs). */
@name(".pause_sent_at")
register<bit<48>>(PORT_COUNT) pause_sent_at;
/* Egress ports whose occupancy triggered an XOFF not yet answered by XON. */
@name(".xoff_active")
register<bit<1>>(PORT_COUNT) xoff_active;
/* When the paused ports were last refreshed on behalf of each egress port (µs). */
@name(".pause_refresh_at")
register<bit<48>>(PORT_COUNT) pause_refresh_at;

control PauseIngress(inout headers_t hdr,
                     inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    @name(".bcn_suppressed")
    counter(QUEUE_COUNT, CounterType.packets) bcn_suppressed;

    /* Thresholds on egress port occupancy (bytes); quanta in 512 bit
     * times; refresh_us below the pause time quanta represent. */
    @name(".pause_enable")
    action pause_enable(bit<32> xoff_bytes, bit<32> xon_bytes,
                        bit<16> quanta, bit<48> refresh_us) {
        meta.pause_enabled = 1;
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
        actions = { pause_enable; pause_disable; }
        default_action = pause_disable();
        size = PORT_COUNT;
    }

    apply {
        pause_config.apply();
        if (meta.pause_enabled == 1
                && meta.port_used + meta.acct_bytes >= meta.pause_xoff_bytes) {
            bit<32> p = (bit<32>)standard_metadata.ingress_port;
            bit<48> now = standard_metadata.ingress_global_timestamp;
            bit<1> paused;
            bit<48> sent_at;
            paused_ports.read(paused, p);
            pause_sent_at.read(sent_at, p);
            if (paused == 0 || now - sent_at >= meta.pause_refresh_us) {
                paused_ports.write(p, 1);
                pause_sent_at.write(p, now);
                xoff_active.write(meta.port_index, 1);
                pause_refresh_at.write(meta.port_index, now);
                /* One clone per frame: losslessness wins over feedback. */
                if (meta.gen_kind == GEN_BCN) {
                    bcn_suppressed.count(meta.queue_index);
                }
                meta.gen_kind = GEN_PAUSE;
                meta.gen_cp_port = meta.out_port;
                meta.gen_quanta = meta.pause_quanta;
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
            bit<1> active;
            xoff_active.read(active, meta.port_index);
            if (active == 1) {
                bit<48> now = standard_metadata.egress_global_timestamp;
                if (meta.port_left < meta.pause_xon_bytes) {
                    xoff_active.write(meta.port_index, 0);
                    meta.gen_kind = GEN_XON;
                    meta.gen_cp_port = standard_metadata.egress_port;
                    meta.gen_quanta = 0;
                    clone_preserving_field_list(CloneType.E2E, meta.all_ports_session,
                                                GEN_FIELD_LIST);
                } else {
                    bit<48> refreshed_at;
                    pause_refresh_at.read(refreshed_at, meta.port_index);
                    if (now - refreshed_at >= meta.pause_refresh_us) {
                        pause_refresh_at.write(meta.port_index, now);
                        meta.gen_kind = GEN_PAUSE_REFRESH;
                        meta.gen_cp_port = standard_metadata.egress_port;
                        meta.gen_quanta = meta.pause_quanta;
                        clone_preserving_field_list(CloneType.E2E, meta.all_ports_session,
                                                    GEN_FIELD_LIST);
                    }
                }
            }
        }
    }
}

/* Rewrites clones into PAUSE/XON frames: the ingress clone of an XOFF,
 * and each all-ports copy of an XON or refresh (kept only for ports that
 * are paused and are not the congested port itself). */
control PauseGenerate(inout headers_t hdr,
                      inout metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    @name(".pause_frames")
    counter(PORT_COUNT, CounterType.packets) pause_frames;
    @name(".xon_frames")
    counter(PORT_COUNT, CounterType.packets) xon_frames;

    action build_pause(bit<16> quanta) {
        hdr.gen_ethernet.setValid();
        hdr.gen_ethernet.dst_addr = MAC_CONTROL_DA;
        hdr.gen_ethernet.src_addr = port_mac(meta.switch_id, standard_metadata.egress_port);
        hdr.gen_ethernet.ether_type = ETHERTYPE_MAC_CONTROL;
        hdr.mac_control.setValid();
        hdr.mac_control.opcode = MAC_CONTROL_OP_PAUSE;
        hdr.pause.setValid();
        hdr.pause.quanta = quanta;
        hdr.pause_pad.setValid();
        hdr.pause_pad.zero = 0;
        hdr.ethernet.setInvalid();
        hdr.rlt.setInvalid();
        hdr.ipv4.setInvalid();
        hdr.udp.setInvalid();
        hdr.data.setInvalid();
        hdr.telemetry.setInvalid();
        truncate(PAUSE_FRAME_BYTES);
    }

    apply {
        bit<32> port = (bit<32>)standard_metadata.egress_port;
        if (standard_metadata.instance_type == INSTANCE_INGRESS_CLONE) {
            build_pause(meta.gen_quanta);
            pause_frames.count(port);
        } else if (standard_metadata.egress_port == meta.gen_cp_port) {
            mark_to_drop(standard_metadata);
        } else {
            bit<1> paused;
            paused_ports.read(paused, port);
            if (paused == 0) {
                mark_to_drop(standard_metadata);
            } else if (meta.gen_kind == GEN_XON) {
                paused_ports.write(port, 0);
                build_pause(0);
                xon_frames.count(port);
            } else {
                pause_sent_at.write(port, standard_metadata.egress_global_timestamp);
                build_pause(meta.gen_quanta);
                pause_frames.count(port);
            }
        }
    }
}

#endif
