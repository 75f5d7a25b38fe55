/*
 * Solution of the pause exercise on Tofino (TNA; make check PROGRAM=tna). On Tofino,
 * PAUSE is not P4: the traffic manager counts each frame against the port it came in on
 * and asks that port's MAC for an 802.3x PAUSE when the port's cells pass its limit, and
 * for XON when they fall below the limit less its hysteresis. The answer is therefore
 * TM configuration, which the controller derives from s1-config.json's pause keys
 * (controller/tofino_mapping.py; `bufferlab-ctl tm s1-config.json` prints it): port 3's
 * XOFF becomes the ingress limit of each port that feeds it (ports 1 and 2), its XON the
 * hysteresis, its quanta the MAC's pause time. This program is the lab's Tofino switch
 * itself, p4src/tna/buffer_switch.p4, which leaves PAUSE to the TM as the hardware does.
 */
#include "../../../p4src/tna/buffer_switch.p4"
