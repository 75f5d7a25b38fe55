/*
 * Switch-wide parameters: a keyless table whose default action the
 * controller rewrites, so nothing here needs a recompile.
 */
#ifndef BUFFERLAB_SWITCH_CONFIG_P4
#define BUFFERLAB_SWITCH_CONFIG_P4

#include "metadata.p4"

control SwitchConfig(inout metadata_t meta) {
    /* pool_bytes: shared egress buffer size (bytes). Clone session of
     * port p is port_session_base + p; all_ports_session clones to the
     * multicast group of all ports (XON and PAUSE refresh). */
    @name(".set_switch")
    action set_switch(bit<16> switch_id, bit<32> pool_bytes,
                      bit<32> port_session_base, bit<32> all_ports_session) {
        meta.switch_id = switch_id;
        meta.pool_bytes = pool_bytes;
        meta.port_session_base = port_session_base;
        meta.all_ports_session = all_ports_session;
    }

    @name(".switch_config")
    table switch_config {
        actions = { set_switch; }
        default_action = set_switch(0, 1048576, 1, 511);
    }

    apply {
        switch_config.apply();
    }
}

#endif
