/*
 * Deparser and checksum update. Generated frames put gen_ethernet (and
 * the BCN header or the MAC Control body) in front; a BCN frame keeps the
 * sampled frame's own headers behind its header, exactly as received.
 */
#ifndef BUFFERLAB_DEPARSER_P4
#define BUFFERLAB_DEPARSER_P4

#include "metadata.p4"

control BufferDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.gen_ethernet);
        packet.emit(hdr.bcn);
        packet.emit(hdr.mac_control);
        packet.emit(hdr.pause);
        packet.emit(hdr.pfc);
        packet.emit(hdr.pause_pad);
        packet.emit(hdr.pfc_pad);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.rlt);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.ipv6);
        packet.emit(hdr.udp);
        packet.emit(hdr.data);
        packet.emit(hdr.telemetry);
    }
}

/* Only routed frames (TTL) and frames marked CE changed their IPv4 header;
 * a BCN sample must stay byte-exact, so nothing else is recomputed. */
control BufferComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid() && (meta.routed == 1 || meta.ecn_marked == 1),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv,
              hdr.ipv4.total_len, hdr.ipv4.identification,
              hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

#endif
