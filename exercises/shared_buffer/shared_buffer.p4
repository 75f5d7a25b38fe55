/*
 * Exercise shared_buffer: the admission rule of a shared egress buffer.
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
 * port's share is percent of pool_bytes when dynamic == 0. */
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
        /* TODO: admit the frame only if, with it, the pool does not overflow,
         * the egress port stays within its share of the pool (percent of
         * pool_bytes), and the queue stays under its cap. P4 has no
         * division: compare port bytes * 100 with pool_bytes * percent, in
         * bit<64> so the products cannot overflow. (dynamic == 1 is the next
         * exercise, dynamic_threshold: here treat every share as static.) */
        admit = true;
    }
}

/* The rest of the switch, as the lab has it. */
#include "../../p4src/buffer_switch.p4"
