/*
 * What the controller sets and reads of each BCN congestion point (egress
 * port, queue): the bcn_config table fills the meta.bcn_* parameters, and
 * bcn_last_fb keeps the feedback of the last BCN frame sent, so a controller
 * can watch Fb over P4Runtime (BCN frames themselves go to the sources).
 */
#ifndef BUFFERLAB_BCN_CONFIG_P4
#define BUFFERLAB_BCN_CONFIG_P4

#include "metadata.p4"
#include "admission.p4"

/* Fb (64-byte pages, two's complement) of the last BCN frame sent, per
 * congestion point port*8 + queue. */
@name(".bcn_last_fb")
register<bit<32>>(QUEUE_COUNT) bcn_last_fb;

control BcnConfig(inout metadata_t meta) {
    /* qeq_pages/qsc_pages in 64-byte pages (qsc_pages 0: no severe
     * threshold); w: weight of Qdelta; sample_bytes +- jitter_bytes:
     * arrivals between samples (jitter_bytes < sample_bytes). */
    @name(".bcn_enable")
    action bcn_enable(bit<32> qeq_pages, bit<8> w, bit<32> qsc_pages,
                      bit<32> sample_bytes, bit<32> jitter_bytes) {
        meta.bcn_enabled = 1;
        meta.bcn_qeq_pages = qeq_pages;
        meta.bcn_w = w;
        meta.bcn_qsc_pages = qsc_pages;
        meta.bcn_sample_bytes = sample_bytes;
        meta.bcn_jitter_bytes = jitter_bytes;
    }

    @name(".bcn_disable")
    action bcn_disable() {
        meta.bcn_enabled = 0;
    }

    @name(".bcn_config")
    table bcn_config {
        key = {
            meta.out_port: exact @name("port");
            meta.queue: exact @name("queue");
        }
        actions = { bcn_enable; bcn_disable; }
        default_action = bcn_disable();
        size = QUEUE_COUNT;
    }

    apply {
        bcn_config.apply();
    }
}

/* What a congestion point sends once a frame is sampled: its Fb quantised
 * or as computed, and positive feedback to tagged sources only or to any.
 * Read only for samples, so an arrival that is not one costs no lookup.
 *
 * qoff_max_pages 0: Fb = -(Qoff + W * Qdelta) as measured. Otherwise Qoff
 * is saturated at +-qoff_max_pages in Fb (the frame's Qoff field is not).
 * positive_any: 1 sends positive feedback to the source of any sampled
 * frame, 0 only to frames whose RLT names this congestion point.
 * fb_range_pages 0: Fb as computed. Otherwise |Fb| is saturated at
 * fb_range_pages and cut down to a whole number of steps of
 * fb_range_pages / (2^bits - 1) pages (QCN's quantised feedback), carried
 * in pages rounded down: code = (|Fb| * fb_code_mul) >> 32 and
 * |Fb'| = (code * fb_step_mul) >> 32, with fb_code_mul =
 * ceil(2^32 (2^bits - 1) / range) and fb_step_mul =
 * ceil(2^32 range / (2^bits - 1)); exact (both floors) for
 * 2^bits - 1 <= range <= 65535, the controller's bounds. A sample whose
 * quantised Fb is 0 sends nothing unless it is severe. */
control BcnFeedback(inout metadata_t meta) {
    @name(".bcn_send")
    action bcn_send(bit<32> qoff_max_pages, bit<1> positive_any,
                    bit<32> fb_range_pages, bit<64> fb_code_mul,
                    bit<64> fb_step_mul) {
        meta.bcn_qoff_max_pages = qoff_max_pages;
        meta.bcn_positive_any = positive_any;
        meta.bcn_fb_range_pages = fb_range_pages;
        meta.bcn_fb_code_mul = fb_code_mul;
        meta.bcn_fb_step_mul = fb_step_mul;
    }

    @name(".bcn_feedback")
    table bcn_feedback {
        key = {
            meta.out_port: exact @name("port");
            meta.queue: exact @name("queue");
        }
        actions = { bcn_send; }
        default_action = bcn_send(0, 0, 0, 0, 0);
        size = QUEUE_COUNT;
    }

    apply {
        bcn_feedback.apply();
    }
}

#endif
