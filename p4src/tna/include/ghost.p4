/*
 * Tofino 2's ghost thread (T2NA variant only): the TM reports each queue's
 * length in cells as it changes, and the ghost control keeps it in
 * queue_cells, indexed by the TM's queue id. Ingress, which shares the
 * register, reads the length of the queue a frame is about to join: what
 * Tofino 1 shows only in egress. The TM numbers queues itself, so the
 * controller tells ingress which id each (egress port, queue) has
 * (ghost_queue, from the TM configuration); a queue it has not mapped
 * reads as empty.
 */
#ifndef BUFFERLAB_TNA_GHOST_P4
#define BUFFERLAB_TNA_GHOST_P4

#include "headers.p4"

@name(".queue_cells")
Register<bit<32>, bit<11>>(2048, 0) queue_cells;

control SwitchGhost(in ghost_intrinsic_metadata_t gh_intr_md) {
    RegisterAction<bit<32>, bit<11>, bit<32>>(queue_cells) store_length = {
        void apply(inout bit<32> cells) {
            cells = (bit<32>)gh_intr_md.qlength;
        }
    };

    apply {
        store_length.execute(gh_intr_md.qid);
    }
}

/* The cells queued in the frame's (egress port, queue), into ig_md.bcn.q_cells. */
control QueueDepth(inout ig_metadata_t ig_md, in PortId_t port) {
    RegisterAction<bit<32>, bit<11>, bit<32>>(queue_cells) read_length = {
        void apply(inout bit<32> cells, out bit<32> rv) {
            rv = cells;
        }
    };

    @name(".set_ghost_queue")
    action set_ghost_queue(bit<11> qid) {
        ig_md.ghost_qid = qid;
        ig_md.ghost_known = 1;
    }

    @name(".ghost_unknown")
    action ghost_unknown() {
        ig_md.ghost_known = 0;
    }

    @name(".ghost_queue")
    table ghost_queue {
        key = {
            port: exact @name("port");
            ig_md.queue: exact @name("queue");
        }
        actions = { set_ghost_queue; ghost_unknown; }
        default_action = ghost_unknown();
        size = QUEUE_COUNT;
    }

    apply {
        ig_md.bcn.q_cells = 0;
        ghost_queue.apply();
        if (ig_md.ghost_known == 1) {
            ig_md.bcn.q_cells = read_length.execute(ig_md.ghost_qid);
        }
    }
}

#endif
