/*
 * Solution of the bcn_congestion_point exercise on Tofino (TNA; make check PROGRAM=tna).
 * The answer is the lab's own Tofino port, p4src/tna/include/bcn.p4: BcnCongestionPoint
 * (the sampling countdown and the Qold swap as one RegisterAction each, Q from the TM's
 * deq_qdepth in cells turned into pages, W * Qdelta as a shift, the decision and the
 * mirror header) and BcnFrame (the E2E mirror copy rewritten into the BCN frame). Read it
 * there and compare it with yours. This program is the lab's Tofino switch itself, built
 * from that file and the rest of p4src/tna/include, so it passes the exercise's check as
 * the switch the Tofino runs of the experiments use.
 */
#include "../../../p4src/tna/buffer_switch.p4"
