/*
 * BCN on Tofino. The congestion point is one control that runs where the
 * queue depth is known: in egress on TNA, from deq_qdepth, on departures; in
 * ingress in the T2NA variant, from the ghost thread's queue lengths, on
 * arrivals. The caller gives it the queue in 64-byte pages and the frame's
 * identity; it decides, fills the BCN mirror header and says whether to send,
 * and the caller mirrors the frame (E2E on TNA, I2E on T2NA) to the session of
 * the port the frame came in on. The copy is rewritten into the BCN frame in
 * its own egress pass (BcnFrame). Each register is used by one RegisterAction
 * per packet: bcn_countdown (sampling), bcn_qold (Qold swap, samples only),
 * bcn_last_fb (BCN copies only).
 *
 * Units as in the v1model program: Qeq, Qsc, Qoff, Qdelta and Fb in 64-byte
 * pages, S and J in bytes. What Tofino changes: W must be a power of two (a
 * shift; other values round down to one, 0 leaves Qdelta out); the byte
 * budget is uniform over S - 2^k .. S + 2^k - 1, 2^k the largest power of two
 * <= J; quantised Fb comes from bcn_quantise, not from multiplies.
 */
#ifndef BUFFERLAB_TNA_BCN_P4
#define BUFFERLAB_TNA_BCN_P4

#include "headers.p4"

/* Ethernet (14) + BCN header (24) in front of the sample; at most 90 sampled
 * bytes, so a BCN frame is at most 128 bytes (the v1model program's format). */
const bit<16> BCN_MAX_SAMPLE = 90;
const int<32> BCN_QOFF_MAX = 32767;
const int<32> BCN_QOFF_MIN = -32768;

/* Queue depth in cells (cp.q_cells) to 64-byte pages (cp.q_pages) with shifts
 * and adds: 80-byte cells are 1.25 pages (cells + cells / 4), 176-byte cells
 * 2.75 (cells * 2 + cells / 2 + cells / 4). */
control CellsToPages(inout bcn_cp_t cp) {
    apply {
#if CELL_BYTES == 176
        cp.q_part0 = cp.q_cells << 1;
        cp.q_part1 = cp.q_cells >> 1;
        cp.q_part2 = cp.q_cells >> 2;
        cp.q_sum = cp.q_part0 + cp.q_part1;
#else
        cp.q_part2 = cp.q_cells >> 2;
        cp.q_sum = cp.q_cells;
#endif
        cp.q_pages = cp.q_sum + cp.q_part2;
    }
}

control BcnCongestionPoint(inout bcn_cp_t cp,
                           in rlt_t rlt,
                           in PortId_t port,
                           in queue_t queue,
                           in queue_slot_t slot,
                           in bit<32> frame_bytes,
                           in bit<16> switch_id,
                           in bit<16> port_session_base,
                           in PortId_t source_port,
                           in bit<48> timestamp,
                           in bit<16> frame_len) {
    @name(".bcn_countdown")
    Register<bit<32>, queue_slot_t>(QUEUE_COUNT, 0) bcn_countdown;
    @name(".bcn_qold")
    Register<bit<32>, queue_slot_t>(QUEUE_COUNT, 0) bcn_qold;

    /* Count the frame against the byte budget; when it runs out the frame is
     * the sample and the budget is reloaded. */
    RegisterAction<bit<32>, queue_slot_t, bit<1>>(bcn_countdown) count_frame = {
        void apply(inout bit<32> left, out bit<1> sampled) {
            if (left <= frame_bytes) {
                left = cp.reload;
                sampled = 1;
            } else {
                left = left - frame_bytes;
                sampled = 0;
            }
        }
    };

    /* Qold out, Q in: one read-modify-write. */
    RegisterAction<bit<32>, queue_slot_t, bit<32>>(bcn_qold) swap_qold = {
        void apply(inout bit<32> qold, out bit<32> previous) {
            previous = qold;
            qold = cp.q_pages;
        }
    };

    Random<bit<32>>() jitter_random;

    @name(".bcn_enable")
    action bcn_enable(bit<32> qeq_pages, bit<8> w, bit<32> qsc_pages,
                      bit<32> sample_bytes, bit<32> jitter_bytes) {
        cp.enabled = 1;
        cp.qeq_pages = qeq_pages;
        cp.w = w;
        cp.qsc_pages = qsc_pages;
        cp.sample_bytes = sample_bytes;
        cp.jitter_bytes = jitter_bytes;
        cp.random = jitter_random.get();
    }

    @name(".bcn_disable")
    action bcn_disable() {
        cp.enabled = 0;
    }

    @name(".bcn_config")
    table bcn_config {
        key = {
            port: exact @name("port");
            queue: exact @name("queue");
        }
        actions = { bcn_enable; bcn_disable; }
        default_action = bcn_disable();
        size = QUEUE_COUNT;
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
        cp.qoff_max = (int<32>)qoff_max_pages;
        cp.positive_any = positive_any;
        cp.fb_range_pages = fb_range_pages;
    }

    @name(".bcn_feedback")
    table bcn_feedback {
        key = {
            port: exact @name("port");
            queue: exact @name("queue");
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
        cp.fb = (int<32>)fb;
    }

    @name(".bcn_quantise")
    table bcn_quantise {
        key = {
            port: exact @name("port");
            queue: exact @name("queue");
            cp.fb: ternary @name("fb");
        }
        actions = { bcn_quantised; NoAction; }
        default_action = NoAction();
        size = 4096;
    }

    /* J -> 2^k, the largest power of two <= J: the draw keeps 2^(k+1) values
     * (a mask) and the budget starts at S - 2^k (an add of -2^k), so it is
     * uniform over S - 2^k .. S + 2^k - 1. */
    action jitter_range(bit<32> mask, bit<32> minus_half) {
        cp.random = cp.random & mask;
        cp.base = cp.sample_bytes + minus_half;
    }

    action no_jitter() {
        cp.random = 0;
        cp.base = cp.sample_bytes;
    }

    table bcn_jitter {
        key = { cp.jitter_bytes: ternary; }
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
    action times_0() { cp.wq = 0; }
    action times_1() { cp.wq = cp.qdelta; }
    action times_2() { cp.wq = cp.qdelta << 1; }
    action times_4() { cp.wq = cp.qdelta << 2; }
    action times_8() { cp.wq = cp.qdelta << 3; }
    action times_16() { cp.wq = cp.qdelta << 4; }
    action times_32() { cp.wq = cp.qdelta << 5; }
    action times_64() { cp.wq = cp.qdelta << 6; }
    action times_128() { cp.wq = cp.qdelta << 7; }

    table bcn_weight {
        key = { cp.w: ternary; }
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

    apply {
        cp.send = 0;
        cp.cpid_hi = rlt.cpid[63:32] ^ (bit<32>)switch_id;
        cp.cpid_own = (bit<16>)port ++ (bit<16>)queue;
        bcn_config.apply();
        bcn_feedback.apply();
        if (cp.enabled == 1) {
            bcn_jitter.apply();
            cp.cpid_lo = rlt.cpid[31:0] ^ cp.cpid_own;
            cp.reload = cp.base + cp.random;
            cp.sampled = count_frame.execute(slot);
            cp.qoff = (int<32>)cp.q_pages - (int<32>)cp.qeq_pages;
            cp.cpid_diff = cp.cpid_hi | cp.cpid_lo;
            /* Severe: Qsc set and Q >= Qsc, i.e. Qsc |-| Q == 0. */
            cp.severe_diff = cp.qsc_pages |-| cp.q_pages;
            /* Fb's offset term, saturated at +-qoff_max_pages if set. */
            cp.qoff_term = cp.qoff;
            if (cp.qoff_max != 0) {
                cp.minus_cap = -cp.qoff_max;
                cp.qoff_term = min(cp.qoff, cp.qoff_max);
                cp.qoff_term = max(cp.qoff_term, cp.minus_cap);
            }
            cp.minus_qoff = -cp.qoff_term;
            if (cp.sampled == 1) {
                cp.qold_pages = swap_qold.execute(slot);
                cp.qdelta = (int<32>)cp.q_pages - (int<32>)cp.qold_pages;
                bcn_weight.apply();
                /* Fb = -(Qoff + W * Qdelta) */
                cp.fb = cp.minus_qoff - cp.wq;
                if (cp.fb_range_pages != 0) {
                    bcn_quantise.apply();
                }

                bit<4> flags = 0;
                if (cp.qsc_pages != 0 && cp.severe_diff == 0) {
                    cp.send = 1;
                    flags = BCN_FLAG_SEVERE;
                } else if (cp.fb[31:31] == 1) {
                    cp.send = 1;
                } else if (cp.fb != 0
                           && ((rlt.isValid() && cp.cpid_diff == 0) || cp.positive_any == 1)) {
                    /* Positive feedback to a source whose RLT names this
                     * congestion point (the 64-bit cpid compared as two
                     * halves), or to any source (positive_any). */
                    cp.send = 1;
                    flags = BCN_FLAG_POSITIVE;
                }

                if (cp.send == 1) {
                    cp.mirror.setValid();
                    cp.mirror.pkt_kind = PKT_BCN_COPY;
                    cp.mirror.switch_id = switch_id;
                    cp.mirror.cp_port = port;
                    cp.mirror.cp_queue = queue;
                    cp.mirror.flags = flags;
                    cp.mirror.fb = cp.fb;
                    cp.mirror.timestamp = timestamp[31:0];
                    cp.mirror.frame_len = frame_len;
                    /* The header's 16-bit fields saturate rather than wrap. */
                    if (cp.qoff > BCN_QOFF_MAX) {
                        cp.mirror.qoff = 32767;
                    } else if (cp.qoff < BCN_QOFF_MIN) {
                        cp.mirror.qoff = -32768;
                    } else {
                        cp.mirror.qoff = (int<16>)cp.qoff;
                    }
                    if (cp.qdelta > BCN_QOFF_MAX) {
                        cp.mirror.qdelta = 32767;
                    } else if (cp.qdelta < BCN_QOFF_MIN) {
                        cp.mirror.qdelta = -32768;
                    } else {
                        cp.mirror.qdelta = (int<16>)cp.qdelta;
                    }
                    /* Back out of the port the sampled frame came in on. */
                    cp.session = (MirrorId_t)(port_session_base + (bit<16>)source_port);
                }
            }
        }
    }
}

/* Turns a BCN copy into the BCN frame: new Ethernet + BCN header in front of
 * the sample (kept byte-exact behind them, up to the session's truncation). */
control BcnFrame(inout switch_headers_t hdr,
                 in bcn_mirror_h mirror) {
    @name(".bcn_frames")
    Counter<bit<64>, queue_slot_t>(QUEUE_COUNT, CounterType_t.PACKETS) bcn_frames;
    /* Fb (pages, two's complement) of the last BCN frame each congestion
     * point sent, for a controller to watch. */
    @name(".bcn_last_fb")
    Register<bit<32>, queue_slot_t>(QUEUE_COUNT, 0) bcn_last_fb;
    RegisterAction<bit<32>, queue_slot_t, bit<32>>(bcn_last_fb) record_fb = {
        void apply(inout bit<32> fb) {
            fb = (bit<32>)mirror.fb;
        }
    };

    apply {
        hdr.gen_ethernet.setValid();
        hdr.gen_ethernet.dst_addr = hdr.ethernet.src_addr;
        hdr.gen_ethernet.src_addr = PORT_MAC(mirror.switch_id, mirror.cp_port);
        hdr.gen_ethernet.ether_type = ETHERTYPE_BCN;
        hdr.bcn.setValid();
        hdr.bcn.version = 0;
        hdr.bcn.flags = mirror.flags;
        hdr.bcn.reserved = 0;
        hdr.bcn.cpid = (bit<32>)mirror.switch_id
                       ++ (bit<16>)mirror.cp_port
                       ++ (bit<16>)mirror.cp_queue;
        hdr.bcn.qoff = mirror.qoff;
        hdr.bcn.qdelta = mirror.qdelta;
        hdr.bcn.fb = mirror.fb;
        hdr.bcn.timestamp = mirror.timestamp;
        hdr.bcn.sample_len = min(mirror.frame_len, BCN_MAX_SAMPLE);
        queue_slot_t slot = QUEUE_SLOT(mirror.cp_port, mirror.cp_queue);
        bcn_frames.count(slot);
        record_fb.execute(slot);
    }
}

#endif
