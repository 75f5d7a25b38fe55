/*
 * Exercise pause: IEEE 802.3x PAUSE from the egress buffer's occupancy.
 *
 * This program is the lab's switch, p4src/buffer_switch.p4, with the
 * XOFF/XON decisions left to you: when to pause the source of a frame that
 * fills its egress port's buffer, and when to release the paused sources.
 * The controller's pause_config table, the PAUSE state registers and the
 * rewrite of clones into PAUSE frames are the lab's
 * (p4src/include/pause_config.p4, pause_frames.p4). README.md says what to
 * write and how to check it.
 */
#include <core.p4>
#include <v1model.p4>
#include "../../p4src/include/pause_config.p4"
#include "../../p4src/include/pause_frames.p4"

/* This file stands in for p4src/include/pause.p4. */
#define BUFFERLAB_PAUSE_P4

control PauseIngress(inout headers_t hdr,
                     inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    PauseConfig() config;

    apply {
        /* Fills meta.pause_enabled, pause_unit (PAUSE_UNIT_LINK for 802.3x),
         * pause_xoff_bytes, pause_xon_bytes, pause_quanta, pause_refresh_us. */
        config.apply(meta);
        /* TODO, XOFF: when pause is enabled and this frame takes its egress
         * port's occupancy (meta.port_used + meta.acct_bytes) to xoff_bytes or
         * more, pause the port it came from, unless that port is already
         * paused (register `paused`, index PAUSE_SLOT(ingress port, unit)) and
         * was paused less than refresh_us ago (`pause_sent_at`, µs, the
         * ingress timestamp). To pause: set paused and pause_sent_at, mark the
         * congested port's unit in `xoff_active` and `pause_refresh_at` (index
         * PAUSE_SLOT(meta.out_port, unit)), and ask for the frame:
         * meta.gen_kind = GEN_PAUSE, gen_cp_port = meta.out_port,
         * gen_pause_unit = the unit, gen_quanta = pause_quanta. The ingress
         * clones it back out of the source's port; egress writes the frame. */
    }
}

/* Runs on every accounted frame leaving its egress port. */
control PauseDequeue(inout headers_t hdr,
                     inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    apply {
        /* TODO, XON: if this port's unit holds an XOFF (xoff_active) and its
         * occupancy after this frame (meta.port_left) is below xon_bytes,
         * clear xoff_active and release every paused source: set
         * meta.gen_kind = GEN_XON, gen_quanta = 0, gen_cp_port = this port,
         * gen_pause_unit, and clone_preserving_field_list(CloneType.E2E,
         * meta.all_ports_session, GEN_FIELD_LIST); the copies reach every
         * port and the lab's egress keeps those that are paused. Optional:
         * while the XOFF holds, refresh the pause every refresh_us
         * (GEN_PAUSE_REFRESH, pause_refresh_at) so it never runs out. */
    }
}

/* The rest of the switch, as the lab has it. */
#include "../../p4src/buffer_switch.p4"
