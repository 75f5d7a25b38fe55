/*
 * Egress: a BCN copy becomes a BCN frame; a flooded copy back out of its
 * ingress port is dropped; any other frame is counted per (port, queue),
 * marked (ECN) and stamped (telemetry), and on TNA its departure is the BCN
 * congestion point's input (E2E mirror of a sample). In the T2NA variant the
 * congestion point runs in ingress on arrivals instead (ingress.p4).
 */
#ifndef BUFFERLAB_TNA_EGRESS_P4
#define BUFFERLAB_TNA_EGRESS_P4

#include "headers.p4"
#include "bcn.p4"
#include "ecn.p4"
#include "telemetry.p4"

control SwitchEgress(inout switch_headers_t hdr,
                     inout eg_metadata_t eg_md,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    /* Frames sent per (port, queue), flooded copies included, BCN frames not. */
    @name(".queue_tx")
    Counter<bit<64>, queue_slot_t>(QUEUE_COUNT, CounterType_t.PACKETS_AND_BYTES) queue_tx;

    BcnFrame() bcn_frame;
    EcnEgress() ecn;
    TelemetryEgress() telemetry;
#ifndef BUFFER_SWITCH_T2NA
    CellsToPages() pages;
    BcnCongestionPoint() bcn;
#endif

    apply {
        if (!hdr.bridged.isValid()) {
            /* A mirror copy of a sampled frame (the parser found its mirror header). */
            bcn_frame.apply(hdr, eg_md.bcn.mirror);
        } else if (hdr.bridged.flooded == 1 && eg_intr_md.egress_port == hdr.bridged.ingress_port) {
            /* A flooded copy headed back out of the port it came in on. */
            eg_dprsr_md.drop_ctl = 1;
        } else {
            eg_md.slot = QUEUE_SLOT(eg_intr_md.egress_port, hdr.bridged.queue);
            eg_md.frame_bytes = (bit<32>)eg_intr_md.pkt_length;
            queue_tx.count(eg_md.slot);
#ifndef BUFFER_SWITCH_T2NA
            if (hdr.bridged.flooded == 0) {
                /* Q: the queue this frame leaves behind. */
                eg_md.bcn.q_cells = (bit<32>)eg_intr_md.deq_qdepth;
                pages.apply(eg_md.bcn);
                bcn.apply(eg_md.bcn, hdr.rlt, eg_intr_md.egress_port, hdr.bridged.queue,
                          eg_md.slot, eg_md.frame_bytes, hdr.bridged.switch_id,
                          hdr.bridged.port_session_base, hdr.bridged.ingress_port,
                          hdr.bridged.ingress_tstamp, eg_intr_md.pkt_length);
                if (eg_md.bcn.send == 1) {
                    eg_dprsr_md.mirror_type = MIRROR_TYPE_BCN;
                }
            }
#endif
            ecn.apply(hdr, eg_md, eg_intr_md);
            telemetry.apply(hdr, eg_md, eg_intr_md, eg_prsr_md);
        }
    }
}

#endif
