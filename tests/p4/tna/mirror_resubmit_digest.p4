/* TNA deparser externs: an ingress-to-egress mirror with a mirror header
 * carrying the ingress port and timestamp, a resubmit with a resubmit
 * header the ingress parser reads on the second pass, a MAC-learning digest,
 * and an egress-to-egress mirror; the egress parser tells mirrored copies
 * from normal packets by the bridged/mirror header's first byte. */
#include <core.p4>
#include <tna.p4>
#include "common.p4"

const MirrorType_t MIRROR_TYPE_I2E = 1;
const MirrorType_t MIRROR_TYPE_E2E = 2;
const ResubmitType_t RESUBMIT_TYPE_AGAIN = 1;
const DigestType_t DIGEST_TYPE_LEARN = 1;
const bit<8> PKT_NORMAL = 0;
const bit<8> PKT_MIRRORED = 1;

header resubmit_h {
    bit<8> reason;
    bit<8> pass;
    @padding bit<48> _pad;
}

header mirror_h {
    bit<8> kind;
    @padding bit<7> _pad;
    PortId_t ingress_port;
    bit<48> ingress_tstamp;
}

header bridge_h {
    bit<8> kind;
}

struct ig_headers_t {
    bridge_h bridge;
    ethernet_h ethernet;
    ipv4_h ipv4;
    udp_h udp;
}

struct eg_headers_t {
    ethernet_h ethernet;
}

struct learn_t {
    mac_addr_t src_addr;
    PortId_t port;
}

struct ig_metadata_t {
    resubmit_h resubmit;
    mirror_h mirror;
    MirrorId_t session;
}

struct eg_metadata_t {
    bridge_h bridge;
    mirror_h mirror;
    MirrorId_t session;
}

parser IgParser(packet_in pkt, out ig_headers_t hdr, out ig_metadata_t ig_md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        transition select(ig_intr_md.resubmit_flag) {
            1: parse_resubmit;
            0: parse_port_metadata;
        }
    }

    state parse_resubmit {
        pkt.extract(ig_md.resubmit);
        transition parse_ethernet;
    }

    state parse_port_metadata {
        pkt.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Ingress(inout ig_headers_t hdr, inout ig_metadata_t ig_md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action mirror_to(MirrorId_t session) {
        ig_dprsr_md.mirror_type = MIRROR_TYPE_I2E;
        ig_md.session = session;
        ig_md.mirror.setValid();
        ig_md.mirror.kind = PKT_MIRRORED;
        ig_md.mirror.ingress_port = ig_intr_md.ingress_port;
        ig_md.mirror.ingress_tstamp = ig_intr_md.ingress_mac_tstamp;
    }

    table port_mirror {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { mirror_to; NoAction; }
        default_action = NoAction;
        size = 512;
    }

    action learn() {
        ig_dprsr_md.digest_type = DIGEST_TYPE_LEARN;
    }

    table known_sources {
        key = { hdr.ethernet.src_addr : exact; }
        actions = { NoAction; learn; }
        default_action = learn;
        size = 4096;
    }

    apply {
        ig_tm_md.ucast_egress_port = 1;
        if (ig_intr_md.resubmit_flag == 0 && hdr.ethernet.ether_type == 0x88b5) {
            ig_dprsr_md.resubmit_type = RESUBMIT_TYPE_AGAIN;
            ig_md.resubmit.setValid();
            ig_md.resubmit.reason = 7;
            ig_md.resubmit.pass = 1;
        }
        port_mirror.apply();
        known_sources.apply();
        hdr.bridge.setValid();
        hdr.bridge.kind = PKT_NORMAL;
    }
}

control IgDeparser(packet_out pkt, inout ig_headers_t hdr, in ig_metadata_t ig_md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Mirror(MIRROR_TYPE_I2E) mirror;
    Resubmit(RESUBMIT_TYPE_AGAIN) resubmit;
    Digest<learn_t>(DIGEST_TYPE_LEARN) learn_digest;

    apply {
        if (ig_dprsr_md.mirror_type == MIRROR_TYPE_I2E) {
            mirror.emit<mirror_h>(ig_md.session, ig_md.mirror);
        }
        if (ig_dprsr_md.resubmit_type == RESUBMIT_TYPE_AGAIN) {
            resubmit.emit(ig_md.resubmit);
        }
        if (ig_dprsr_md.digest_type == DIGEST_TYPE_LEARN) {
            learn_digest.pack({hdr.ethernet.src_addr, ig_md.mirror.ingress_port});
        }
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out eg_headers_t hdr, out eg_metadata_t eg_md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition select(pkt.lookahead<bit<8>>()) {
            PKT_MIRRORED: parse_mirror;
            default: parse_bridge;
        }
    }

    state parse_mirror {
        pkt.extract(eg_md.mirror);
        transition parse_ethernet;
    }

    state parse_bridge {
        pkt.extract(eg_md.bridge);
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Egress(inout eg_headers_t hdr, inout eg_metadata_t eg_md,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        if (eg_md.mirror.isValid()) {
            hdr.ethernet.src_addr = (bit<48>) eg_md.mirror.ingress_tstamp;
        } else if (eg_intr_md.deq_qdepth > 1000) {
            eg_dprsr_md.mirror_type = MIRROR_TYPE_E2E;
            eg_md.session = 9;
        }
    }
}

control EgDeparser(packet_out pkt, inout eg_headers_t hdr, in eg_metadata_t eg_md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Mirror(MIRROR_TYPE_E2E) congestion_mirror;

    apply {
        if (eg_dprsr_md.mirror_type == MIRROR_TYPE_E2E) {
            congestion_mirror.emit(eg_md.session);
        }
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe;

Switch(pipe) main;
