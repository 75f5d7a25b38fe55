/*
 * Exercise bcn_congestion_point: a BCN congestion point (CP).
 *
 * This program is the lab's switch, p4src/buffer_switch.p4, with its BCN
 * congestion point left to you: sample the arrivals of each egress queue,
 * compute the feedback Fb from the queue, and turn the sampled frame into
 * a BCN frame for its source. The controller's bcn_config table, buffer
 * accounting, the clone back out of the source's port and the counters are
 * the lab's. README.md says what to write and how to check it; the frame
 * layout is in p4src/README.md ("BCN frame").
 */
#include <core.p4>
#include <v1model.p4>
#include "../../p4src/include/bcn_config.p4"

/* This file stands in for p4src/include/bcn.p4. */
#define BUFFERLAB_BCN_P4

/* Queues are measured in 64-byte pages: Q_pages = Q_bytes >> 6. */
#define BCN_PAGE_SHIFT 6
/* Ethernet (14) + BCN header (24) go in front of the sample. */
const bit<32> BCN_HEADER_BYTES = 38;
/* A BCN frame is at most 128 bytes, so at most 90 sampled bytes. */
const bit<32> BCN_MAX_SAMPLE = 90;

/* Your state, per congestion point meta.queue_index (port * 8 + queue):
 * arrival bytes left until the next sample, and Q (pages) at the last one. */
@name(".bcn_countdown")
register<bit<32>>(QUEUE_COUNT) bcn_countdown;
@name(".bcn_qold")
register<bit<32>>(QUEUE_COUNT) bcn_qold;

control BcnIngress(inout headers_t hdr,
                   inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    BcnConfig() config;

    apply {
        /* Fills meta.bcn_enabled, bcn_qeq_pages, bcn_w, bcn_qsc_pages,
         * bcn_sample_bytes and bcn_jitter_bytes for this frame's queue. */
        config.apply(meta);
        /* TODO 1, sampling: when BCN is enabled, count this frame's bytes
         * (standard_metadata.packet_length) against the queue's countdown;
         * the frame that uses it up is sampled, and the countdown restarts at
         * sample_bytes +- jitter_bytes (extern random()).
         * TODO 2, feedback, on a sample: Q = queue bytes after this frame in
         * pages ((meta.queue_used + meta.acct_bytes) >> BCN_PAGE_SHIFT; acct_bytes
         * is 0 if admission dropped it), Qoff = Q - Qeq, Qdelta = Q - Qold
         * (then store Q as Qold), Fb = -(Qoff + W * Qdelta). Use int<64>.
         * TODO 3, ask for a frame when Fb < 0 (or Q >= Qsc, severe), or when
         * Fb > 0 and the frame carries an RLT (hdr.rlt) naming this CP
         * (cpid = switch_id ++ port ++ queue, 32 + 16 + 16 bits): set
         * meta.gen_kind = GEN_BCN and meta.gen_cp_port, gen_cp_queue,
         * gen_flags (BCN_FLAG_SEVERE / BCN_FLAG_POSITIVE), gen_qoff, gen_qdelta,
         * gen_fb (saturated to their widths) and gen_timestamp (low 32 bits
         * of the ingress timestamp). The ingress then clones the frame back
         * out of the port it came in on, and BcnEgress below gets the clone. */
    }
}

/* Turns the clone of the sampled frame into the BCN frame. */
control BcnEgress(inout headers_t hdr,
                  inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    @name(".bcn_frames")
    counter(QUEUE_COUNT, CounterType.packets) bcn_frames;

    apply {
        /* TODO 4, the frame: a new Ethernet header (hdr.gen_ethernet: to the
         * sampled frame's source, from PORT_MAC(meta.switch_id,
         * meta.gen_cp_port), EtherType ETHERTYPE_BCN) and the BCN header
         * (hdr.bcn) in front of the unchanged sample, cut with
         * truncate(BCN_HEADER_BYTES + sample_len), sample_len being the
         * frame's length up to BCN_MAX_SAMPLE. */
        bit<32> cp = QUEUE_SLOT(meta.gen_cp_port, meta.gen_cp_queue);
        bcn_frames.count(cp);
        bcn_last_fb.write(cp, (bit<32>)meta.gen_fb);
    }
}

/* The rest of the switch, as the lab has it. */
#include "../../p4src/buffer_switch.p4"
