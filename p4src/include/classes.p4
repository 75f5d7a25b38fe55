/*
 * Traffic classes: DSCP -> egress queue. v1model's priority field picks
 * simple_switch's priority queue (0 lowest). With --priority-queues 3 the
 * controller maps QBSS/CS1 (DSCP 8) -> 0, best effort (default) -> 1,
 * AF11 (DSCP 10) -> 2. Non-IPv4 frames classify as DSCP 0.
 */
#ifndef BUFFERLAB_CLASSES_P4
#define BUFFERLAB_CLASSES_P4

#include "metadata.p4"

control Classes(inout headers_t hdr,
                inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    @name(".set_queue")
    action set_queue(queue_t queue) {
        standard_metadata.priority = queue;
        meta.queue = queue;
    }

    /* Default queue 0 so the program also runs on a one-queue switch. */
    @name(".dscp_class")
    table dscp_class {
        key = { meta.dscp: exact @name("dscp"); }
        actions = { set_queue; }
        default_action = set_queue(0);
        size = 64;
    }

    apply {
        if (hdr.ipv4.isValid()) {
            meta.dscp = hdr.ipv4.diffserv[7:2];
        } else {
            meta.dscp = 0;
        }
        dscp_class.apply();
    }
}

#endif
