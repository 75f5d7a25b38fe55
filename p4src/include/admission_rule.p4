/*
 * The admission rule: may a frame of frame_bytes join the shared egress
 * buffer? It must fit in the pool, in its egress port's share of the pool
 * and under its queue's cap. The share is static (percent of pool_bytes)
 * or dynamic (Choudhury-Hahne: alpha times the free pool, alpha =
 * alpha_num / 2^alpha_shift). Occupancies are bytes before this frame.
 * Every comparison cross-multiplies in 64 bits: P4 targets have no
 * division, and 32-bit products of byte counts would overflow.
 * (The exercises shared_buffer and dynamic_threshold write this control.)
 */
#ifndef BUFFERLAB_ADMISSION_RULE_P4
#define BUFFERLAB_ADMISSION_RULE_P4

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
        bool over_pool = (bit<64>)pool_used + len > (bit<64>)pool_bytes;
        bool over_queue = (bit<64>)queue_used + len > (bit<64>)queue_cap;
        bool over_port;
        if (dynamic == 1) {
            bit<64> pool_free = 0;
            if (pool_used < pool_bytes) {
                pool_free = (bit<64>)(pool_bytes - pool_used);
            }
            /* port_after > alpha_num * pool_free / 2^alpha_shift */
            over_port = (port_after << alpha_shift) > (bit<64>)alpha_num * pool_free;
        } else {
            /* port_after > pool_bytes * percent / 100 */
            over_port = port_after * 100 > (bit<64>)pool_bytes * (bit<64>)percent;
        }
        admit = !(over_pool || over_port || over_queue);
    }
}

#endif
