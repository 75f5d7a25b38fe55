/* T2NA stateful ALU forms: a register used as a FIFO (enqueue/dequeue, with
 * overflow and underflow bodies) and another as a stack (push/pop), the cell
 * address (this.address()), a RegisterAction2 returning the value before and
 * after its update, and a MinMaxAction2 returning the smallest masked 8-bit lane
 * of a 128-bit value and the lane's number. The report header says which
 * operation to run (op) on what (arg, lanes, mask) and carries the results. */
#include <core.p4>
#include <t2na.p4>
#include "common.p4"

header report_h {
    bit<8> op;
    bit<32> arg;
    bit<128> lanes;
    bit<16> mask;
    bit<32> out1;
    bit<32> out2;
}

struct stateful_headers_t {
    ethernet_h ethernet;
    ipv4_h ipv4;
    udp_h udp;
    report_h report;
}

parser IgParser(packet_in pkt, out stateful_headers_t hdr, out empty_metadata_t ig_md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            IP_PROTO_UDP: parse_udp;
            default: accept;
        }
    }

    state parse_udp {
        pkt.extract(hdr.udp);
        pkt.extract(hdr.report);
        transition accept;
    }
}

control Ingress(inout stateful_headers_t hdr, inout empty_metadata_t ig_md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<2>>(4) fifo;
    RegisterAction<bit<32>, bit<2>, bit<32>>(fifo) fifo_in = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = hdr.report.arg;
            rv = this.address();
        }
        void overflow(inout bit<32> value, out bit<32> rv) {
            rv = 0xffffffff;
        }
    };
    RegisterAction<bit<32>, bit<2>, bit<32>>(fifo) fifo_out = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
        void underflow(inout bit<32> value, out bit<32> rv) {
            rv = 0xeeeeeeee;
        }
    };

    Register<bit<32>, bit<2>>(2) stack;
    RegisterAction<bit<32>, bit<2>, bit<32>>(stack) stack_push = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = hdr.report.arg;
            rv = this.address();
        }
        void overflow(inout bit<32> value, out bit<32> rv) {
            rv = 0xffffffff;
        }
    };
    RegisterAction<bit<32>, bit<2>, bit<32>>(stack) stack_pop = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
        void underflow(inout bit<32> value, out bit<32> rv) {
            rv = 0xdddddddd;
        }
    };

    Register<bit<32>, bit<4>>(16) counts;
    RegisterAction2<bit<32>, bit<4>, bit<32>, bit<32>>(counts) count_twice = {
        void apply(inout bit<32> value, out bit<32> rv1, out bit<32> rv2) {
            rv1 = value;
            value = value + hdr.report.arg;
            rv2 = value;
        }
    };

    Register<bit<128>, bit<1>>(1) lanes;
    MinMaxAction2<bit<128>, bit<1>, bit<32>, bit<32>>(lanes) smallest = {
        void apply(inout bit<128> value, out bit<32> rv1, out bit<32> rv2) {
            bit<4> lane;
            rv1 = (bit<32>) this.min8(hdr.report.lanes, hdr.report.mask, lane);
            rv2 = (bit<32>) lane;
        }
    };

    apply {
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
        if (hdr.report.isValid()) {
            if (hdr.report.op == 1) {
                hdr.report.out1 = fifo_in.enqueue();
            } else if (hdr.report.op == 2) {
                hdr.report.out1 = fifo_out.dequeue();
            } else if (hdr.report.op == 3) {
                hdr.report.out1 = stack_push.push();
            } else if (hdr.report.op == 4) {
                hdr.report.out1 = stack_pop.pop();
            } else if (hdr.report.op == 5) {
                hdr.report.out1 = count_twice.execute(hdr.report.arg[3:0], hdr.report.out2);
            } else if (hdr.report.op == 6) {
                hdr.report.out1 = smallest.execute(0, hdr.report.out2);
            }
        }
    }
}

control IgDeparser(packet_out pkt, inout stateful_headers_t hdr, in empty_metadata_t ig_md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out stateful_headers_t hdr, out empty_metadata_t eg_md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control Egress(inout stateful_headers_t hdr, inout empty_metadata_t eg_md,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control EgDeparser(packet_out pkt, inout stateful_headers_t hdr, in empty_metadata_t eg_md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe;

Switch(pipe) main;
