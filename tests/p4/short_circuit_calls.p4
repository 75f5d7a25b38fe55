// && and || whose right operand calls a function with a side effect (the call runs only
// when the left operand does not decide the result), and ?: with calls in both branches
// (only the chosen one runs).
#include <core.p4>
#include <v1model.p4>

header probe_t {
    bit<8> kind;
    bit<8> calls;
    bit<8> result;
    bit<8> picks;
}

struct headers_t { probe_t probe; }
struct metadata_t { }

bool count_call(inout bit<8> calls) {
    calls = calls + 1;
    return true;
}

bit<8> pick(inout bit<8> picks, in bit<8> mark) {
    picks = picks | mark;
    return mark;
}

parser ScParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.probe);
        transition accept;
    }
}

control ScVerifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control ScIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
        if (hdr.probe.kind == 1 && count_call(hdr.probe.calls)) {
            hdr.probe.result = 0xaa;
        }
        if (hdr.probe.kind == 1 || count_call(hdr.probe.calls)) {
            hdr.probe.result = hdr.probe.result + 1;
        }
        hdr.probe.result = hdr.probe.result + (hdr.probe.kind == 1 ? pick(hdr.probe.picks, 0x10)
                                                                  : pick(hdr.probe.picks, 0x20));
    }
}

control ScEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control ScComputeChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }

control ScDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.probe);
    }
}

V1Switch(ScParser(), ScVerifyChecksum(), ScIngress(), ScEgress(),
         ScComputeChecksum(), ScDeparser()) main;
