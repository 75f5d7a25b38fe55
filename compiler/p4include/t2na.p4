/* bufferlab: the Tofino 2 Native Architecture (T2NA).
 *
 * `#include <t2na.p4>` selects it (bufferlab-p4c then compiles with
 * --arch t2na --target tofino2, __TARGET_TOFINO__ == 2). Beside TNA's blocks
 * it has the ghost thread, RegisterAction2..4, MinMaxAction, LearnAction,
 * the Pktgen extern and more deparser metadata. */

#ifndef BUFFERLAB_T2NA
#define BUFFERLAB_T2NA

#if defined(__TARGET_TOFINO__) && __TARGET_TOFINO__ != 2
#error t2na.p4 is Tofino 2's architecture: compile with --arch t2na (or --target tofino2)
#endif

#include "tofino2_specs.p4"
#include "tofino2_arch.p4"

#endif
