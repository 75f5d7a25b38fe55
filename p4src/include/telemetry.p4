/*
 * Probe telemetry: the 48-byte block behind a probe's data header is
 * overwritten in place at egress (frame length unchanged). Timestamps and
 * queue depths are v1model's (µs, packets); occupancies are this
 * program's byte counters as the frame saw them at ingress, before it
 * was added.
 */
#ifndef BUFFERLAB_TELEMETRY_P4
#define BUFFERLAB_TELEMETRY_P4

#include "metadata.p4"
#include "admission.p4"

const bit<8> TEL_FLAG_FILLED = 0x01;

control TelemetryEgress(inout headers_t hdr,
                        inout metadata_t meta,
                        inout standard_metadata_t standard_metadata) {
    @name(".probes_stamped")
    counter(PORT_COUNT, CounterType.packets) probes_stamped;

    apply {
        if (hdr.telemetry.isValid()) {
            hdr.telemetry.tel_flags = hdr.telemetry.tel_flags | TEL_FLAG_FILLED;
            hdr.telemetry.qid = (bit<8>)meta.queue;
            hdr.telemetry.ingress_port = (bit<16>)standard_metadata.ingress_port;
            hdr.telemetry.egress_port = (bit<16>)standard_metadata.egress_port;
            hdr.telemetry.switch_id = meta.switch_id;
            hdr.telemetry.ingress_global_ts = (bit<64>)standard_metadata.ingress_global_timestamp;
            hdr.telemetry.egress_global_ts = (bit<64>)standard_metadata.egress_global_timestamp;
            hdr.telemetry.enq_timestamp = standard_metadata.enq_timestamp;
            hdr.telemetry.deq_timedelta = standard_metadata.deq_timedelta;
            hdr.telemetry.enq_qdepth = (bit<32>)standard_metadata.enq_qdepth;
            hdr.telemetry.deq_qdepth = (bit<32>)standard_metadata.deq_qdepth;
            hdr.telemetry.pool_occupancy = meta.pool_used;
            hdr.telemetry.port_occupancy = meta.port_used;
            /* The payload changed: 0 means "no UDP checksum" over IPv4. */
            hdr.udp.checksum = 0;
            probes_stamped.count((bit<32>)standard_metadata.egress_port);
        }
    }
}

#endif
