/*
 * The TNA port's headers and metadata. Frame formats are the v1model
 * program's own (../../include/headers.p4: Ethernet, RLT, IPv4, IPv6, UDP,
 * data header, telemetry block, BCN); what is new is what crosses the
 * traffic manager: a bridged header from the ingress deparser to the egress
 * parser, and the mirror header an E2E mirrored copy carries when it is to
 * become a BCN frame. Their first byte (pkt_kind) tells the egress parser
 * which one it is.
 */
#ifndef BUFFERLAB_TNA_HEADERS_P4
#define BUFFERLAB_TNA_HEADERS_P4

#include "../../include/headers.p4"

/* What the egress parser finds after egress intrinsic metadata. */
const bit<8> PKT_BRIDGED = 0;   /* a normal frame, bridged_h in front */
const bit<8> PKT_BCN_COPY = 1;  /* an E2E mirror copy to rewrite into BCN */

/* BCN header flag bits (as in the v1model program). */
const bit<4> BCN_FLAG_SEVERE   = 0x1;
const bit<4> BCN_FLAG_POSITIVE = 0x2;

/* Mirror type of the BCN copy (egress deparser, eg_dprsr_md.mirror_type). */
const MirrorType_t MIRROR_TYPE_BCN = 1;

/* A TM cell: 80 bytes on Tofino 1, 176 on Tofino 2 (queue depths count cells). */
#if __TARGET_TOFINO__ == 2
#define CELL_BYTES 176
#else
#define CELL_BYTES 80
#endif

/* Indexed state and counters: port*8 + queue, as in the v1model program. */
#define PORT_COUNT  512
#define QUEUE_COUNT 4096
typedef bit<12> queue_slot_t;
typedef bit<9>  port_slot_t;

/* Ingress to egress through the TM. */
header bridged_h {
    bit<8>   pkt_kind;
    bit<16>  switch_id;
    @padding bit<7> _pad0;
    PortId_t ingress_port;
    bit<16>  port_session_base;
    bit<48>  ingress_tstamp;   /* ns, ig_intr_md.ingress_mac_tstamp */
    @padding bit<5> _pad1;
    queue_t  queue;
    @padding bit<7> _pad2;
    bit<1>   flooded;          /* a multicast copy: not sampled, echo pruned */
}

/* In front of the E2E copy of a sampled frame: everything the BCN header
 * needs, computed by the congestion point. */
header bcn_mirror_h {
    bit<8>   pkt_kind;
    bit<16>  switch_id;
    @padding bit<7> _pad0;
    PortId_t cp_port;
    @padding bit<5> _pad1;
    queue_t  cp_queue;
    @padding bit<4> _pad2;
    bit<4>   flags;
    int<16>  qoff;
    int<16>  qdelta;
    int<32>  fb;
    bit<32>  timestamp;        /* low 32 bits of the sampled frame's ingress timestamp, ns */
    bit<16>  frame_len;        /* bytes of the sampled frame */
}

/* Both gresses parse the frame with one sub-parser, so they share one
 * header struct: ingress makes `bridged` valid, egress parses it (or the
 * BCN copy's mirror header into metadata) and makes gen_ethernet and bcn
 * valid in front of a sample; neither emits what belongs to the other. */
struct switch_headers_t {
    bridged_h      bridged;
    gen_ethernet_t gen_ethernet;
    bcn_t          bcn;
    ethernet_t     ethernet;
    rlt_t          rlt;
    ipv4_t         ipv4;
    ipv6_t         ipv6;
    udp_t          udp;
    data_t         data;
    telemetry_t    telemetry;
}

/* The BCN congestion point's working fields, in the metadata of the gress that
 * runs it (egress on TNA, ingress in the T2NA variant). The caller turns the
 * queue depth in cells into pages in q_part*, q_pages; the rest is bcn.p4's. */
struct bcn_cp_t {
    bcn_mirror_h mirror;        /* what the BCN frame will say; parsed back from a copy */
    MirrorId_t   session;       /* the mirror session back to the sample's source */
    bit<1>   send;

    /* queue depth in cells to 64-byte pages (CellsToPages) */
    bit<32>  q_cells;
    bit<32>  q_part0;
    bit<32>  q_part1;
    bit<32>  q_part2;
    bit<32>  q_sum;
    bit<32>  q_pages;

    /* bcn_config */
    bit<1>   enabled;
    bit<32>  qeq_pages;
    bit<8>   w;
    bit<32>  qsc_pages;
    bit<32>  sample_bytes;
    bit<32>  jitter_bytes;
    /* bcn_feedback */
    int<32>  qoff_max;          /* Fb's Qoff term saturates at +-this (0: off) */
    bit<1>   positive_any;
    bit<32>  fb_range_pages;    /* 0: Fb unquantised */

    bit<32>  base;              /* S - 2^k, 2^k the largest power of two <= J */
    bit<32>  random;            /* a draw of k + 1 bits */
    bit<32>  reload;            /* next byte budget: S - 2^k .. S + 2^k - 1 */
    bit<1>   sampled;
    bit<32>  qold_pages;
    int<32>  qoff;
    int<32>  minus_cap;
    int<32>  qoff_term;
    int<32>  minus_qoff;
    int<32>  qdelta;
    int<32>  wq;                /* W * Qdelta, W a power of two */
    int<32>  fb;
    bit<32>  severe_diff;       /* Qsc |-| Q: 0 when Q >= Qsc */
    bit<32>  cpid_hi;           /* rlt.cpid's halves xor this congestion point's */
    bit<32>  cpid_own;          /* port ++ queue, the cpid's low half */
    bit<32>  cpid_lo;
    bit<32>  cpid_diff;         /* 0 when the RLT names this congestion point */
}

struct ig_metadata_t {
    bool     checksum_ok;      /* the IPv4 header checksum verified (or no IPv4) */
    bit<6>   dscp;
    queue_t  queue;
    bit<1>   unicast;
    bit<1>   routed;
    bit<1>   discard;
    bit<3>   discard_reason;
    bit<8>   ttl_in;
    bit<16>  switch_id;
    bit<16>  port_session_base;
#ifdef BUFFER_SWITCH_T2NA
    /* the T2NA variant's congestion point, on arrivals */
    bcn_cp_t     bcn;
    bit<11>      ghost_qid;     /* the TM's id of the frame's queue (ghost_queue) */
    bit<1>       ghost_known;
    queue_slot_t slot;
    bit<32>      frame_bytes;
#endif
}

struct eg_metadata_t {
    bcn_cp_t     bcn;           /* the congestion point (TNA), or a BCN copy's mirror header */
    queue_slot_t slot;          /* egress port*8 + queue */
    bit<32>      frame_bytes;

    /* ECN: queue depth in bytes from cells (CELL_BYTES) */
    bit<1>   ecn_on;
    bit<32>  ecn_k_bytes;
    bit<32>  q_part0;           /* enq_qdepth shifted: the cell size's binary digits */
    bit<32>  q_part1;
    bit<32>  q_part2;
    bit<32>  q_sum;
    bit<32>  q_bytes;           /* enq_qdepth * CELL_BYTES */
    bit<32>  over_k;            /* q_bytes |-| k_bytes: 0 when q_bytes <= k */
    bit<1>   ecn_marked;
}

/* A switch port's MAC, 02:bf:SS:SS:00:PP (as in the v1model program). */
#define PORT_MAC(switch_id, port) (16w0x02bf ++ (switch_id) ++ 8w0 ++ (port)[7:0])

/* Counter and register index of an egress queue: port * 8 + queue. */
#define QUEUE_SLOT(port, queue) ((port) ++ (queue))

#endif
