/*
 * Shared egress buffer admission. Byte occupancy of the pool, of each
 * egress port and of each (port, queue) lives in registers: ingress adds
 * a frame's bytes when it admits the frame, egress removes them when the
 * frame leaves the queue. A port may hold either a static share of the
 * pool (percent of pool_bytes) or a dynamic threshold
 * alpha * (pool_bytes - pool used), alpha = alpha_num / 2^alpha_shift.
 * The decision itself is AdmissionRule (admission_rule.p4); this file keeps
 * the state, the controller's tables, tail drop and its counters.
 */
#ifndef BUFFERLAB_ADMISSION_P4
#define BUFFERLAB_ADMISSION_P4

#include "metadata.p4"
#include "admission_rule.p4"

#define PORT_COUNT  512
#define QUEUE_COUNT 4096

@name(".pool_occupancy")
register<bit<32>>(1) pool_occupancy;
@name(".port_occupancy")
register<bit<32>>(PORT_COUNT) port_occupancy;
@name(".queue_occupancy")
register<bit<32>>(QUEUE_COUNT) queue_occupancy;

control AdmissionIngress(inout headers_t hdr,
                         inout metadata_t meta,
                         inout standard_metadata_t standard_metadata) {
    @name(".port_drops")
    counter(PORT_COUNT, CounterType.packets_and_bytes) port_drops;
    @name(".queue_drops")
    counter(QUEUE_COUNT, CounterType.packets_and_bytes) queue_drops;

    bit<1>  thr_dynamic = 0;
    bit<8>  thr_percent = 100;
    bit<16> thr_alpha_num = 0;
    bit<8>  thr_alpha_shift = 0;
    bit<32> thr_queue_cap = 0xFFFFFFFF;

    AdmissionRule() rule;

    /* percent: 1..100 % of pool_bytes (seed 000's "buffer (%)"). */
    @name(".static_threshold")
    action static_threshold(bit<8> percent) {
        thr_dynamic = 0;
        thr_percent = percent;
    }

    /* Choudhury-Hahne dynamic threshold, alpha = alpha_num / 2^alpha_shift. */
    @name(".dynamic_threshold")
    action dynamic_threshold(bit<16> alpha_num, bit<8> alpha_shift) {
        thr_dynamic = 1;
        thr_alpha_num = alpha_num;
        thr_alpha_shift = alpha_shift;
    }

    @name(".buffer_threshold")
    table buffer_threshold {
        key = { meta.out_port: exact @name("port"); }
        actions = { static_threshold; dynamic_threshold; }
        default_action = static_threshold(100);
        size = PORT_COUNT;
    }

    @name(".queue_cap")
    action queue_cap(bit<32> cap_bytes) {
        thr_queue_cap = cap_bytes;
    }

    @name(".queue_threshold")
    table queue_threshold {
        key = {
            meta.out_port: exact @name("port");
            meta.queue: exact @name("queue");
        }
        actions = { queue_cap; }
        default_action = queue_cap(0xFFFFFFFF);
        size = QUEUE_COUNT;
    }

    action occupancy_read() {
        pool_occupancy.read(meta.pool_used, 0);
        port_occupancy.read(meta.port_used, meta.port_index);
        queue_occupancy.read(meta.queue_used, meta.queue_index);
    }

    /* One action per update: BMv2 locks every register an action touches,
     * so each read-add-write is atomic against the egress thread. */
    action occupancy_add() {
        bit<32> v;
        pool_occupancy.read(v, 0);
        pool_occupancy.write(0, v + meta.acct_bytes);
        port_occupancy.read(v, meta.port_index);
        port_occupancy.write(meta.port_index, v + meta.acct_bytes);
        queue_occupancy.read(v, meta.queue_index);
        queue_occupancy.write(meta.queue_index, v + meta.acct_bytes);
    }

    apply {
        meta.port_index = (bit<32>)meta.out_port;
        meta.queue_index = QUEUE_SLOT(meta.out_port, meta.queue);
        buffer_threshold.apply();
        queue_threshold.apply();
        occupancy_read();

        bool admit;
        rule.apply(standard_metadata.packet_length, meta.pool_bytes, meta.pool_used,
                   meta.port_used, meta.queue_used, thr_dynamic, thr_percent,
                   thr_alpha_num, thr_alpha_shift, thr_queue_cap, admit);
        if (!admit) {
            mark_to_drop(standard_metadata);
            port_drops.count(meta.port_index);
            queue_drops.count(meta.queue_index);
        } else {
            meta.acct_bytes = standard_metadata.packet_length;
            occupancy_add();
        }
    }
}

control AdmissionEgress(inout headers_t hdr,
                        inout metadata_t meta,
                        inout standard_metadata_t standard_metadata) {
    /* Saturating, so a register the controller reset mid-run cannot wrap. */
    action occupancy_remove() {
        bit<32> v;
        pool_occupancy.read(v, 0);
        pool_occupancy.write(0, v |-| meta.acct_bytes);
        port_occupancy.read(v, meta.port_index);
        meta.port_left = v |-| meta.acct_bytes;
        port_occupancy.write(meta.port_index, meta.port_left);
        queue_occupancy.read(v, meta.queue_index);
        meta.queue_left = v |-| meta.acct_bytes;
        queue_occupancy.write(meta.queue_index, meta.queue_left);
    }

    apply {
        if (meta.acct_bytes != 0) {
            occupancy_remove();
        }
    }
}

#endif
