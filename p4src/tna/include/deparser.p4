/*
 * Deparsers. Ingress emits the bridged header in front of the frame and
 * recomputes the IPv4 checksum of routed frames (TTL); egress emits a BCN
 * frame's Ethernet and BCN headers in front of the sample, recomputes the
 * checksum of CE-marked IPv4 frames only (a BCN sample stays byte-exact
 * otherwise), and sends the BCN copy to its mirror session.
 */
#ifndef BUFFERLAB_TNA_DEPARSER_P4
#define BUFFERLAB_TNA_DEPARSER_P4

#include "headers.p4"

control SwitchIngressDeparser(packet_out pkt,
                              inout switch_headers_t hdr,
                              in ig_metadata_t ig_md,
                              in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ipv4_checksum;
#ifdef BUFFER_SWITCH_T2NA
    Mirror(MIRROR_TYPE_BCN) bcn_mirror;
#endif

    apply {
#ifdef BUFFER_SWITCH_T2NA
        /* I2E: the sample is the frame as it came in. */
        if (ig_dprsr_md.mirror_type == MIRROR_TYPE_BCN) {
            bcn_mirror.emit<bcn_mirror_h>(ig_md.bcn.session, ig_md.bcn.mirror);
        }
#endif
        if (ig_md.routed == 1) {
            hdr.ipv4.hdr_checksum = ipv4_checksum.update({
                hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv,
                hdr.ipv4.total_len, hdr.ipv4.identification,
                hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
                hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr });
        }
        pkt.emit(hdr.bridged);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.rlt);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.ipv6);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.data);
        pkt.emit(hdr.telemetry);
    }
}

control SwitchEgressDeparser(packet_out pkt,
                             inout switch_headers_t hdr,
                             in eg_metadata_t eg_md,
                             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_checksum;
    Mirror(MIRROR_TYPE_BCN) bcn_mirror;

    apply {
        if (eg_dprsr_md.mirror_type == MIRROR_TYPE_BCN) {
            bcn_mirror.emit<bcn_mirror_h>(eg_md.bcn.session, eg_md.bcn.mirror);
        }
        if (eg_md.ecn_marked == 1) {
            hdr.ipv4.hdr_checksum = ipv4_checksum.update({
                hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv,
                hdr.ipv4.total_len, hdr.ipv4.identification,
                hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
                hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr });
        }
        pkt.emit(hdr.gen_ethernet);
        pkt.emit(hdr.bcn);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.rlt);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.ipv6);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.data);
        pkt.emit(hdr.telemetry);
    }
}

#endif
