/*
 * ECN marking (RFC 3168 codepoints, DCTCP-style step marking, RFC 8257 3.1):
 * an ECN-capable IPv4 or IPv6 frame (ECT(0) or ECT(1)) that found more than
 * K bytes queued ahead of it in its (port, queue) on arrival leaves with CE,
 * and is counted. Not-ECT frames are never touched here: the admission
 * thresholds alone decide whether they are dropped (p4src/README.md says why).
 * K is action data of ecn_threshold, written by the controller; no entry,
 * no marking. Runs in egress, so a BCN sample cloned in ingress keeps the
 * frame exactly as received.
 */
#ifndef BUFFERLAB_ECN_P4
#define BUFFERLAB_ECN_P4

#include "metadata.p4"

const bit<2> ECN_NOT_ECT = 0;
const bit<2> ECN_CE      = 3;

control EcnEgress(inout headers_t hdr,
                  inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    @name(".ecn_marked")
    counter(QUEUE_COUNT, CounterType.packets_and_bytes) ecn_marked;

    bit<1>  ecn_on = 0;
    bit<32> ecn_k_bytes = 0;

    /* k_bytes: mark when more than k_bytes were queued ahead on arrival. */
    @name(".ecn_mark_above")
    action ecn_mark_above(bit<32> k_bytes) {
        ecn_on = 1;
        ecn_k_bytes = k_bytes;
    }

    @name(".ecn_off")
    action ecn_off() {
        ecn_on = 0;
    }

    @name(".ecn_threshold")
    table ecn_threshold {
        key = {
            meta.out_port: exact @name("port");
            meta.queue: exact @name("queue");
        }
        actions = { ecn_mark_above; ecn_off; }
        default_action = ecn_off();
        size = QUEUE_COUNT;
    }

    apply {
        if (hdr.ipv4.isValid() || hdr.ipv6.isValid()) {
            ecn_threshold.apply();
            if (ecn_on == 1 && meta.queue_used > ecn_k_bytes) {
                if (hdr.ipv4.isValid()) {
                    bit<2> codepoint = hdr.ipv4.diffserv[1:0];
                    if (codepoint != ECN_NOT_ECT && codepoint != ECN_CE) {
                        hdr.ipv4.diffserv[1:0] = ECN_CE;
                        meta.ecn_marked = 1;
                    }
                } else {
                    bit<2> codepoint = hdr.ipv6.traffic_class[1:0];
                    if (codepoint != ECN_NOT_ECT && codepoint != ECN_CE) {
                        hdr.ipv6.traffic_class[1:0] = ECN_CE;
                        meta.ecn_marked = 1;
                    }
                }
                if (meta.ecn_marked == 1) {
                    ecn_marked.count(meta.queue_index);
                }
            }
        }
    }
}

#endif
