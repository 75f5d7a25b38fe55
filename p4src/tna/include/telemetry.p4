/*
 * Probe telemetry on Tofino: the 48-byte block keeps its layout; its units
 * are Tofino's, and bit1 of tel_flags says so (set by this program, never
 * by the v1model one): timestamps in ns (ingress MAC timestamp, egress
 * global timestamp, enq_tstamp, deq_timedelta), queue depths in TM cells
 * (80 B on Tofino 1, 176 B on Tofino 2). The two occupancy words carry what
 * the TM tells egress instead of byte counters it does not have:
 * pool_occupancy = app_pool_congest_stat (2 bits per application pool),
 * port_occupancy = deq_congest_stat of the frame's queue.
 */
#ifndef BUFFERLAB_TNA_TELEMETRY_P4
#define BUFFERLAB_TNA_TELEMETRY_P4

#include "headers.p4"

const bit<8> TEL_FLAG_FILLED = 0x01;
const bit<8> TEL_FLAG_TOFINO_UNITS = 0x02;

control TelemetryEgress(inout switch_headers_t hdr,
                        inout eg_metadata_t eg_md,
                        in egress_intrinsic_metadata_t eg_intr_md,
                        in egress_intrinsic_metadata_from_parser_t eg_prsr_md) {
    @name(".probes_stamped")
    Counter<bit<64>, port_slot_t>(PORT_COUNT, CounterType_t.PACKETS) probes_stamped;

    apply {
        if (hdr.telemetry.isValid()) {
            hdr.telemetry.tel_flags = hdr.telemetry.tel_flags | (TEL_FLAG_FILLED | TEL_FLAG_TOFINO_UNITS);
            hdr.telemetry.qid = (bit<8>)hdr.bridged.queue;
            hdr.telemetry.ingress_port = (bit<16>)hdr.bridged.ingress_port;
            hdr.telemetry.egress_port = (bit<16>)eg_intr_md.egress_port;
            hdr.telemetry.switch_id = hdr.bridged.switch_id;
            hdr.telemetry.ingress_global_ts = (bit<64>)hdr.bridged.ingress_tstamp;
            hdr.telemetry.egress_global_ts = (bit<64>)eg_prsr_md.global_tstamp;
            hdr.telemetry.enq_timestamp = (bit<32>)eg_intr_md.enq_tstamp;
            hdr.telemetry.deq_timedelta = (bit<32>)eg_intr_md.deq_timedelta;
            hdr.telemetry.enq_qdepth = (bit<32>)eg_intr_md.enq_qdepth;
            hdr.telemetry.deq_qdepth = (bit<32>)eg_intr_md.deq_qdepth;
            hdr.telemetry.pool_occupancy = (bit<32>)eg_intr_md.app_pool_congest_stat;
            hdr.telemetry.port_occupancy = (bit<32>)eg_intr_md.deq_congest_stat;
            /* The payload changed: 0 means "no UDP checksum" over IPv4. */
            hdr.udp.checksum = 0;
            probes_stamped.count(eg_intr_md.egress_port);
        }
    }
}

#endif
