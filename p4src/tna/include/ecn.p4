/*
 * ECN marking on Tofino (egress): an ECT(0)/ECT(1) IPv4 or IPv6 frame that
 * found more than K bytes queued ahead of it in its (port, queue) when it was
 * enqueued leaves with CE, as in the v1model program; the queue is the TM's
 * enq_qdepth in cells turned into bytes with shifts and adds (80-byte cells:
 * cells * 16 + cells * 64; 176-byte cells on Tofino 2: cells * 128 +
 * cells * 32 + cells * 16), so K stays bytes and one controller
 * configuration drives both programs. Cells round each frame up to whole
 * cells, so a queue reads up to a cell less one byte per frame more than
 * v1model's byte counters.
 */
#ifndef BUFFERLAB_TNA_ECN_P4
#define BUFFERLAB_TNA_ECN_P4

#include "headers.p4"

const bit<2> ECN_NOT_ECT = 0;
const bit<2> ECN_CE      = 3;

control EcnEgress(inout switch_headers_t hdr,
                  inout eg_metadata_t eg_md,
                  in egress_intrinsic_metadata_t eg_intr_md) {
    @name(".ecn_marked")
    Counter<bit<64>, queue_slot_t>(QUEUE_COUNT, CounterType_t.PACKETS_AND_BYTES) ecn_marked;

    /* k_bytes: mark when more than k_bytes were queued ahead on arrival. */
    @name(".ecn_mark_above")
    action ecn_mark_above(bit<32> k_bytes) {
        eg_md.ecn_on = 1;
        eg_md.ecn_k_bytes = k_bytes;
    }

    @name(".ecn_off")
    action ecn_off() {
        eg_md.ecn_on = 0;
    }

    @name(".ecn_threshold")
    table ecn_threshold {
        key = {
            eg_intr_md.egress_port: exact @name("port");
            hdr.bridged.queue: exact @name("queue");
        }
        actions = { ecn_mark_above; ecn_off; }
        default_action = ecn_off();
        size = QUEUE_COUNT;
    }

    action mark_ipv4() {
        hdr.ipv4.diffserv[1:0] = ECN_CE;
        eg_md.ecn_marked = 1;
    }

    action mark_ipv6() {
        hdr.ipv6.traffic_class[1:0] = ECN_CE;
        eg_md.ecn_marked = 1;
    }

    apply {
        eg_md.ecn_marked = 0;
#if CELL_BYTES == 176
        eg_md.q_part0 = (bit<32>)eg_intr_md.enq_qdepth << 7;
        eg_md.q_part1 = (bit<32>)eg_intr_md.enq_qdepth << 5;
        eg_md.q_part2 = (bit<32>)eg_intr_md.enq_qdepth << 4;
        eg_md.q_sum = eg_md.q_part0 + eg_md.q_part1;
#else
        eg_md.q_part0 = (bit<32>)eg_intr_md.enq_qdepth << 6;
        eg_md.q_part2 = (bit<32>)eg_intr_md.enq_qdepth << 4;
        eg_md.q_sum = eg_md.q_part0;
#endif
        if (hdr.ipv4.isValid() || hdr.ipv6.isValid()) {
            ecn_threshold.apply();
            if (eg_md.ecn_on == 1) {
                eg_md.q_bytes = eg_md.q_sum + eg_md.q_part2;
                /* Bytes above K (0 when at or below it). */
                eg_md.over_k = eg_md.q_bytes |-| eg_md.ecn_k_bytes;
                if (eg_md.over_k != 0) {
                    if (hdr.ipv4.isValid()) {
                        if (hdr.ipv4.diffserv[1:0] != ECN_NOT_ECT && hdr.ipv4.diffserv[1:0] != ECN_CE) {
                            mark_ipv4();
                        }
                    } else if (hdr.ipv6.traffic_class[1:0] != ECN_NOT_ECT
                               && hdr.ipv6.traffic_class[1:0] != ECN_CE) {
                        mark_ipv6();
                    }
                    if (eg_md.ecn_marked == 1) {
                        ecn_marked.count(eg_md.slot);
                    }
                }
            }
        }
    }
}

#endif
