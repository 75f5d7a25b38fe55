/* The lab program itself (p4src/buffer_switch.p4), for its STF cases:
 * tests/stf/buffer_switch.<concern>.stf. */
#include "../../p4src/buffer_switch.p4"
