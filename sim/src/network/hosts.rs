//! Hosts in the run: sources offering frames, the NIC serving rate-limiter queues under
//! PAUSE/PFC, and what a host does with data, PAUSE and feedback frames it receives.

use super::*;

impl Simulator {
    pub(super) fn generate(&mut self, source: u32, t: u64) -> Result<(), SimError> {
        let s = &mut self.sources[source as usize];
        let Some((_, size)) = s.next.take() else {
            return Ok(());
        };
        s.counters.offered_frames += 1;
        s.counters.offered_bytes += u64::from(size);
        let item = QueuedFrame {
            seq: s.seq,
            offered_ns: t,
            size,
        };
        s.seq = s.seq.wrapping_add(1);
        match s.rlq.offer(item, size) {
            Ok(()) => {
                s.counters.accepted_frames += 1;
                s.counters.accepted_bytes += u64::from(size);
            }
            Err(item) => match s.when_full {
                WhenFull::Drop => {
                    s.counters.dropped_frames += 1;
                    s.counters.dropped_bytes += u64::from(size);
                }
                WhenFull::BackPressure => {
                    s.counters.held += 1;
                    s.blocked = Some(item);
                    return Ok(());
                }
            },
        }
        let host = s.host;
        self.schedule_next_frame(source);
        self.nic_try_send(host, t);
        Ok(())
    }

    pub(super) fn schedule_next_frame(&mut self, source: u32) {
        let s = &mut self.sources[source as usize];
        s.next = s.generator.next_frame();
        if let Some((t, _)) = s.next {
            self.events.push(t, Event::Generate { source });
        }
    }

    pub(super) fn schedule_wake(&mut self, host: u32, at: u64) {
        let h = &mut self.hosts[host as usize];
        if h.wake_ns.is_none_or(|w| at < w) {
            h.wake_ns = Some(at);
            self.events.push(at, Event::NicWake { host });
        }
    }

    /// Puts the next eligible frame of a host on its link if the link is free.
    pub(super) fn nic_try_send(&mut self, host: u32, t: u64) {
        let h = &self.hosts[host as usize];
        let Some(nic) = &h.nic else { return };
        if nic.busy_until_ns > t {
            let at = nic.busy_until_ns;
            return self.schedule_wake(host, at);
        }
        if nic.pause.is_paused(t) {
            let at = nic.pause.paused_until_ns();
            return self.schedule_wake(host, at);
        }
        if self.tcp_nic_turn(host, t) {
            return;
        }
        let h = &self.hosts[host as usize];
        let Some(nic) = &h.nic else { return };
        // Round robin over the host's sources, from where it stopped last time.
        let n = h.sources.len();
        let mut chosen = None;
        let mut earliest: Option<u64> = None;
        for k in 0..n {
            let index = h.sources[(h.next_source + k) % n];
            let s = &self.sources[index as usize];
            let Some(ready) = s.rlq.head_ready_ns() else {
                continue;
            };
            let ready = if nic.pfc.is_paused(usize::from(s.priority), t) {
                ready.max(nic.pfc.timer(usize::from(s.priority)).paused_until_ns())
            } else {
                ready
            };
            if ready <= t {
                chosen = Some(((h.next_source + k) % n, index));
                break;
            }
            earliest = Some(earliest.map_or(ready, |e| e.min(ready)));
        }
        let Some((slot, index)) = chosen else {
            if let Some(at) = earliest {
                self.schedule_wake(host, at);
            }
            return;
        };
        self.hosts[host as usize].next_source = (slot + 1) % n;
        let s = &mut self.sources[index as usize];
        let Some((item, size)) = s.rlq.pop(t) else {
            return;
        };
        s.counters.sent_frames += 1;
        s.counters.sent_bytes += u64::from(size);
        let id = self.frames.take();
        let header = DataHeader {
            flow: s.flow,
            seq: item.seq,
            tx_ns: t,
        };
        write_data_frame(
            self.frames.get_mut(id),
            &s.address,
            size as usize,
            s.tag,
            &header,
        );
        let bytes = self.frames.get(id).len() as u64;
        if let Reaction::Bcn(rp) = &mut s.reaction {
            // Only a limiter that starts from the current rate measures anything.
            let overhead = self.hosts[host as usize]
                .nic
                .as_ref()
                .map_or(0, |n| n.model.wire_overhead_bytes);
            rp.note_sent(t, bytes + u64::from(overhead));
        }
        // A source held by its full queue goes on now that a frame left.
        if let Some(blocked) = s.blocked.take() {
            match s.rlq.offer(blocked, blocked.size) {
                Ok(()) => {
                    s.counters.accepted_frames += 1;
                    s.counters.accepted_bytes += u64::from(blocked.size);
                    s.generator.resume_at(t);
                    self.schedule_next_frame(index);
                }
                Err(blocked) => self.sources[index as usize].blocked = Some(blocked),
            }
        }
        let nic = self.hosts[host as usize]
            .nic
            .as_mut()
            .expect("checked above");
        let continuous = nic.busy_until_ns == t;
        if !continuous {
            nic.serialiser.restart();
        }
        let duration = nic
            .serialiser
            .next_ns(bytes + u64::from(nic.model.wire_overhead_bytes));
        nic.busy_until_ns = t + duration;
        let arrival = t + duration + nic.model.delay_ns;
        let peer = nic.peer;
        let busy_until = nic.busy_until_ns;
        self.schedule_arrival(peer, arrival, id);
        self.schedule_wake(host, busy_until);
    }

    /// Applies what the BCN reaction point decided: the pacing rate, the tag, a BCN(0,0)
    /// hold; then re-arms its timer and lets the host send.
    pub(super) fn apply_rate_change(&mut self, source: u32, change: &RateChange, t: u64) {
        let s = &mut self.sources[source as usize];
        let rate = change
            .limited
            .then(|| change.rate_bps.round().max(1.0) as u64);
        // A positive rate cannot fail to apply.
        let _ = s.rlq.set_rate(t, rate);
        s.tag = change.rlt_cpid;
        if let Some(until) = change.hold_until_ns {
            s.rlq.hold_until(until);
        }
        let host = s.host;
        self.schedule_rp_timer(source);
        self.nic_try_send(host, t);
    }

    /// Schedules the reaction point's timer if it wants one earlier than the one pending.
    pub(super) fn schedule_rp_timer(&mut self, source: u32) {
        let s = &mut self.sources[source as usize];
        let Reaction::Bcn(rp) = &s.reaction else {
            return;
        };
        let Some(at) = rp.next_timer_ns() else {
            return;
        };
        if s.rp_timer_ns.is_none_or(|pending| at < pending) {
            s.rp_timer_ns = Some(at);
            self.events.push(at, Event::RpTimer { source });
        }
    }

    pub(super) fn host_receive(
        &mut self,
        host: u32,
        frame: FrameId,
        t: u64,
    ) -> Result<(), SimError> {
        if self.tcp_receive(host, frame, t) {
            return Ok(());
        }
        let bytes = self.frames.get(frame);
        if let Some(data) = parse_data_frame(bytes) {
            let h = &mut self.hosts[host as usize];
            h.counters.data_frames += 1;
            let flow = usize::from(data.header.flow);
            if h.flows.len() <= flow {
                h.flows.resize(flow + 1, Default::default());
            }
            h.flows[flow].record(t, bytes.len(), &data.header);
            if let Some(capture) = h.capture.as_mut() {
                capture.push(CapturedFrame {
                    flow: data.header.flow,
                    seq: data.header.seq,
                    tx_ns: data.header.tx_ns,
                    rx_ns: t,
                });
            }
            self.frames.release(frame);
            return Ok(());
        }
        let honour = self.hosts[host as usize]
            .nic
            .as_ref()
            .is_some_and(|n| n.model.honour_pause);
        if let Some(pause) = parse_mac_control(bytes) {
            let h = &mut self.hosts[host as usize];
            let nonzero = if pause.is_pfc() {
                pause.quanta.iter().any(|&q| q > 0)
            } else {
                pause.quanta[0] > 0
            };
            if nonzero {
                h.counters.pause_frames += 1;
            } else {
                h.counters.xon_frames += 1;
            }
            if honour {
                if let Some(nic) = h.nic.as_mut() {
                    if pause.is_pfc() {
                        nic.pfc.on_pfc(t, pause.class_enable, &pause.quanta);
                    } else {
                        nic.pause.on_quanta(t, pause.quanta[0]);
                    }
                }
                self.frames.release(frame);
                self.nic_try_send(host, t);
                return Ok(());
            }
            self.frames.release(frame);
            return Ok(());
        }
        let ethertype = ethertype_of(bytes);
        if ethertype == Some(ETHERTYPE_BCN) {
            self.hosts[host as usize].counters.bcn_frames += 1;
        } else {
            self.hosts[host as usize].counters.other_frames += 1;
        }
        if let Some(ethertype) = ethertype {
            self.feedback(host, frame, ethertype, t);
        }
        self.frames.release(frame);
        Ok(())
    }

    /// Hands a feedback frame to the reaction models of the host's sources that take it:
    /// the source whose frame the BCN sampled, or every such source when the sample names none.
    pub(super) fn feedback(&mut self, host: u32, frame: FrameId, ethertype: u16, t: u64) {
        let bytes = self.frames.get(frame);
        let bcn = (ethertype == ETHERTYPE_BCN)
            .then(|| parse_bcn(bytes))
            .flatten();
        let sampled = bcn
            .and_then(|b| parse_data_frame(b.sample(bytes)))
            .map(|d| u32::from(d.header.flow))
            .filter(|&f| self.sources.get(f as usize).is_some_and(|s| s.host == host));
        let targets = self.hosts[host as usize].sources.len();
        for k in 0..targets {
            let index = self.hosts[host as usize].sources[k];
            if sampled.is_some_and(|f| f != index) {
                continue;
            }
            let s = &self.sources[index as usize];
            if !s.reaction.wants(ethertype) {
                continue;
            }
            let at = t + s.response_ns;
            match (&s.reaction, bcn) {
                (Reaction::Bcn(_), Some(bcn)) => {
                    self.events.push(at, Event::Feedback { source: index, bcn })
                }
                (Reaction::Hook(_), _) => {
                    let copy = self.frames.take();
                    let (src, dst) = (frame, copy);
                    let data = self.frames.get(src).to_vec();
                    self.frames.get_mut(dst).extend_from_slice(&data);
                    self.events.push(
                        at,
                        Event::HookFeedback {
                            source: index,
                            frame: copy,
                        },
                    );
                }
                _ => {}
            }
        }
    }

    pub(super) fn run_hook(
        &mut self,
        source: u32,
        t: u64,
        call: impl FnOnce(
            &mut dyn crate::reaction::ReactionHook,
            &mut HookContext,
            &[u8],
        ) -> Result<(), HookError>,
        frame: Option<FrameId>,
    ) -> Result<(), SimError> {
        let s = &mut self.sources[source as usize];
        let host = s.host;
        let line_rate = self.hosts[host as usize]
            .nic
            .as_ref()
            .map_or(0, |n| n.model.rate_bps);
        let mut ctx = HookContext {
            now_ns: t,
            rate_bps: s.rlq.rate_bps(),
            line_rate_bps: line_rate,
            queue_bytes: s.rlq.occupancy_bytes(),
            tag: s.tag,
            source: s.name.clone(),
            commands: Vec::new(),
        };
        let Reaction::Hook(hook) = &mut s.reaction else {
            return Ok(());
        };
        if frame.is_some() {
            s.counters.feedback_frames += 1;
        }
        let bytes = frame.map_or(&[][..], |f| self.frames.get(f));
        call(hook.as_mut(), &mut ctx, bytes).map_err(|error| SimError::Hook {
            source: s.name.clone(),
            error,
        })?;
        if !ctx.commands.is_empty() && frame.is_some() {
            s.counters.feedback_applied += 1;
        }
        for command in ctx.commands {
            match command {
                Command::SetRate(rate) => s.rlq.set_rate(t, rate).map_err(|e| SimError::Hook {
                    source: s.name.clone(),
                    error: e.into(),
                })?,
                Command::SetTag(tag) => s.tag = tag,
                Command::HoldUntil(until) => s.rlq.hold_until(until),
                Command::Timer { at_ns, token } => self
                    .events
                    .push(at_ns.max(t), Event::HookTimer { source, token }),
            }
        }
        self.nic_try_send(host, t);
        Ok(())
    }
}

fn ethertype_of(frame: &[u8]) -> Option<u16> {
    let be16 = |at: usize| {
        frame
            .get(at..at + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
    };
    match be16(12)? {
        ETHERTYPE_RLT => be16(12 + RLT_BYTES),
        e => Some(e),
    }
}
