/*
 * buffer_switch for Tofino (TNA): the lab's switch ported from the v1model
 * program (../buffer_switch.p4). The same controller-facing tables, actions
 * and parameters where the hardware allows (switch_config, dscp_class,
 * ipv4_lpm, l2_forward, ecn_threshold, bcn_config; counters and bcn_last_fb
 * by the same names); what Tofino's traffic manager does itself - the shared
 * pool, dynamic thresholds and tail drop (buffer_threshold,
 * queue_threshold), PAUSE/PFC and headroom (pause_config) - the controller
 * sets as TM configuration from the same config keys. The BCN congestion
 * point runs in egress on the TM's queue depth, with one RegisterAction per
 * register per packet, and its feedback is an E2E mirror copy of the
 * sampled frame rewritten into a BCN frame. Table by table, what is P4 and
 * what is TM on each target: p4src/README.md. Compile and check it with
 *   bufferlab-p4c p4src/tna/buffer_switch.p4 -o build/tna/
 *   bufferlab-p4c --arch tna --fit-report p4src/tna/buffer_switch.p4
 */
#include <core.p4>
#include <tna.p4>

#include "include/headers.p4"
#include "include/parser.p4"
#include "include/ingress.p4"
#include "include/bcn.p4"
#include "include/ecn.p4"
#include "include/telemetry.p4"
#include "include/deparser.p4"

control SwitchEgress(inout switch_headers_t hdr,
                     inout eg_metadata_t eg_md,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    /* Frames sent per (port, queue), flooded copies included, BCN frames not. */
    @name(".queue_tx")
    Counter<bit<64>, queue_slot_t>(QUEUE_COUNT, CounterType_t.PACKETS_AND_BYTES) queue_tx;

    BcnCongestionPoint() bcn;
    BcnFrame() bcn_frame;
    EcnEgress() ecn;
    TelemetryEgress() telemetry;

    apply {
        if (!hdr.bridged.isValid()) {
            /* An E2E copy of a sampled frame (the parser found its mirror header). */
            bcn_frame.apply(hdr, eg_md.bcn.mirror);
        } else if (hdr.bridged.flooded == 1 && eg_intr_md.egress_port == hdr.bridged.ingress_port) {
            /* A flooded copy headed back out of the port it came in on. */
            eg_dprsr_md.drop_ctl = 1;
        } else {
            eg_md.slot = QUEUE_SLOT(eg_intr_md.egress_port, hdr.bridged.queue);
            eg_md.frame_bytes = (bit<32>)eg_intr_md.pkt_length;
            queue_tx.count(eg_md.slot);
            if (hdr.bridged.flooded == 0) {
                /* Q in pages: deq_qdepth cells * 80 / 64 = cells + cells / 4. */
                eg_md.bcn.q_part0 = (bit<32>)eg_intr_md.deq_qdepth;
                eg_md.bcn.q_part1 = (bit<32>)(eg_intr_md.deq_qdepth >> 2);
                eg_md.bcn.q_pages = eg_md.bcn.q_part0 + eg_md.bcn.q_part1;
                bcn.apply(eg_md.bcn, hdr.rlt, eg_intr_md.egress_port, hdr.bridged.queue,
                          eg_md.slot, eg_md.frame_bytes, hdr.bridged.switch_id,
                          hdr.bridged.port_session_base, hdr.bridged.ingress_port,
                          hdr.bridged.ingress_tstamp, eg_intr_md.pkt_length);
                if (eg_md.bcn.send == 1) {
                    eg_dprsr_md.mirror_type = MIRROR_TYPE_BCN;
                }
            }
            ecn.apply(hdr, eg_md, eg_intr_md);
            telemetry.apply(hdr, eg_md, eg_intr_md, eg_prsr_md);
        }
    }
}

Pipeline(SwitchIngressParser(),
         SwitchIngress(),
         SwitchIngressDeparser(),
         SwitchEgressParser(),
         SwitchEgress(),
         SwitchEgressDeparser()) pipe;

Switch(pipe) main;
