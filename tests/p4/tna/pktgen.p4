/* Tofino's packet generator feeding a TNA program: packets entering on pipe 0's
 * generator port (68) carry pktgen_timer_header_t (app, batch and packet numbers),
 * which the program keeps and sends out of port 1; anything else goes to port 2. */
#include <core.p4>
#include <tna.p4>

const PortId_t PKTGEN_PORT = 68;

struct headers_t {
    pktgen_timer_header_t timer;
}

struct empty_t { }

parser IgParser(packet_in pkt, out headers_t hdr, out empty_t ig_md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition select(ig_intr_md.ingress_port) {
            PKTGEN_PORT: parse_timer;
            default: accept;
        }
    }

    state parse_timer {
        pkt.extract(hdr.timer);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout empty_t ig_md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        if (hdr.timer.isValid()) {
            ig_tm_md.ucast_egress_port = 1;
        } else {
            ig_tm_md.ucast_egress_port = 2;
        }
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in empty_t ig_md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out headers_t hdr, out empty_t eg_md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control Egress(inout headers_t hdr, inout empty_t eg_md,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control EgDeparser(packet_out pkt, inout headers_t hdr, in empty_t eg_md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe;

Switch(pipe) main;
