/*
 * buffer_switch for Tofino 2 (T2NA): the TNA port (buffer_switch.p4) with
 * what Tofino 2 adds. Its ghost thread keeps every queue's length where
 * ingress can read it, so the BCN congestion point runs on arrivals, as in
 * the v1model program (every unicast arrival counts, dropped or not; Q is the
 * queue the frame joins), and the sample is an I2E mirror of the frame as it
 * came in. Everything else, tables, names and units (176-byte cells), is the
 * TNA port's; ghost_queue is its one extra table (the TM's queue ids).
 *   bufferlab-p4c p4src/tna/buffer_switch_t2na.p4 -o build/t2na/
 *   bufferlab-p4c --fit-report p4src/tna/buffer_switch_t2na.p4
 */
#include <core.p4>
#include <t2na.p4>

#define BUFFER_SWITCH_T2NA 1

#include "include/headers.p4"
#include "include/parser.p4"
#include "include/ingress.p4"
#include "include/egress.p4"
#include "include/deparser.p4"

Pipeline(SwitchIngressParser(),
         SwitchIngress(),
         SwitchIngressDeparser(),
         SwitchEgressParser(),
         SwitchEgress(),
         SwitchEgressDeparser(),
         SwitchGhost()) pipe;

Switch(pipe) main;
