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

#endif
