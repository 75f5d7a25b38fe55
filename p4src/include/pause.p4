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
#include "pause_config.p4"
#include "pause_frames.p4"

control PauseIngress(inout headers_t hdr,
                     inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    @name(".bcn_suppressed")
    counter(QUEUE_COUNT, CounterType.packets) bcn_suppressed;

    PauseConfig() config;

    apply {
        config.apply(meta);
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

#endif
