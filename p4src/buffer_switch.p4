/*
 * buffer_switch: bufferlab's v1model program. A shared egress buffer with
 * static or dynamic per-port thresholds and tail drop, DSCP classes on
 * priority queues, ECN (CE) marking above a per-queue K, BCN congestion
 * feedback, 802.3x PAUSE, and probe telemetry. Every tunable is action data written by the controller
 * (tables switch_config, l2_forward, ipv4_lpm, dscp_class,
 * buffer_threshold, queue_threshold, ecn_threshold, bcn_config,
 * pause_config); registers
 * hold state only. Design, units and frame layouts: p4src/README.md.
 */
#include <core.p4>
#include <v1model.p4>

#include "include/headers.p4"
#include "include/metadata.p4"
#include "include/discards.p4"
#include "include/parser.p4"
#include "include/switch_config.p4"
#include "include/forwarding.p4"
#include "include/classes.p4"
#include "include/admission.p4"
#include "include/ecn.p4"
#include "include/bcn.p4"
#include "include/pause.p4"
#include "include/telemetry.p4"
#include "include/deparser.p4"

control BufferIngress(inout headers_t hdr,
                      inout metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    @name(".parser_errors")
    counter(PORT_COUNT, CounterType.packets) parser_errors;
    /* Every frame received, so a controller can tell each host's sending rate. */
    @name(".port_rx")
    counter(PORT_COUNT, CounterType.packets_and_bytes) port_rx;

    SwitchConfig() config;
    Classes() classes;
    Forwarding() forwarding;
    AdmissionIngress() admission;
    BcnIngress() bcn;
    PauseIngress() pause;

    apply {
        meta.unicast = 0;
        meta.routed = 0;
        meta.ecn_marked = 0;
        meta.acct_bytes = 0;
        meta.gen_kind = GEN_NONE;
        port_rx.count((bit<32>)standard_metadata.ingress_port);
        if (standard_metadata.parser_error != error.NoError) {
            parser_errors.count((bit<32>)standard_metadata.ingress_port);
        }
        if (!hdr.ethernet.isValid()) {
            mark_to_drop(standard_metadata);
            ingress_discards.count(DISCARD_RUNT);
        } else if (hdr.ethernet.ether_type == ETHERTYPE_MAC_CONTROL) {
            mark_to_drop(standard_metadata);
            ingress_discards.count(DISCARD_MAC_CONTROL);
        } else {
            config.apply(meta);
            classes.apply(hdr, meta, standard_metadata);
            forwarding.apply(hdr, meta, standard_metadata);
            if (meta.unicast == 1) {
                /* Admission may overwrite egress_spec with the drop port. */
                meta.out_port = standard_metadata.egress_spec;
                admission.apply(hdr, meta, standard_metadata);
                bcn.apply(hdr, meta, standard_metadata);
                pause.apply(hdr, meta, standard_metadata);
                /* BCN and PAUSE both leave through the port the frame came in on. */
                if (meta.gen_kind != GEN_NONE) {
                    clone_preserving_field_list(CloneType.I2E,
                        meta.port_session_base + (bit<32>)standard_metadata.ingress_port,
                        GEN_FIELD_LIST);
                }
            }
        }
    }
}

control BufferEgress(inout headers_t hdr,
                     inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    AdmissionEgress() admission;
    PauseDequeue() pause_dequeue;
    PauseGenerate() pause_generate;
    BcnEgress() bcn;
    TelemetryEgress() telemetry;
    EcnEgress() ecn;
    /* Frames sent per (port, queue): each class's and each receiver's rate. */
    @name(".queue_tx")
    counter(QUEUE_COUNT, CounterType.packets_and_bytes) queue_tx;

    apply {
        if (standard_metadata.instance_type == INSTANCE_INGRESS_CLONE
                && meta.gen_kind == GEN_BCN) {
            bcn.apply(hdr, meta, standard_metadata);
        } else if (standard_metadata.instance_type == INSTANCE_INGRESS_CLONE
                || standard_metadata.instance_type == INSTANCE_EGRESS_CLONE) {
            pause_generate.apply(hdr, meta, standard_metadata);
        } else if (FLOOD_ECHO(standard_metadata)) {
            mark_to_drop(standard_metadata);
        } else {
            queue_tx.count(QUEUE_SLOT(standard_metadata.egress_port, meta.queue));
            admission.apply(hdr, meta, standard_metadata);
            ecn.apply(hdr, meta, standard_metadata);
            pause_dequeue.apply(hdr, meta, standard_metadata);
            telemetry.apply(hdr, meta, standard_metadata);
        }
    }
}

V1Switch(BufferParser(),
         BufferVerifyChecksum(),
         BufferIngress(),
         BufferEgress(),
         BufferComputeChecksum(),
         BufferDeparser()) main;
