/* bufferlab: the Tofino Native Architecture (TNA).
 *
 * `#include <tna.p4>` selects it (bufferlab-p4c then compiles with
 * --arch tna). __TARGET_TOFINO__ is 1 for Tofino 1 (the default) and 2 when
 * a TNA program is built for Tofino 2 (--target tofino2): the device widths
 * follow the chip, the blocks and externs stay TNA's. */

#ifndef BUFFERLAB_TNA
#define BUFFERLAB_TNA

#if __TARGET_TOFINO__ == 2
#include "tofino2_specs.p4"
#else
#include "tofino1_specs.p4"
#endif

#include "tofino1_arch.p4"

#endif
