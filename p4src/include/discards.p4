/*
 * Why ingress discarded a frame: one counter cell per reason, so an
 * operator can tell runts from received PAUSE frames from routing drops.
 */
#ifndef BUFFERLAB_DISCARDS_P4
#define BUFFERLAB_DISCARDS_P4

const bit<32> DISCARD_RUNT         = 0; /* no complete Ethernet header */
const bit<32> DISCARD_MAC_CONTROL  = 1; /* 802.3x PAUSE / PFC received: never forwarded */
const bit<32> DISCARD_BAD_CHECKSUM = 2; /* routed IPv4 with a wrong header checksum */
const bit<32> DISCARD_TTL_EXPIRED  = 3; /* routed IPv4 with TTL <= 1 */
const bit<32> DISCARD_FORWARDING   = 4; /* drop action of l2_forward / ipv4_lpm */

@name(".ingress_discards")
counter(8, CounterType.packets_and_bytes) ingress_discards;

#endif
