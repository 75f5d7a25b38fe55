// Calls on the skipped side of `&&`, `||` and `?:`, and calls in arguments, on the control
// side (issue 30, item 2's class): in a table key, in the arguments of a sub-control, of a
// direct action call and of an action a table's action list binds, and in a
// `switch (t.apply().action_run)` case.
// Each runs only when P4 evaluates it, once. `bump` counts its calls in `calls`.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> calls; bit<8> key_r; bit<8> sub_r; bit<8> act_r; bit<8> sw_r; bit<8> tb_r; }
struct hs { h_t h; }
struct ms { }
bool bump(inout bit<8> c) { c = c + 1; return true; }
bit<8> bump8(inout bit<8> c, in bit<8> v) { c = c + 1; return v; }
control Sub(inout hs hdr, in bit<8> v) {
    apply {
        // Read twice: the argument's call ran once, at the call.
        hdr.h.sub_r = v;
        hdr.h.sub_r = hdr.h.sub_r + v;
    }
}
control I(inout hs hdr, inout ms meta, inout standard_metadata_t sm) {
    Sub() sub;
    action hit_key() { hdr.h.key_r = 1; }
    action miss_key() { hdr.h.key_r = 2; }
    table by_flag {
        key = { (hdr.h.a == 1 || bump(hdr.h.calls)) : exact @name("flag"); }
        actions = { hit_key; miss_key; }
        const entries = { true : hit_key(); }
        default_action = miss_key();
    }
    action twice(bit<8> v) { hdr.h.act_r = v; hdr.h.act_r = hdr.h.act_r + v; }
    action first() { }
    action second() { }
    table pick {
        key = { hdr.h.a : exact; }
        actions = { first; second; }
        const entries = { 2 : first(); 3 : second(); }
        default_action = second();
    }
    action twice_bound(in bit<8> v) { hdr.h.tb_r = v; hdr.h.tb_r = hdr.h.tb_r + v; }
    table bound {
        actions = { twice_bound(hdr.h.a == 2 ? bump8(hdr.h.calls, 8w7) : 8w1); }
        default_action = twice_bound(hdr.h.a == 2 ? bump8(hdr.h.calls, 8w7) : 8w1);
    }
    apply {
        sm.egress_spec = 1;
        by_flag.apply();
        sub.apply(hdr, hdr.h.a == 2 ? bump8(hdr.h.calls, 8w3) : 8w5);
        twice(hdr.h.a == 3 ? bump8(hdr.h.calls, 8w4) : 8w6);
        switch (pick.apply().action_run) {
            first: { hdr.h.sw_r = (hdr.h.a == 9 && bump(hdr.h.calls)) ? 8w1 : 8w2; }
            second: { hdr.h.sw_r = (hdr.h.a == 3 || bump(hdr.h.calls)) ? 8w3 : 8w4; }
        }
        // The bound argument is evaluated once, when the action runs.
        bound.apply();
    }
}
parser P(packet_in pkt, out hs hdr, inout ms meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout hs hdr, inout ms meta) { apply { } }
control E(inout hs hdr, inout ms meta, inout standard_metadata_t sm) { apply { } }
control C(inout hs hdr, inout ms meta) { apply { } }
control D(packet_out pkt, in hs hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
