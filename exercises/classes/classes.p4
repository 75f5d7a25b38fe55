/*
 * Exercise classes: DSCP classes on priority queues, and a scavenger class.
 *
 * This program is the lab's switch, p4src/buffer_switch.p4, with its
 * traffic classifier left to you: read each IPv4 frame's DSCP and put the
 * frame in the egress queue the controller's dscp_class table names. The
 * switch serves a port's queues in strict priority, highest queue first, so
 * a class in queue 0 only gets what the others leave: a scavenger.
 * README.md says what to write and how to check it.
 */
#include <core.p4>
#include <v1model.p4>
#include "../../p4src/include/metadata.p4"

/* This file stands in for p4src/include/classes.p4. */
#define BUFFERLAB_CLASSES_P4

control Classes(inout headers_t hdr,
                inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    /* The controller's class map calls this with the frame's queue. */
    @name(".set_queue")
    action set_queue(queue_t queue) {
        /* TODO: the traffic manager takes the queue from
         * standard_metadata.priority; the rest of the switch (admission, BCN,
         * PAUSE, counters) reads it from meta.queue. Set both. */
    }

    @name(".dscp_class")
    table dscp_class {
        key = { meta.dscp: exact @name("dscp"); }
        actions = { set_queue; }
        default_action = set_queue(0);
        size = 64;
    }

    apply {
        /* TODO: before the lookup, set meta.dscp: the upper six bits of
         * hdr.ipv4.diffserv for IPv4 frames, 0 for the others. */
        dscp_class.apply();
    }
}

/* The rest of the switch, as the lab has it. */
#include "../../p4src/buffer_switch.p4"
