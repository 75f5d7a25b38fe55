/*
 * Flow-control parameters of each egress port's buffer, set by the
 * controller: the pause_config table fills the meta.pause_* fields that
 * XOFF (ingress) and XON/refresh (egress) decide on (pause.p4).
 */
#ifndef BUFFERLAB_PAUSE_CONFIG_P4
#define BUFFERLAB_PAUSE_CONFIG_P4

#include "metadata.p4"
#include "admission.p4"

control PauseConfig(inout metadata_t meta) {
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
    }
}

#endif
