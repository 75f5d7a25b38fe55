/*
 * Exercise dynamic_threshold: the Choudhury-Hahne dynamic threshold.
 *
 * This program is the lab's switch, p4src/buffer_switch.p4, with one piece
 * left to you: AdmissionRule, which decides whether an arriving frame may
 * join the shared buffer. The occupancy registers, the controller's tables,
 * tail drop and the drop counters are the lab's (p4src/include/admission.p4);
 * README.md says what to write and how to check it.
 */
#include <core.p4>
#include <v1model.p4>

/* This file stands in for p4src/include/admission_rule.p4. */
#define BUFFERLAB_ADMISSION_RULE_P4

/* Bytes: frame_bytes (this frame), pool_bytes (the shared pool), pool_used,
 * port_used, queue_used (occupancy before this frame), queue_cap. The
 * port's share is static (percent of pool_bytes) when dynamic == 0,
 * alpha times the free pool when dynamic == 1, alpha = alpha_num / 2^alpha_shift. */
control AdmissionRule(in bit<32> frame_bytes,
                      in bit<32> pool_bytes,
                      in bit<32> pool_used,
                      in bit<32> port_used,
                      in bit<32> queue_used,
                      in bit<1> dynamic,
                      in bit<8> percent,
                      in bit<16> alpha_num,
                      in bit<8> alpha_shift,
                      in bit<32> queue_cap,
                      out bool admit) {
    apply {
        bit<64> len = (bit<64>)frame_bytes;
        bit<64> port_after = (bit<64>)port_used + len;
        bool fits_pool = (bit<64>)pool_used + len <= (bit<64>)pool_bytes;
        bool fits_queue = (bit<64>)queue_used + len <= (bit<64>)queue_cap;
        bool fits_share = port_after * 100 <= (bit<64>)pool_bytes * (bit<64>)percent;
        if (dynamic == 1) {
            /* TODO: the dynamic share: with it, the port may hold at most
             * alpha * (pool_bytes - pool_used) bytes, alpha = alpha_num /
             * 2^alpha_shift. No division: shift the port's bytes left by
             * alpha_shift instead, and mind a pool that is already full. */
            fits_share = true;
        }
        admit = fits_pool && fits_queue && fits_share;
    }
}

/* The rest of the switch, as the lab has it. */
#include "../../p4src/buffer_switch.p4"
