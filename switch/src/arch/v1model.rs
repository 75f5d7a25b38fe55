//! v1model's walk of a packet through the blocks, as simple_switch does it: parser and
//! ingress (then clone, digest, resubmit, multicast or the egress port), the traffic
//! manager, egress (then clone, recirculate) and the deparser, with the standard
//! metadata the target writes before a block and reads after it.

use bufferlab_tm::Dequeued;

use crate::engine::{instance, two, CloneSession, Engine, MAX_PASSES};
use crate::exec;
use crate::trace_pkt;

impl Engine {
    pub(crate) fn reset_for_pass(&mut self, h: u32, list: u32, itype: u128) {
        let sm = self.main.prog.std;
        exec::save_field_list(
            &self.main.prog,
            &mut self.main.st,
            &self.pool[h as usize],
            list,
        );
        let pkt = &mut self.pool[h as usize];
        pkt.phv.reset(&self.main.prog);
        exec::restore_field_list(&self.main.prog, &self.main.st, pkt, list);
        pkt.phv.set(&self.main.prog, sm.instance_type, itype);
        pkt.phv.set(
            &self.main.prog,
            sm.packet_length,
            u128::from(pkt.ingress_len),
        );
        pkt.cursor = 0;
        pkt.len_reg = i64::from(pkt.ingress_len);
        pkt.flags = Default::default();
        // Another pass is another copy in the trace, as BMv2 makes one for it.
        pkt.copies += 1;
        pkt.copy = pkt.copies;
    }

    pub(crate) fn ingress(&mut self, h: u32, now: u64) {
        loop {
            self.passes[h as usize] += 1;
            if self.passes[h as usize] > MAX_PASSES {
                self.stats.dropped_pass_limit += 1;
                trace_pkt!(
                    self.main.st,
                    self.pool[h as usize],
                    Debug,
                    "Dropping packet: more than {} passes (resubmit/recirculate loop)",
                    MAX_PASSES
                );
                self.release(h);
                return;
            }
            let pkt = &mut self.pool[h as usize];
            pkt.now = now;
            exec::parse(&self.main.prog, &mut self.main.st, pkt);
            exec::run_pipeline(
                &self.main.prog,
                &mut self.main.st,
                pkt,
                &self.main.prog.ingress,
                &self.main.prog.flat.ingress,
            );
            if pkt.flags.assert_failed {
                self.stats.dropped_by_assert += 1;
                trace_pkt!(
                    self.main.st,
                    pkt,
                    Debug,
                    "Dropping packet: assert/assume failed in ingress"
                );
                self.release(h);
                return;
            }
            let flags = pkt.flags;
            if let Some(session) = flags.clone_session {
                trace_pkt!(self.main.st, pkt, Debug, "Cloning packet at ingress");
                self.clone_ingress(h, session, flags.clone_field_list, now);
            }
            if let Some(list) = flags.digest {
                self.digest(0, h, list, now);
            }
            if let Some(list) = flags.resubmit {
                self.stats.resubmitted += 1;
                trace_pkt!(
                    self.main.st,
                    self.pool[h as usize],
                    Debug,
                    "Resubmitting packet"
                );
                self.reset_for_pass(h, list, instance::RESUBMIT);
                continue;
            }
            break;
        }
        let ss = &self.main.prog.std_slots;
        let grp = self.pool[h as usize].phv.read(ss.mcast_grp);
        if grp != 0 {
            trace_pkt!(
                self.main.st,
                self.pool[h as usize],
                Debug,
                "Multicast requested for packet"
            );
            self.replicate(h, grp as u16, instance::REPLICATION, now);
            self.release(h);
            return;
        }
        let spec = self.pool[h as usize].phv.read(ss.egress_spec);
        trace_pkt!(
            self.main.st,
            self.pool[h as usize],
            Debug,
            "Egress port is {}",
            spec
        );
        if spec == u64::from(self.main.st.drop_port) {
            self.stats.dropped_by_program += 1;
            trace_pkt!(
                self.main.st,
                self.pool[h as usize],
                Debug,
                "Dropping packet at the end of ingress"
            );
            self.release(h);
            return;
        }
        self.pool[h as usize]
            .phv
            .put(ss.instance_type, instance::NORMAL as u64);
        self.enqueue(h, spec as u16, now);
    }

    fn clone_ingress(&mut self, h: u32, session: u32, list: u32, now: u64) {
        let Some(cs) = self.sessions.get(&session).copied() else {
            return;
        };
        let sm = self.main.prog.std;
        let port = self.field(h, sm.ingress_port);
        let c = self.begin_clone(h, list);
        let (orig, copy) = two(&mut self.pool, h, c);
        copy.receive(&self.main.prog, &orig.data, now);
        copy.phv.set(&self.main.prog, sm.ingress_port, port);
        // The copy is the packet as it was when ingress started: re-parse it.
        exec::parse(&self.main.prog, &mut self.main.st, copy);
        copy.phv.reset_metadata(&self.main.prog);
        exec::restore_field_list(&self.main.prog, &self.main.st, copy, list);
        copy.phv
            .set(&self.main.prog, sm.instance_type, instance::INGRESS_CLONE);
        copy.phv.set(
            &self.main.prog,
            sm.packet_length,
            u128::from(copy.ingress_len),
        );
        copy.flags.truncate = cs.truncate;
        self.send_to_session(c, cs, instance::INGRESS_CLONE, now);
    }

    /// Counts a clone of packet `h` and allocates its copy, with preservation field
    /// list `list` saved for the copy to restore; the copy's handle.
    fn begin_clone(&mut self, h: u32, list: u32) -> u32 {
        self.stats.cloned += 1;
        let c = self.alloc_copy(h);
        exec::save_field_list(
            &self.main.prog,
            &mut self.main.st,
            &self.pool[h as usize],
            list,
        );
        c
    }

    fn send_to_session(&mut self, c: u32, cs: CloneSession, itype: u128, now: u64) {
        if let Some(g) = cs.mcast_grp {
            trace_pkt!(
                self.main.st,
                self.pool[c as usize],
                Debug,
                "Cloning packet to MGID {}",
                g
            );
            self.replicate(c, g, itype, now);
        }
        match cs.port {
            Some(p) => {
                trace_pkt!(
                    self.main.st,
                    self.pool[c as usize],
                    Debug,
                    "Cloning packet to egress port {}",
                    p
                );
                self.enqueue(c, p, now);
            }
            None => self.release(c),
        }
    }

    fn replicate(&mut self, h: u32, grp: u16, itype: u128, now: u64) {
        let n = self.mcast.get(&grp).map_or(0, Vec::len);
        let sm = self.main.prog.std;
        let rid = self.main.prog.std_slots.egress_rid;
        for i in 0..n {
            let (copy_rid, port) = self.mcast[&grp][i];
            trace_pkt!(
                self.main.st,
                self.pool[h as usize],
                Debug,
                "Replicating packet on port {}",
                port
            );
            let c = self.alloc_copy(h);
            let (orig, copy) = two(&mut self.pool, h, c);
            copy.copy_from(orig);
            copy.phv.set(&self.main.prog, sm.instance_type, itype);
            copy.phv.put(rid, u64::from(copy_rid));
            self.stats.replicated += 1;
            self.enqueue(c, port, now);
        }
    }

    fn enqueue(&mut self, h: u32, port: u16, now: u64) {
        let ss = &self.main.prog.std_slots;
        let pkt = &mut self.pool[h as usize];
        let prio = pkt.phv.read(ss.priority);
        let bytes = pkt.len_reg.clamp(0, i64::from(u32::MAX)) as u32;
        match self.tm.enqueue(now, port, prio.min(255) as u8, bytes, h) {
            Ok(e) => {
                let phv = &mut self.pool[h as usize].phv;
                phv.put(ss.enq_timestamp, now / 1000);
                phv.put(ss.enq_qdepth, u64::from(e.enq_qdepth_pkts));
            }
            Err(r) => {
                // The reason is counted per queue and port by the traffic manager.
                self.stats.dropped_by_tm += 1;
                trace_pkt!(
                    self.main.st,
                    self.pool[r.item as usize],
                    Debug,
                    "Dropping packet at enqueue: {} (port {}, priority {})",
                    r.reason.name(),
                    port,
                    prio
                );
                if r.reason == bufferlab_tm::DropReason::QueueOutOfRange {
                    self.priority_out_of_range(port, prio);
                }
                self.release(r.item);
            }
        }
    }

    /// Counts a drop for a priority the port has no queue for, and logs the first one of
    /// each (port, priority).
    fn priority_out_of_range(&mut self, port: u16, prio: u64) {
        self.stats.dropped_priority_out_of_range += 1;
        let Some(seen) = self.priority_logged.get_mut(usize::from(port)) else {
            return;
        };
        let bit = prio.min(255) as usize;
        if seen[bit / 64] & (1 << (bit % 64)) != 0 {
            return;
        }
        seen[bit / 64] |= 1 << (bit % 64);
        let queues = self.tm.port_config(port).map_or(0, |c| c.num_queues);
        exec::push_log(
            &mut self.main.st,
            format!(
                "Priority out of range: port {port} has {queues} queue(s), priority {prio}; \
                 its packets are dropped (counted per port)"
            ),
        );
    }

    /// Makes packet `h`'s egress-to-egress clone for `session` (preserving field list
    /// `list`), at the end of egress at `t`. Out of line: most packets are not cloned.
    #[cold]
    fn clone_egress(&mut self, h: u32, session: u32, list: u32, t: u64) {
        // An E2E clone is another pass of egress: counted, so a program
        // that clones every clone cannot loop forever.
        let within_limit = self.passes[h as usize] < MAX_PASSES;
        if !within_limit && self.sessions.contains_key(&session) {
            self.stats.dropped_pass_limit += 1;
        }
        if let Some(cs) = self
            .sessions
            .get(&session)
            .copied()
            .filter(|_| within_limit)
        {
            let c = self.begin_clone(h, list);
            self.passes[c as usize] += 1;
            let (orig, copy) = two(&mut self.pool, h, c);
            copy.copy_from(orig);
            copy.phv.reset_metadata(&self.main.prog);
            exec::restore_field_list(&self.main.prog, &self.main.st, copy, list);
            copy.phv.set(
                &self.main.prog,
                self.main.prog.std.instance_type,
                instance::EGRESS_CLONE,
            );
            copy.flags = Default::default();
            copy.flags.truncate = cs.truncate;
            self.send_to_session(c, cs, instance::EGRESS_CLONE, t);
        }
    }

    pub(crate) fn egress(&mut self, d: Dequeued<u32>) {
        let h = d.item;
        let t = d.tx_start;
        let drop_port = self.main.st.drop_port;
        let ss = &self.main.prog.std_slots;
        let pkt = &mut self.pool[h as usize];
        pkt.now = t;
        let phv = &mut pkt.phv;
        phv.put(ss.egress_global_timestamp, t / 1000);
        phv.put(
            ss.deq_timedelta,
            (t / 1000).saturating_sub(d.enq_time / 1000),
        );
        phv.put(ss.deq_qdepth, u64::from(d.deq_qdepth_pkts));
        phv.put(ss.qid, u64::from(d.queue));
        phv.put(ss.egress_port, u64::from(d.port));
        phv.put(ss.egress_spec, u64::from(drop_port) + 1);
        phv.put(ss.packet_length, pkt.len_reg.max(0) as u64);
        pkt.flags.clone_session = None;
        pkt.flags.recirculate = None;
        exec::run_pipeline(
            &self.main.prog,
            &mut self.main.st,
            pkt,
            &self.main.prog.egress,
            &self.main.prog.flat.egress,
        );
        if pkt.flags.assert_failed {
            self.stats.dropped_by_assert += 1;
            trace_pkt!(
                self.main.st,
                pkt,
                Debug,
                "Dropping packet: assert/assume failed in egress"
            );
            self.release(h);
            return;
        }
        let flags = pkt.flags;
        if let Some(session) = flags.clone_session {
            trace_pkt!(self.main.st, pkt, Debug, "Cloning packet at egress");
            self.clone_egress(h, session, flags.clone_field_list, t);
        }
        let egress_spec = self.main.prog.std_slots.egress_spec;
        if self.pool[h as usize].phv.read(egress_spec) == u64::from(drop_port) {
            self.stats.dropped_by_program += 1;
            trace_pkt!(
                self.main.st,
                self.pool[h as usize],
                Debug,
                "Dropping packet at the end of egress"
            );
            self.release(h);
            return;
        }
        let pkt = &mut self.pool[h as usize];
        exec::deparse(&self.main.prog, &mut self.main.st, pkt);
        if let Some(list) = flags.recirculate {
            self.stats.recirculated += 1;
            trace_pkt!(
                self.main.st,
                self.pool[h as usize],
                Debug,
                "Recirculating packet"
            );
            let pkt = &mut self.pool[h as usize];
            std::mem::swap(&mut pkt.data, &mut pkt.out);
            pkt.ingress_len = pkt.data.len() as u32;
            self.reset_for_pass(h, list, instance::RECIRC);
            self.ingress(h, t);
            return;
        }
        self.transmit(h, d.port, d.arrival);
    }
}
