/*
 * BCN congestion point, one per (egress port, queue). Arrivals count down
 * a byte budget of S +- J (uniform jitter); when it runs out the frame is
 * sampled: Qoff = Q - Qeq, Qdelta = Q - Qold, Fb = -(Qoff + W * Qdelta),
 * all in 64-byte pages; bcn_feedback may saturate Fb's Qoff term and
 * quantise Fb. Negative feedback
 * (or Q >= Qsc, "severe") always produces a BCN frame; positive feedback
 * only when the sampled frame carries an RLT naming this congestion point,
 * or for any sampled frame if bcn_feedback says so. The frame itself is made
 * in egress from an ingress-to-egress clone sent back out of the port the
 * sampled frame arrived on.
 */
#ifndef BUFFERLAB_BCN_P4
#define BUFFERLAB_BCN_P4

#include "metadata.p4"
#include "admission.p4"
#include "bcn_config.p4"

/* 64-byte pages: Q_pages = Q_bytes >> 6. */
#define BCN_PAGE_SHIFT 6
/* Ethernet (14) + BCN header (24) in front of the sample. */
const bit<32> BCN_HEADER_BYTES = 38;
/* A BCN frame is at most 128 bytes, so at most 90 sampled bytes. */
const bit<32> BCN_MAX_SAMPLE = 90;

@name(".bcn_countdown")
register<bit<32>>(QUEUE_COUNT) bcn_countdown;
@name(".bcn_qold")
register<bit<32>>(QUEUE_COUNT) bcn_qold;

control BcnIngress(inout headers_t hdr,
                   inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    BcnConfig() config;
    BcnFeedback() feedback;

    /* Count the arrival against the byte budget; reload the budget with a
     * fresh random S +- J when it runs out (that arrival is the sample). */
    action bcn_count_arrival() {
        bit<32> left;
        bit<32> jitter;
        bcn_countdown.read(left, meta.queue_index);
        random(jitter, 32w0, meta.bcn_jitter_bytes << 1);
        meta.bcn_sampled = (left <= standard_metadata.packet_length) ? 1w1 : 1w0;
        bcn_countdown.write(meta.queue_index,
            (left <= standard_metadata.packet_length)
                ? meta.bcn_sample_bytes - meta.bcn_jitter_bytes + jitter
                : left - standard_metadata.packet_length);
    }

    action bcn_swap_qold() {
        bcn_qold.read(meta.bcn_qold_pages, meta.queue_index);
        bcn_qold.write(meta.queue_index, meta.bcn_q_pages);
    }

    apply {
        meta.bcn_sampled = 0;
        config.apply(meta);
        if (meta.bcn_enabled == 1) {
            bcn_count_arrival();
        }
        if (meta.bcn_enabled == 1 && meta.bcn_sampled == 1) {
            /* Q after this arrival (acct_bytes is 0 if it was dropped). */
            meta.bcn_q_pages = (meta.queue_used + meta.acct_bytes) >> BCN_PAGE_SHIFT;
            bcn_swap_qold();

            int<64> q = (int<64>)(bit<64>)meta.bcn_q_pages;
            int<64> qoff = q - (int<64>)(bit<64>)meta.bcn_qeq_pages;
            int<64> qdelta = q - (int<64>)(bit<64>)meta.bcn_qold_pages;
            feedback.apply(meta);
            /* Fb's offset term, saturated at +-qoff_max_pages if set (the
             * frame still carries Qoff as measured). */
            int<64> qoff_term = qoff;
            if (meta.bcn_qoff_max_pages != 0) {
                int<64> cap = (int<64>)(bit<64>)meta.bcn_qoff_max_pages;
                if (qoff_term > cap) {
                    qoff_term = cap;
                } else if (qoff_term < -cap) {
                    qoff_term = -cap;
                }
            }
            int<64> fb = -(qoff_term + (int<64>)(bit<64>)meta.bcn_w * qdelta);
            bit<64> cpid = (bit<32>)meta.switch_id
                           ++ (bit<16>)meta.out_port
                           ++ (bit<16>)meta.queue;
            bool severe = meta.bcn_qsc_pages != 0
                          && meta.bcn_q_pages >= meta.bcn_qsc_pages;

            if (meta.bcn_fb_range_pages != 0) {
                bit<64> range = (bit<64>)meta.bcn_fb_range_pages;
                bit<64> magnitude = (fb < 0) ? (bit<64>)(-fb) : (bit<64>)fb;
                if (magnitude > range) {
                    magnitude = range;
                }
                bit<64> code = (magnitude * meta.bcn_fb_code_mul) >> 32;
                bit<64> quantised = (code * meta.bcn_fb_step_mul) >> 32;
                if (fb < 0) {
                    fb = -(int<64>)quantised;
                } else {
                    fb = (int<64>)quantised;
                }
            }
            bool tagged = hdr.rlt.isValid() && hdr.rlt.cpid == cpid;

            bool send = false;
            bit<4> flags = 0;
            if (severe || fb < 0) {
                send = true;
                if (severe) {
                    flags = BCN_FLAG_SEVERE;
                }
            } else if (fb > 0 && (tagged || meta.bcn_positive_any == 1)) {
                send = true;
                flags = BCN_FLAG_POSITIVE;
            }

            if (send) {
                meta.gen_kind = GEN_BCN;
                meta.gen_cp_port = meta.out_port;
                meta.gen_cp_queue = meta.queue;
                meta.gen_flags = flags;
                /* The header's fields saturate rather than wrap. */
                if (qoff > 32767) {
                    meta.gen_qoff = 32767;
                } else if (qoff < -32768) {
                    meta.gen_qoff = -32768;
                } else {
                    meta.gen_qoff = (int<16>)qoff;
                }
                if (qdelta > 32767) {
                    meta.gen_qdelta = 32767;
                } else if (qdelta < -32768) {
                    meta.gen_qdelta = -32768;
                } else {
                    meta.gen_qdelta = (int<16>)qdelta;
                }
                if (fb > 2147483647) {
                    meta.gen_fb = 2147483647;
                } else if (fb < -2147483648) {
                    meta.gen_fb = -2147483648;
                } else {
                    meta.gen_fb = (int<32>)fb;
                }
                meta.gen_timestamp = standard_metadata.ingress_global_timestamp[31:0];
            }
        }
    }
}

/* Turns an ingress clone of the sampled frame into the BCN frame:
 * new Ethernet + BCN header in front, the sample behind, cut to length. */
control BcnEgress(inout headers_t hdr,
                  inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    @name(".bcn_frames")
    counter(QUEUE_COUNT, CounterType.packets) bcn_frames;

    apply {
        bit<32> sample_len = standard_metadata.packet_length;
        if (sample_len > BCN_MAX_SAMPLE) {
            sample_len = BCN_MAX_SAMPLE;
        }
        hdr.gen_ethernet.setValid();
        hdr.gen_ethernet.dst_addr = hdr.ethernet.src_addr;
        hdr.gen_ethernet.src_addr = PORT_MAC(meta.switch_id, meta.gen_cp_port);
        hdr.gen_ethernet.ether_type = ETHERTYPE_BCN;
        hdr.bcn.setValid();
        hdr.bcn.version = 0;
        hdr.bcn.flags = meta.gen_flags;
        hdr.bcn.reserved = 0;
        hdr.bcn.cpid = (bit<32>)meta.switch_id
                       ++ (bit<16>)meta.gen_cp_port
                       ++ (bit<16>)meta.gen_cp_queue;
        hdr.bcn.qoff = meta.gen_qoff;
        hdr.bcn.qdelta = meta.gen_qdelta;
        hdr.bcn.fb = meta.gen_fb;
        hdr.bcn.timestamp = meta.gen_timestamp;
        hdr.bcn.sample_len = (bit<16>)sample_len;
        truncate(BCN_HEADER_BYTES + sample_len);
        bit<32> cp = QUEUE_SLOT(meta.gen_cp_port, meta.gen_cp_queue);
        bcn_frames.count(cp);
        bcn_last_fb.write(cp, (bit<32>)meta.gen_fb);
    }
}

#endif
