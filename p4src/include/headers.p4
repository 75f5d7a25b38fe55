/*
 * bufferlab frame formats (all fields big-endian, see p4src/README.md).
 * Standard headers (Ethernet, IPv4, UDP, MAC Control) plus bufferlab's
 * own: the generator data header, the probe telemetry block, the BCN
 * feedback header and the rate-limiter tag (RLT).
 */
#ifndef BUFFERLAB_HEADERS_P4
#define BUFFERLAB_HEADERS_P4

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
typedef bit<9>  port_t;
typedef bit<3>  queue_t;

const bit<16> ETHERTYPE_IPV4        = 0x0800;
const bit<16> ETHERTYPE_IPV6        = 0x86DD;
const bit<16> ETHERTYPE_MAC_CONTROL = 0x8808;
const bit<16> ETHERTYPE_BCN         = 0x88B5;
const bit<16> ETHERTYPE_RLT         = 0x88B6;
const bit<8>  IP_PROTO_UDP          = 17;
const bit<16> UDP_PORT_PROBE        = 47000;
const bit<16> DATA_MAGIC            = 0xB1AB;

/* 802.3x PAUSE goes to the reserved MAC Control group address, which
 * 802.1D bridges never forward. */
const mac_addr_t MAC_CONTROL_DA     = 0x0180C2000001;
const bit<16> MAC_CONTROL_OP_PAUSE  = 0x0001;
const bit<16> MAC_CONTROL_OP_PFC    = 0x0101;

header ethernet_t {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

/* Rate-limiter tag, inserted by a BCN reaction point right after the
 * source MAC; ethernet.ether_type is then 0x88B6 and the original
 * EtherType follows the CPID. */
header rlt_t {
    bit<64> cpid;
    bit<16> ether_type;
}

header ipv4_t {
    bit<4>      version;
    bit<4>      ihl;
    bit<8>      diffserv;
    bit<16>     total_len;
    bit<16>     identification;
    bit<3>      flags;
    bit<13>     frag_offset;
    bit<8>      ttl;
    bit<8>      protocol;
    bit<16>     hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

/* Fixed IPv6 header: parsed so ECN marking reaches IPv6 too. */
header ipv6_t {
    bit<4>   version;
    bit<8>   traffic_class;
    bit<20>  flow_label;
    bit<16>  payload_len;
    bit<8>   next_hdr;
    bit<8>   hop_limit;
    bit<128> src_addr;
    bit<128> dst_addr;
}

header udp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

/* First 16 bytes of the UDP payload of every generator frame. */
header data_t {
    bit<16> magic;
    bit<16> flow;
    bit<32> seq;
    bit<64> tx_ns;
}

/* 48-byte block after the data header of a probe, overwritten in place. */
header telemetry_t {
    bit<8>  tel_flags;
    bit<8>  qid;
    bit<16> ingress_port;
    bit<16> egress_port;
    bit<16> switch_id;
    bit<64> ingress_global_ts;
    bit<64> egress_global_ts;
    bit<32> enq_timestamp;
    bit<32> deq_timedelta;
    bit<32> enq_qdepth;
    bit<32> deq_qdepth;
    bit<32> pool_occupancy;
    bit<32> port_occupancy;
}

/* Outer Ethernet header of a frame the switch generates (BCN, PAUSE, PFC). */
header gen_ethernet_t {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

/* 24-byte BCN header; qoff, qdelta and fb count 64-byte pages. */
header bcn_t {
    bit<4>  version;
    bit<4>  flags;
    bit<8>  reserved;
    bit<64> cpid;
    int<16> qoff;
    int<16> qdelta;
    int<32> fb;
    bit<32> timestamp;
    bit<16> sample_len;
}

header mac_control_t {
    bit<16> opcode;
}

/* 802.3x PAUSE parameter: quanta of 512 bit times, 0 means XON. */
header pause_t {
    bit<16> quanta;
}

/* 802.1Qbb PFC parameters: class-enable vector (bit i = priority i) and
 * one pause time per priority, in quanta of 512 bit times. */
header pfc_t {
    bit<16> class_enable;
    bit<16> time0;
    bit<16> time1;
    bit<16> time2;
    bit<16> time3;
    bit<16> time4;
    bit<16> time5;
    bit<16> time6;
    bit<16> time7;
}

/* Reserved zero bytes (42) that bring a PAUSE frame to 60 bytes; split
 * into fields of at most 128 bits, which every software target handles. */
header pause_pad_t {
    bit<128> zero0;
    bit<128> zero1;
    bit<80>  zero2;
}

/* Reserved zero bytes (26) that bring a PFC frame to 60 bytes. */
header pfc_pad_t {
    bit<128> zero0;
    bit<80>  zero1;
}

struct headers_t {
    gen_ethernet_t gen_ethernet;
    bcn_t          bcn;
    mac_control_t  mac_control;
    pause_t        pause;
    pfc_t          pfc;
    pause_pad_t    pause_pad;
    pfc_pad_t      pfc_pad;
    ethernet_t     ethernet;
    rlt_t          rlt;
    ipv4_t         ipv4;
    ipv6_t         ipv6;
    udp_t          udp;
    data_t         data;
    telemetry_t    telemetry;
}

#endif
