/* TNA MultiParserSwitch: two ingress parsers for one pipe (chosen per port by the
 * control plane) and the parser externs: Checksum residual, ParserCounter,
 * ParserPriority. */
#include <core.p4>
#include <tna.p4>
header ethernet_h { bit<48> dst; bit<48> src; bit<16> ether_type; }
header vlan_h { bit<16> tci; bit<16> ether_type; }
struct headers_t { ethernet_h ethernet; vlan_h vlan; }
struct md_t { bit<16> residual; bit<8> prio; }
parser PlainParser(packet_in pkt, out headers_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig_intr_md) {
    Checksum() ck;
    ParserCounter() pc;
    ParserPriority() pp;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        ck.subtract({hdr.ethernet.ether_type});
        ck.subtract_all_and_deposit(md.residual);
        pc.set(hdr.ethernet.ether_type[7:0]);
        pc.decrement(2);
        pp.set(3);
        transition select(pc.is_zero()) { true: accept; false: parse_vlan; }
    }
    state parse_vlan { pkt.extract(hdr.vlan); transition accept; }
}
parser VlanParser(packet_in pkt, out headers_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start { pkt.extract(ig_intr_md); pkt.advance(PORT_METADATA_SIZE); pkt.extract(hdr.ethernet); pkt.extract(hdr.vlan); transition accept; }
}
control Ig(inout headers_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port; }
}
control IgDep(packet_out pkt, inout headers_t hdr, in md_t md) { apply { pkt.emit(hdr); } }
parser EgP(packet_in pkt, out headers_t hdr, out md_t md, out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}
control Eg(inout headers_t hdr, inout md_t md) { apply { } }
control EgDep(packet_out pkt, inout headers_t hdr, in md_t md) { apply { pkt.emit(hdr); } }
IngressParsers(PlainParser(), VlanParser()) ig_parsers;
EgressParsers(EgP()) eg_parsers;
MultiParserPipeline(ig_parsers, Ig(), IgDep(), eg_parsers, Eg(), EgDep()) pipe;
MultiParserSwitch(pipe) main;
