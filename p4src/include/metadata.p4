/*
 * Per-packet metadata shared by every stage of buffer_switch.
 * Fields marked @field_list(GEN_FIELD_LIST) survive into the clones that
 * become BCN, PAUSE and XON frames; v1model resets everything else in a
 * clone, so the egress rewrite only trusts those.
 */
#ifndef BUFFERLAB_METADATA_P4
#define BUFFERLAB_METADATA_P4

#include "headers.p4"

/* Index of the field list preserved by clone_preserving_field_list. */
#define GEN_FIELD_LIST 1

/* What the egress rewrite makes of a clone (metadata gen_kind). */
const bit<8> GEN_NONE          = 0;
const bit<8> GEN_BCN           = 1;
const bit<8> GEN_PAUSE         = 2;
const bit<8> GEN_XON           = 3;
const bit<8> GEN_PAUSE_REFRESH = 4;

/* BCN header flag bits. */
const bit<4> BCN_FLAG_SEVERE   = 0x1;
const bit<4> BCN_FLAG_POSITIVE = 0x2;

/* v1model instance_type values as simple_switch defines them. */
const bit<32> INSTANCE_INGRESS_CLONE = 1;
const bit<32> INSTANCE_EGRESS_CLONE  = 2;
const bit<32> INSTANCE_REPLICATION   = 5;

struct metadata_t {
    /* switch_config */
    @field_list(GEN_FIELD_LIST)
    bit<16> switch_id;
    bit<32> pool_bytes;
    bit<32> port_session_base;
    bit<32> all_ports_session;

    /* forwarding and class */
    bit<1>  unicast;
    bit<1>  routed;
    bit<1>  ecn_marked;
    bit<6>  dscp;
    queue_t queue;
    port_t  out_port;

    /* buffer accounting: bytes added at ingress, removed at egress */
    bit<32> acct_bytes;
    bit<32> port_index;
    bit<32> queue_index;
    bit<32> pool_used;
    bit<32> port_used;
    bit<32> queue_used;
    bit<32> port_left;
    bit<32> queue_left;

    /* BCN congestion point parameters (bcn_config) and sample */
    bit<1>  bcn_enabled;
    bit<32> bcn_qeq_pages;
    bit<8>  bcn_w;
    bit<32> bcn_qsc_pages;
    bit<32> bcn_sample_bytes;
    bit<32> bcn_jitter_bytes;
    /* What the congestion point puts in its feedback (bcn_feedback) */
    bit<1>  bcn_positive_any;
    bit<32> bcn_qoff_max_pages;
    bit<32> bcn_fb_range_pages;
    bit<64> bcn_fb_code_mul;
    bit<64> bcn_fb_step_mul;
    bit<1>  bcn_sampled;
    bit<32> bcn_q_pages;
    bit<32> bcn_qold_pages;

    /* flow control of the egress port's buffer (pause_config): unit
     * PAUSE_UNIT_LINK for 802.3x, the frame's class for PFC */
    bit<1>  pause_enabled;
    bit<4>  pause_unit;
    bit<32> pause_xoff_bytes;
    bit<32> pause_xon_bytes;
    bit<16> pause_quanta;
    bit<48> pause_refresh_us;

    /* generated frame, carried into the clone */
    @field_list(GEN_FIELD_LIST)
    bit<8>  gen_kind;
    @field_list(GEN_FIELD_LIST)
    port_t  gen_cp_port;
    @field_list(GEN_FIELD_LIST)
    queue_t gen_cp_queue;
    @field_list(GEN_FIELD_LIST)
    bit<4>  gen_flags;
    @field_list(GEN_FIELD_LIST)
    int<16> gen_qoff;
    @field_list(GEN_FIELD_LIST)
    int<16> gen_qdelta;
    @field_list(GEN_FIELD_LIST)
    int<32> gen_fb;
    @field_list(GEN_FIELD_LIST)
    bit<32> gen_timestamp;
    @field_list(GEN_FIELD_LIST)
    bit<16> gen_quanta;
    @field_list(GEN_FIELD_LIST)
    bit<4>  gen_pause_unit;
}

/* The helpers below are macros rather than P4 functions so that every
 * v1model compiler takes them, whether or not it inlines functions.
 * Arguments must be plain field references. */

/* A switch port's MAC, 02:bf:SS:SS:00:PP (switch id bit<16>, port bit<9>). */
#define PORT_MAC(switch_id, port) (16w0x02bf ++ (switch_id) ++ 8w0 ++ (port)[7:0])

/* Flow-control units of a port: 0..7 are PFC priorities, 8 the whole
 * link (802.3x). Their state lives at index port * 16 + unit. */
const bit<4> PAUSE_UNIT_LINK = 8;
#define PAUSE_SLOT(port, unit) (((bit<32>)(port) << 4) | (bit<32>)(unit))

/* Register index of an egress queue: port * 8 + queue. */
#define QUEUE_SLOT(port, queue) (((bit<32>)(port) << 3) | (bit<32>)(queue))

/* A multicast copy headed back out of the port the frame came in on:
 * flooding uses one all-ports group and prunes these in egress. */
#define FLOOD_ECHO(sm) ((sm).instance_type == INSTANCE_REPLICATION \
                        && (sm).egress_port == (sm).ingress_port)

#endif
