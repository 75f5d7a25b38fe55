/*
 * BCN on Tofino: the congestion point runs in egress, where the TM reports
 * the queue a frame leaves behind (deq_qdepth, in 80-byte cells), and the
 * feedback frame is an E2E mirror copy of the sampled frame, sent to the
 * mirror session of the port it came in on, truncated by the session and
 * rewritten in its own egress pass. Each register is used by one
 * RegisterAction per packet: bcn_countdown (sampling), bcn_qold (Qold swap,
 * sampled frames only), bcn_last_fb (BCN copies only).
 *
 * Units as in the v1model program: Qeq, Qsc, Qoff, Qdelta and Fb in 64-byte
 * pages (Q = cells * 80 / 64 = cells + cells / 4), S and J in bytes. What
 * Tofino changes: departures are counted, not arrivals (dropped frames never
 * reach egress); W must be a power of two (a shift; other values round down
 * to one, 0 leaves Qdelta out); the byte budget is S +- 2^k with 2^k the
 * largest power of two <= J (uniform, mean S).
 */
#ifndef BUFFERLAB_TNA_BCN_P4
#define BUFFERLAB_TNA_BCN_P4

#include "headers.p4"

/* Ethernet (14) + BCN header (24) in front of the sample; at most 90 sampled
 * bytes, so a BCN frame is at most 128 bytes (the v1model program's format). */
const bit<16> BCN_MAX_SAMPLE = 90;
const int<32> BCN_QOFF_MAX = 32767;
const int<32> BCN_QOFF_MIN = -32768;

control BcnCongestionPoint(inout switch_headers_t hdr,
                           inout eg_metadata_t eg_md,
                           in egress_intrinsic_metadata_t eg_intr_md,
                           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    @name(".bcn_countdown")
    Register<bit<32>, queue_slot_t>(QUEUE_COUNT, 0) bcn_countdown;
    @name(".bcn_qold")
    Register<bit<32>, queue_slot_t>(QUEUE_COUNT, 0) bcn_qold;

    /* Count a departure against the byte budget; when it runs out the frame
     * is the sample and the budget is reloaded. */
    RegisterAction<bit<32>, queue_slot_t, bit<1>>(bcn_countdown) count_departure = {
        void apply(inout bit<32> left, out bit<1> sampled) {
            if (left <= eg_md.frame_bytes) {
                left = eg_md.bcn_reload;
                sampled = 1;
            } else {
                left = left - eg_md.frame_bytes;
                sampled = 0;
            }
        }
    };

    /* Qold out, Q in: one read-modify-write. */
    RegisterAction<bit<32>, queue_slot_t, bit<32>>(bcn_qold) swap_qold = {
        void apply(inout bit<32> qold, out bit<32> previous) {
            previous = qold;
            qold = eg_md.bcn_q_pages;
        }
    };

    Random<bit<32>>() jitter_random;

    @name(".bcn_enable")
    action bcn_enable(bit<32> qeq_pages, bit<8> w, bit<32> qsc_pages,
                      bit<32> sample_bytes, bit<32> jitter_bytes) {
        eg_md.bcn_enabled = 1;
        eg_md.bcn_qeq_pages = qeq_pages;
        eg_md.bcn_w = w;
        eg_md.bcn_qsc_pages = qsc_pages;
        eg_md.bcn_sample_bytes = sample_bytes;
        eg_md.bcn_jitter_bytes = jitter_bytes;
        eg_md.bcn_random = jitter_random.get();
    }

    @name(".bcn_disable")
    action bcn_disable() {
        eg_md.bcn_enabled = 0;
    }

    @name(".bcn_config")
    table bcn_config {
        key = {
            eg_intr_md.egress_port: exact @name("port");
            hdr.bridged.queue: exact @name("queue");
        }
        actions = { bcn_enable; bcn_disable; }
        default_action = bcn_disable();
        size = QUEUE_COUNT;
    }

    /* J -> 2^k, the largest power of two <= J: the draw keeps 2^(k+1) values
     * (a mask) and the budget starts at S - 2^k (an add of -2^k), so it is
     * uniform over S - 2^k .. S + 2^k - 1. */
    action jitter_range(bit<32> mask, bit<32> minus_half) {
        eg_md.bcn_random = eg_md.bcn_random & mask;
        eg_md.bcn_base = eg_md.bcn_sample_bytes + minus_half;
    }

    action no_jitter() {
        eg_md.bcn_random = 0;
        eg_md.bcn_base = eg_md.bcn_sample_bytes;
    }

    table bcn_jitter {
        key = { eg_md.bcn_jitter_bytes: ternary; }
        actions = { jitter_range; no_jitter; }
        const default_action = no_jitter();
        const entries = {
            32w0x80000000 &&& 32w0x80000000: jitter_range(32w0xffffffff, 32w0x80000000);
            32w0x40000000 &&& 32w0xc0000000: jitter_range(32w0x7fffffff, 32w0xc0000000);
            32w0x20000000 &&& 32w0xe0000000: jitter_range(32w0x3fffffff, 32w0xe0000000);
            32w0x10000000 &&& 32w0xf0000000: jitter_range(32w0x1fffffff, 32w0xf0000000);
            32w0x08000000 &&& 32w0xf8000000: jitter_range(32w0x0fffffff, 32w0xf8000000);
            32w0x04000000 &&& 32w0xfc000000: jitter_range(32w0x07ffffff, 32w0xfc000000);
            32w0x02000000 &&& 32w0xfe000000: jitter_range(32w0x03ffffff, 32w0xfe000000);
            32w0x01000000 &&& 32w0xff000000: jitter_range(32w0x01ffffff, 32w0xff000000);
            32w0x00800000 &&& 32w0xff800000: jitter_range(32w0x00ffffff, 32w0xff800000);
            32w0x00400000 &&& 32w0xffc00000: jitter_range(32w0x007fffff, 32w0xffc00000);
            32w0x00200000 &&& 32w0xffe00000: jitter_range(32w0x003fffff, 32w0xffe00000);
            32w0x00100000 &&& 32w0xfff00000: jitter_range(32w0x001fffff, 32w0xfff00000);
            32w0x00080000 &&& 32w0xfff80000: jitter_range(32w0x000fffff, 32w0xfff80000);
            32w0x00040000 &&& 32w0xfffc0000: jitter_range(32w0x0007ffff, 32w0xfffc0000);
            32w0x00020000 &&& 32w0xfffe0000: jitter_range(32w0x0003ffff, 32w0xfffe0000);
            32w0x00010000 &&& 32w0xffff0000: jitter_range(32w0x0001ffff, 32w0xffff0000);
            32w0x00008000 &&& 32w0xffff8000: jitter_range(32w0x0000ffff, 32w0xffff8000);
            32w0x00004000 &&& 32w0xffffc000: jitter_range(32w0x00007fff, 32w0xffffc000);
            32w0x00002000 &&& 32w0xffffe000: jitter_range(32w0x00003fff, 32w0xffffe000);
            32w0x00001000 &&& 32w0xfffff000: jitter_range(32w0x00001fff, 32w0xfffff000);
            32w0x00000800 &&& 32w0xfffff800: jitter_range(32w0x00000fff, 32w0xfffff800);
            32w0x00000400 &&& 32w0xfffffc00: jitter_range(32w0x000007ff, 32w0xfffffc00);
            32w0x00000200 &&& 32w0xfffffe00: jitter_range(32w0x000003ff, 32w0xfffffe00);
            32w0x00000100 &&& 32w0xffffff00: jitter_range(32w0x000001ff, 32w0xffffff00);
            32w0x00000080 &&& 32w0xffffff80: jitter_range(32w0x000000ff, 32w0xffffff80);
            32w0x00000040 &&& 32w0xffffffc0: jitter_range(32w0x0000007f, 32w0xffffffc0);
            32w0x00000020 &&& 32w0xffffffe0: jitter_range(32w0x0000003f, 32w0xffffffe0);
            32w0x00000010 &&& 32w0xfffffff0: jitter_range(32w0x0000001f, 32w0xfffffff0);
            32w0x00000008 &&& 32w0xfffffff8: jitter_range(32w0x0000000f, 32w0xfffffff8);
            32w0x00000004 &&& 32w0xfffffffc: jitter_range(32w0x00000007, 32w0xfffffffc);
            32w0x00000002 &&& 32w0xfffffffe: jitter_range(32w0x00000003, 32w0xfffffffe);
            32w0x00000001 &&& 32w0xffffffff: jitter_range(32w0x00000001, 32w0xffffffff);
        }
        size = 32;
    }

    /* W * Qdelta with W a power of two: one shift per entry. */
    action times_0() { eg_md.bcn_wq = 0; }
    action times_1() { eg_md.bcn_wq = eg_md.bcn_qdelta; }
    action times_2() { eg_md.bcn_wq = eg_md.bcn_qdelta << 1; }
    action times_4() { eg_md.bcn_wq = eg_md.bcn_qdelta << 2; }
    action times_8() { eg_md.bcn_wq = eg_md.bcn_qdelta << 3; }
    action times_16() { eg_md.bcn_wq = eg_md.bcn_qdelta << 4; }
    action times_32() { eg_md.bcn_wq = eg_md.bcn_qdelta << 5; }
    action times_64() { eg_md.bcn_wq = eg_md.bcn_qdelta << 6; }
    action times_128() { eg_md.bcn_wq = eg_md.bcn_qdelta << 7; }

    table bcn_weight {
        key = { eg_md.bcn_w: ternary; }
        actions = { times_0; times_1; times_2; times_4; times_8; times_16; times_32;
                    times_64; times_128; }
        const default_action = times_0();
        const entries = {
            8w0x80 &&& 8w0x80: times_128;
            8w0x40 &&& 8w0xc0: times_64;
            8w0x20 &&& 8w0xe0: times_32;
            8w0x10 &&& 8w0xf0: times_16;
            8w0x08 &&& 8w0xf8: times_8;
            8w0x04 &&& 8w0xfc: times_4;
            8w0x02 &&& 8w0xfe: times_2;
            8w0x01 &&& 8w0xff: times_1;
        }
        size = 8;
    }

    /* What the congestion point sends once a frame is sampled (the v1model
     * program's bcn_feedback, same action and parameters): qoff_max_pages
     * saturates Fb's Qoff term at +-qoff_max_pages (0: as measured);
     * positive_any sends positive feedback to any sampled source, not only
     * to a tagged one. fb_range_pages != 0 asks for QCN's quantised Fb: the
     * v1model program computes it with two 64-bit multiplies (fb_code_mul,
     * fb_step_mul), which Tofino has not; here bcn_quantise maps Fb to its
     * quantised value instead (below), and the two multipliers are unused. */
    @name(".bcn_send")
    action bcn_send(bit<32> qoff_max_pages, bit<1> positive_any,
                    bit<32> fb_range_pages, bit<64> fb_code_mul,
                    bit<64> fb_step_mul) {
        eg_md.bcn_qoff_max = (int<32>)qoff_max_pages;
        eg_md.bcn_positive_any = positive_any;
        eg_md.bcn_fb_range_pages = fb_range_pages;
    }

    @name(".bcn_feedback")
    table bcn_feedback {
        key = {
            eg_intr_md.egress_port: exact @name("port");
            hdr.bridged.queue: exact @name("queue");
        }
        actions = { bcn_send; }
        default_action = bcn_send(0, 0, 0, 0, 0);
        size = QUEUE_COUNT;
    }

    /* Quantised Fb on Tofino: one ternary entry per (congestion point, run
     * of Fb values, as two's complement bit<32>) giving the quantised Fb
     * (whole steps of fb_range / (2^bits - 1) pages, saturated at the
     * range). The controller expands QCN's 2^bits classes into ternary
     * prefixes; a range key of 32 bits is more than Tofino's range match
     * takes. No entry: Fb as computed. */
    @name(".bcn_quantised")
    action bcn_quantised(bit<32> fb) {
        eg_md.bcn_fb = (int<32>)fb;
    }

    @name(".bcn_quantise")
    table bcn_quantise {
        key = {
            eg_intr_md.egress_port: exact @name("port");
            hdr.bridged.queue: exact @name("queue");
            eg_md.bcn_fb: ternary @name("fb");
        }
        actions = { bcn_quantised; NoAction; }
        default_action = NoAction();
        size = 4096;
    }

    apply {
        eg_md.bcn_send = 0;
        /* What a sample needs from the TM's depth and the RLT does not depend on
         * the sampling decision, so it is computed off that critical path. */
        eg_md.bcn_cells = (bit<32>)eg_intr_md.deq_qdepth;
        eg_md.bcn_quarter = (bit<32>)(eg_intr_md.deq_qdepth >> 2);
        eg_md.bcn_cpid_hi = hdr.rlt.cpid[63:32] ^ (bit<32>)hdr.bridged.switch_id;
        eg_md.bcn_cpid_own = (bit<16>)eg_intr_md.egress_port ++ (bit<16>)hdr.bridged.queue;
        bcn_config.apply();
        bcn_feedback.apply();
        if (eg_md.bcn_enabled == 1) {
            bcn_jitter.apply();
            /* Q in pages: cells * 80 / 64 = cells + cells / 4. */
            eg_md.bcn_q_pages = eg_md.bcn_cells + eg_md.bcn_quarter;
            eg_md.bcn_cpid_lo = hdr.rlt.cpid[31:0] ^ eg_md.bcn_cpid_own;
            eg_md.bcn_reload = eg_md.bcn_base + eg_md.bcn_random;
            eg_md.bcn_sampled = count_departure.execute(eg_md.slot);
            eg_md.bcn_qoff = (int<32>)eg_md.bcn_q_pages - (int<32>)eg_md.bcn_qeq_pages;
            eg_md.bcn_cpid_diff = eg_md.bcn_cpid_hi | eg_md.bcn_cpid_lo;
            /* Severe: Qsc set and Q >= Qsc, i.e. Qsc |-| Q == 0. */
            eg_md.bcn_severe_diff = eg_md.bcn_qsc_pages |-| eg_md.bcn_q_pages;
            /* Fb's offset term, saturated at +-qoff_max_pages if set. */
            eg_md.bcn_qoff_term = eg_md.bcn_qoff;
            if (eg_md.bcn_qoff_max != 0) {
                eg_md.bcn_minus_cap = -eg_md.bcn_qoff_max;
                eg_md.bcn_qoff_term = min(eg_md.bcn_qoff, eg_md.bcn_qoff_max);
                eg_md.bcn_qoff_term = max(eg_md.bcn_qoff_term, eg_md.bcn_minus_cap);
            }
            eg_md.bcn_minus_qoff = -eg_md.bcn_qoff_term;
            if (eg_md.bcn_sampled == 1) {
                eg_md.bcn_qold_pages = swap_qold.execute(eg_md.slot);
                eg_md.bcn_qdelta = (int<32>)eg_md.bcn_q_pages - (int<32>)eg_md.bcn_qold_pages;
                bcn_weight.apply();
                /* Fb = -(Qoff + W * Qdelta) */
                eg_md.bcn_fb = eg_md.bcn_minus_qoff - eg_md.bcn_wq;
                if (eg_md.bcn_fb_range_pages != 0) {
                    bcn_quantise.apply();
                }

                bit<4> flags = 0;
                if (eg_md.bcn_qsc_pages != 0 && eg_md.bcn_severe_diff == 0) {
                    eg_md.bcn_send = 1;
                    flags = BCN_FLAG_SEVERE;
                } else if (eg_md.bcn_fb[31:31] == 1) {
                    eg_md.bcn_send = 1;
                } else if (eg_md.bcn_fb != 0
                           && ((hdr.rlt.isValid() && eg_md.bcn_cpid_diff == 0)
                               || eg_md.bcn_positive_any == 1)) {
                    /* Positive feedback to a source whose RLT names this
                     * congestion point (the 64-bit cpid compared as two
                     * halves), or to any source (positive_any). */
                    eg_md.bcn_send = 1;
                    flags = BCN_FLAG_POSITIVE;
                }

                if (eg_md.bcn_send == 1) {
                    eg_md.bcn_mirror.setValid();
                    eg_md.bcn_mirror.pkt_kind = PKT_BCN_COPY;
                    eg_md.bcn_mirror.switch_id = hdr.bridged.switch_id;
                    eg_md.bcn_mirror.cp_port = eg_intr_md.egress_port;
                    eg_md.bcn_mirror.cp_queue = hdr.bridged.queue;
                    eg_md.bcn_mirror.flags = flags;
                    eg_md.bcn_mirror.fb = eg_md.bcn_fb;
                    eg_md.bcn_mirror.timestamp = hdr.bridged.ingress_tstamp[31:0];
                    eg_md.bcn_mirror.frame_len = eg_intr_md.pkt_length;
                    /* The header's 16-bit fields saturate rather than wrap. */
                    if (eg_md.bcn_qoff > BCN_QOFF_MAX) {
                        eg_md.bcn_mirror.qoff = 32767;
                    } else if (eg_md.bcn_qoff < BCN_QOFF_MIN) {
                        eg_md.bcn_mirror.qoff = -32768;
                    } else {
                        eg_md.bcn_mirror.qoff = (int<16>)eg_md.bcn_qoff;
                    }
                    if (eg_md.bcn_qdelta > BCN_QOFF_MAX) {
                        eg_md.bcn_mirror.qdelta = 32767;
                    } else if (eg_md.bcn_qdelta < BCN_QOFF_MIN) {
                        eg_md.bcn_mirror.qdelta = -32768;
                    } else {
                        eg_md.bcn_mirror.qdelta = (int<16>)eg_md.bcn_qdelta;
                    }
                    /* Back out of the port the sampled frame came in on. */
                    eg_md.bcn_session = (MirrorId_t)(hdr.bridged.port_session_base
                                                     + (bit<16>)hdr.bridged.ingress_port);
                    eg_dprsr_md.mirror_type = MIRROR_TYPE_BCN;
                }
            }
        }
    }
}

/* Turns a BCN copy into the BCN frame: new Ethernet + BCN header in front of
 * the sample (kept byte-exact behind them, up to the session's truncation). */
control BcnFrame(inout switch_headers_t hdr,
                 inout eg_metadata_t eg_md) {
    @name(".bcn_frames")
    Counter<bit<64>, queue_slot_t>(QUEUE_COUNT, CounterType_t.PACKETS) bcn_frames;
    /* Fb (pages, two's complement) of the last BCN frame each congestion
     * point sent, for a controller to watch. */
    @name(".bcn_last_fb")
    Register<bit<32>, queue_slot_t>(QUEUE_COUNT, 0) bcn_last_fb;
    RegisterAction<bit<32>, queue_slot_t, bit<32>>(bcn_last_fb) record_fb = {
        void apply(inout bit<32> fb) {
            fb = (bit<32>)eg_md.bcn_mirror.fb;
        }
    };

    apply {
        hdr.gen_ethernet.setValid();
        hdr.gen_ethernet.dst_addr = hdr.ethernet.src_addr;
        hdr.gen_ethernet.src_addr = PORT_MAC(eg_md.bcn_mirror.switch_id, eg_md.bcn_mirror.cp_port);
        hdr.gen_ethernet.ether_type = ETHERTYPE_BCN;
        hdr.bcn.setValid();
        hdr.bcn.version = 0;
        hdr.bcn.flags = eg_md.bcn_mirror.flags;
        hdr.bcn.reserved = 0;
        hdr.bcn.cpid = (bit<32>)eg_md.bcn_mirror.switch_id
                       ++ (bit<16>)eg_md.bcn_mirror.cp_port
                       ++ (bit<16>)eg_md.bcn_mirror.cp_queue;
        hdr.bcn.qoff = eg_md.bcn_mirror.qoff;
        hdr.bcn.qdelta = eg_md.bcn_mirror.qdelta;
        hdr.bcn.fb = eg_md.bcn_mirror.fb;
        hdr.bcn.timestamp = eg_md.bcn_mirror.timestamp;
        hdr.bcn.sample_len = min(eg_md.bcn_mirror.frame_len, BCN_MAX_SAMPLE);
        eg_md.slot = QUEUE_SLOT(eg_md.bcn_mirror.cp_port, eg_md.bcn_mirror.cp_queue);
        bcn_frames.count(eg_md.slot);
        record_fb.execute(eg_md.slot);
    }
}

#endif
