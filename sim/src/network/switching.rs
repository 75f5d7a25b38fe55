//! Switches in the run: stepping engines, handing their frames to peers, taking frames in.

use super::*;

impl Simulator {
    pub(super) fn engine_error(&self, switch: usize, e: impl fmt::Debug) -> SimError {
        SimError::Config(format!("switch {}: {e:?}", self.switches[switch].name))
    }

    /// Runs a switch's engine up to `t` and delivers what it sent.
    pub(super) fn step_switch(&mut self, i: usize, t: u64) -> Result<(), SimError> {
        let next = {
            let mut engine = self.switches[i].lock();
            engine.advance(t);
            engine.drain_received_into(&mut self.outputs);
            store_outputs(
                &mut engine,
                &mut self.outputs,
                &mut self.frames,
                &mut self.delivered,
            );
            engine.next_event_ns()
        };
        self.switches[i].next_ns = next;
        self.deliver_outputs(i)
    }

    /// Sends each frame the switch delivered (in the frame store since
    /// [`store_outputs`]) to the peer of its port.
    pub(super) fn deliver_outputs(&mut self, i: usize) -> Result<(), SimError> {
        if self.delivered.is_empty() {
            return Ok(());
        }
        let mut delivered = std::mem::take(&mut self.delivered);
        for &(port, id, t) in &delivered {
            match self.switches[i].ports[usize::from(port)] {
                None => {
                    self.switches[i].unconnected_frames += 1;
                    self.frames.release(id);
                }
                Some(peer) => match peer.node {
                    NodeRef::Host(h) => {
                        self.links[peer.link as usize].count(self.frames.get(id));
                        self.host_receive(h, id, t)?;
                    }
                    NodeRef::Switch(_) => self.schedule_arrival(peer, t, id),
                },
            }
        }
        delivered.clear();
        self.delivered = delivered;
        Ok(())
    }

    pub(super) fn switch_receive(
        &mut self,
        i: usize,
        port: u16,
        frame: FrameId,
        t: u64,
    ) -> Result<(), SimError> {
        self.switch_arrivals += 1;
        let (sent, next) = {
            let mut engine = self.switches[i].lock();
            // The engine takes the frame's buffer and leaves a spare one in the store.
            let sent = engine.send_buffer(port, self.frames.get_mut(frame), t);
            engine.drain_received_into(&mut self.outputs);
            store_outputs(
                &mut engine,
                &mut self.outputs,
                &mut self.frames,
                &mut self.delivered,
            );
            (sent, engine.next_event_ns())
        };
        self.switches[i].next_ns = next;
        self.frames.release(frame);
        sent.map_err(|e| self.engine_error(i, e))?;
        self.deliver_outputs(i)
    }

    /// Schedules `frame`'s arrival at `peer`, whose last bit gets there at `t`: a switch
    /// takes it into its pipeline `latency_ns` later.
    pub(super) fn schedule_arrival(&mut self, peer: Peer, t: u64, frame: FrameId) {
        let at = match peer.node {
            NodeRef::Switch(s) => t + self.switches[s as usize].latency_ns,
            NodeRef::Host(_) => t,
        };
        let (node, port, link) = (peer.node, peer.port, peer.link);
        self.events.push(
            at,
            Event::Arrive {
                node,
                port,
                link,
                frame,
            },
        );
    }
}

/// Moves an engine's outputs into the frame store, handing the engine back spare
/// buffers to reuse, and notes each as (port, frame, arrival time) in `delivered`;
/// called with the engine already locked, so a step takes its lock once.
fn store_outputs(
    engine: &mut Engine,
    outputs: &mut Vec<Output>,
    frames: &mut FrameStore,
    delivered: &mut Vec<(u16, FrameId, u64)>,
) {
    for out in outputs.drain(..) {
        let (id, spare) = frames.put_swapped(out.frame);
        engine.recycle(spare);
        delivered.push((out.port, id, out.t_ns));
    }
}
