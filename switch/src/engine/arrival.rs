//! Frames arriving on a port: checks, the MAC's handling of PAUSE/PFC
//! frames on ports that honour them, and the start of ingress.

use super::Engine;
use crate::error::RuntimeError;
use crate::trace_pkt;

/// EtherType of MAC Control frames (802.3x PAUSE, 802.1Qbb PFC).
const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
/// MAC Control opcodes.
const OPCODE_PAUSE: u16 = 0x0001;
const OPCODE_PFC: u16 = 0x0101;

impl Engine {
    /// Receives `frame` on `port` at `t_ns`: runs everything due before, then
    /// parser and ingress, then hands the packet to the traffic manager.
    pub fn send(&mut self, port: u16, frame: &[u8], t_ns: u64) -> Result<(), RuntimeError> {
        if let Some(h) = self.arrival(port, frame, t_ns)? {
            self.pool[h as usize].receive(&self.main.prog, frame, t_ns);
            self.start_ingress(h, port, t_ns);
        }
        Ok(())
    }

    /// As [`Engine::send`], taking the frame's buffer instead of copying it:
    /// `frame` is left holding an empty buffer for the caller to reuse.
    pub fn send_buffer(
        &mut self,
        port: u16,
        frame: &mut Vec<u8>,
        t_ns: u64,
    ) -> Result<(), RuntimeError> {
        if let Some(h) = self.arrival(port, frame, t_ns)? {
            self.pool[h as usize].receive_buffer(&self.main.prog, frame, t_ns);
            self.start_ingress(h, port, t_ns);
        }
        Ok(())
    }

    /// Checks an arrival, runs everything due before it and counts it; the
    /// pool packet to load it into, or None when the MAC consumed it.
    fn arrival(&mut self, port: u16, frame: &[u8], t_ns: u64) -> Result<Option<u32>, RuntimeError> {
        if t_ns < self.now {
            return Err(RuntimeError::FailedPrecondition(format!(
                "send at {t_ns} ns is before the engine's time {} ns",
                self.now
            )));
        }
        if port >= bufferlab_tm::NUM_PORTS {
            return Err(RuntimeError::InvalidArgument(format!(
                "port {port}: ports are 0..=511"
            )));
        }
        self.advance(t_ns);
        self.stats.received += 1;
        if self.honour_pause[usize::from(port / 64)] & (1 << (port % 64)) != 0
            && self.mac_control(port, frame)
        {
            return Ok(None);
        }
        Ok(Some(self.alloc()))
    }

    /// Sets the arrival's standard metadata of loaded packet `h` and runs ingress.
    pub(crate) fn start_ingress(&mut self, h: u32, port: u16, t_ns: u64) {
        let pkt = &mut self.pool[h as usize];
        pkt.id = self.next_packet_id;
        pkt.copy = 0;
        pkt.copies = 0;
        self.next_packet_id += 1;
        trace_pkt!(
            self.main.st,
            pkt,
            Debug,
            "Processing packet received on port {}",
            port
        );
        if self.tna.is_some() {
            self.tna_ingress(h, port, t_ns);
            return;
        }
        let ss = &self.main.prog.std_slots;
        pkt.phv.put(ss.ingress_port, u64::from(port));
        pkt.phv.put(ss.packet_length, u64::from(pkt.ingress_len));
        pkt.phv.put(ss.ingress_global_timestamp, t_ns / 1000);
        self.ingress(h, t_ns);
    }

    /// Makes a port's MAC consume received 802.3x PAUSE and PFC frames and
    /// hold its own egress queues for the time they ask (as a NIC or switch
    /// MAC does); other frames still go to the pipeline.
    pub fn set_honour_pause(&mut self, port: u16, on: bool) -> Result<(), RuntimeError> {
        if port >= bufferlab_tm::NUM_PORTS {
            return Err(RuntimeError::InvalidArgument(format!(
                "port {port}: ports are 0..=511"
            )));
        }
        let (w, b) = (usize::from(port / 64), port % 64);
        if on {
            self.honour_pause[w] |= 1 << b;
        } else {
            self.honour_pause[w] &= !(1 << b);
        }
        Ok(())
    }

    /// Handles a MAC Control frame on a port that honours pause; false if
    /// the frame is not PAUSE/PFC (it then goes to the pipeline).
    fn mac_control(&mut self, port: u16, frame: &[u8]) -> bool {
        let be16 = |i: usize| {
            frame
                .get(i..i + 2)
                .map(|b| u16::from_be_bytes([b[0], b[1]]))
        };
        if be16(12) != Some(ETHERTYPE_MAC_CONTROL) {
            return false;
        }
        // (queue mask, quanta) pairs: PAUSE holds every queue, PFC one per enabled class.
        let mut holds = [(0u8, 0u16); 8];
        let n = match (be16(14), be16(16)) {
            (Some(OPCODE_PAUSE), Some(quanta)) => {
                holds[0] = (0xff, quanta);
                1
            }
            (Some(OPCODE_PFC), Some(enable)) => {
                let mut n = 0;
                for class in 0..8u8 {
                    if enable & (1 << class) != 0 {
                        let Some(quanta) = be16(18 + 2 * usize::from(class)) else {
                            return false;
                        };
                        holds[n] = (1 << class, quanta);
                        n += 1;
                    }
                }
                n
            }
            _ => return false,
        };
        self.stats.pause_frames += 1;
        let rate = self.tm.port_config(port).map_or(0, |c| c.rate_bps);
        for &(queue_mask, quanta) in &holds[..n] {
            match bufferlab_tm::pause_quanta_ns(quanta, rate) {
                Some(ns) => {
                    // The port exists (checked by `send`), so pausing it cannot fail.
                    let _ = self.tm.pause(self.now, port, queue_mask, ns);
                }
                None => {
                    self.stats.pause_frames_ignored += 1;
                    break;
                }
            }
        }
        true
    }

    /// Receives `count` copies of `frame` on `port`, the first at `t0_ns`, then
    /// every `gap_ns` (load generation without a round trip per frame).
    pub fn send_repeated(
        &mut self,
        port: u16,
        frame: &[u8],
        count: u64,
        t0_ns: u64,
        gap_ns: u64,
    ) -> Result<(), RuntimeError> {
        for i in 0..count {
            self.send(port, frame, t0_ns + i * gap_ns)?;
        }
        Ok(())
    }
}
