/*
 * buffer_switch for Tofino (TNA): the lab's switch ported from the v1model
 * program (../buffer_switch.p4). The same controller-facing tables, actions
 * and parameters where the hardware allows (switch_config, dscp_class,
 * ipv4_lpm, l2_forward, ecn_threshold, bcn_config; counters and bcn_last_fb
 * by the same names); what Tofino's traffic manager does itself - the shared
 * pool, dynamic thresholds and tail drop (buffer_threshold,
 * queue_threshold), PAUSE/PFC and headroom (pause_config) - the controller
 * sets as TM configuration from the same config keys. The BCN congestion
 * point runs in egress on the TM's queue depth, with one RegisterAction per
 * register per packet, and its feedback is an E2E mirror copy of the
 * sampled frame rewritten into a BCN frame. Table by table, what is P4 and
 * what is TM on each target: p4src/README.md. Compile and check it with
 *   bufferlab-p4c p4src/tna/buffer_switch.p4 -o build/tna/
 *   bufferlab-p4c --arch tna --fit-report p4src/tna/buffer_switch.p4
 */
#include <core.p4>
#include <tna.p4>

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
         SwitchEgressDeparser()) pipe;

Switch(pipe) main;
