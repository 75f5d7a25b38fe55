//! The traffic manager configured in Tofino's terms (BF Runtime's `tf1.tm.*`
//! tables): application pools, each queue's guaranteed cells and pool, the PFC
//! class a queue honours. The TM is the same one v1model programs use.

use std::cmp::Reverse;

use bufferlab_tm::{
    AppPools, Baf, DropReason, FlowControlFrame, PortFlowControl, PpgConfig, QueueBuffer, APP_POOLS,
};

use super::cfg_err;
use crate::engine::Engine;
use crate::error::RuntimeError;
use crate::trace_pkt;

/// Destination of 802.3x PAUSE and PFC frames (the MAC Control multicast address).
const MAC_CONTROL_DA: [u8; 6] = [0x01, 0x80, 0xC2, 0x00, 0x00, 0x01];
/// A MAC Control frame without its FCS, as the engine's frames are.
const MAC_CONTROL_LEN: usize = 60;

type R<T> = Result<T, RuntimeError>;

/// Reads Tofino's egress pool name `EG_APP_POOL_<n>` (or a bare `n`) as n.
pub fn eg_app_pool(name: &str) -> R<u8> {
    let n = name.trim().trim_start_matches("EG_APP_POOL_");
    n.parse::<u8>()
        .ok()
        .filter(|&p| usize::from(p) < APP_POOLS)
        .ok_or_else(|| {
            RuntimeError::InvalidArgument(format!(
                "pool '{name}': egress application pools are EG_APP_POOL_0..EG_APP_POOL_3"
            ))
        })
}

/// Reads Tofino's ingress pool name `IG_APP_POOL_<n>` (or a bare `n`) as n.
pub fn ig_app_pool(name: &str) -> R<u8> {
    let n = name.trim().trim_start_matches("IG_APP_POOL_");
    n.parse::<u8>()
        .ok()
        .filter(|&p| usize::from(p) < APP_POOLS)
        .ok_or_else(|| {
            RuntimeError::InvalidArgument(format!(
                "pool '{name}': ingress application pools are IG_APP_POOL_0..IG_APP_POOL_3"
            ))
        })
}

/// Writes a PAUSE (no classes) or PFC frame into `out`: MAC Control, opcode
/// 0x0001 with one pause_time or 0x0101 with the class-enable vector and eight
/// times, zero-padded to 60 bytes.
pub fn mac_control_frame(f: &FlowControlFrame, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&MAC_CONTROL_DA);
    out.extend_from_slice(&f.src_mac);
    out.extend_from_slice(&0x8808u16.to_be_bytes());
    if f.class_enable == 0 {
        out.extend_from_slice(&0x0001u16.to_be_bytes());
        out.extend_from_slice(&f.pause_quanta.to_be_bytes());
    } else {
        out.extend_from_slice(&0x0101u16.to_be_bytes());
        out.extend_from_slice(&u16::from(f.class_enable).to_be_bytes());
        for c in 0..8 {
            let t = if f.class_enable & (1 << c) != 0 {
                f.pause_quanta
            } else {
                0
            };
            out.extend_from_slice(&t.to_be_bytes());
        }
    }
    out.resize(MAC_CONTROL_LEN, 0);
}

/// Reads a burst-absorption factor by its BF Runtime name ("1.5%" ... "80%", "DISABLE").
pub fn baf(name: &str) -> R<Baf> {
    name.parse().map_err(RuntimeError::InvalidArgument)
}

impl Engine {
    /// `tf1.tm.pool.cfg`: sizes egress application pool `pool` (0..=3) in cells.
    pub fn tm_pool_cfg(&mut self, pool: u8, size_cells: u64) -> R<()> {
        self.tm
            .set_app_pool_cells(pool, size_cells)
            .map_err(cfg_err)
    }

    /// The application pools' sizes and use, cells.
    pub fn tm_app_pools(&self) -> AppPools {
        self.tm.app_pools()
    }

    /// The ingress application pools' sizes and use, cells.
    pub fn tm_ig_app_pools(&self) -> AppPools {
        self.tm.ig_app_pools()
    }

    /// The TM's cell size in bytes (None: bytes) and queues per port.
    pub fn tm_units(&self) -> (Option<u32>, u8) {
        (self.tm.cell_bytes(), self.tm.queues_per_port())
    }

    /// `tf1.tm.queue.buffer`: queue `queue` of `port` takes `buf` (its guaranteed
    /// cells, pool, static limit, burst-absorption factor and hysteresis).
    pub fn tm_queue_buffer(&mut self, port: u16, queue: u8, buf: QueueBuffer) -> R<()> {
        let mut cfg = self.port_config(port)?;
        *self.queue_slot(&mut cfg.queue_buffer, queue)? = buf;
        self.configure_port(port, cfg)
    }

    /// `tf1.tm.queue.cfg` `pfc_cos`: the PFC class (0..=7) queue `queue` of `port` honours.
    pub fn tm_queue_pfc_cos(&mut self, port: u16, queue: u8, pfc_cos: u8) -> R<()> {
        let mut cfg = self.port_config(port)?;
        *self.queue_slot(&mut cfg.pfc_cos, queue)? = pfc_cos;
        self.configure_port(port, cfg)
    }

    /// `tf1.tm.port.flowcontrol` and `tf1.tm.port.buffer`: `port`'s flow control and ingress limits.
    pub fn tm_port_flow_control(&mut self, port: u16, fc: PortFlowControl) -> R<()> {
        self.tm.set_port_flow_control(port, fc).map_err(cfg_err)
    }

    /// `port`'s flow control and ingress limits.
    pub fn tm_port_flow_control_get(&self, port: u16) -> R<PortFlowControl> {
        self.tm
            .port_flow_control(port)
            .ok_or_else(|| RuntimeError::InvalidArgument(format!("port {port}: ports are 0..=511")))
    }

    /// `tf1.tm.ppg.cfg`: the priority group of `port`'s iCoS `icos`.
    pub fn tm_ppg_cfg(&mut self, port: u16, icos: u8, ppg: PpgConfig) -> R<()> {
        if icos > 7 {
            return Err(RuntimeError::InvalidArgument(format!(
                "icos {icos}: iCoS are 0..=7"
            )));
        }
        self.tm.set_ppg(port, icos, ppg).map_err(cfg_err)
    }

    /// The priority group of `port`'s iCoS `icos`.
    pub fn tm_ppg_get(&self, port: u16, icos: u8) -> R<PpgConfig> {
        if icos > 7 {
            return Err(RuntimeError::InvalidArgument(format!(
                "icos {icos}: iCoS are 0..=7"
            )));
        }
        self.tm.ppg(port, icos).ok_or_else(|| {
            RuntimeError::InvalidArgument(format!("port {port} icos {icos}: no such PPG"))
        })
    }

    /// `tf1.tm.pool.cfg` for `IG_APP_POOL_<pool>`: sizes an ingress pool in cells.
    pub fn tm_ig_pool_cfg(&mut self, pool: u8, size_cells: u64) -> R<()> {
        self.tm
            .set_ig_app_pool_cells(pool, size_cells)
            .map_err(cfg_err)
    }

    /// `tf1.tm.pipe.cfg` `mirror_drop_*`: where pipe `pipe`'s frames dropped with
    /// `deflect_on_drop` go (port, queue), or None to drop them.
    pub fn tm_mirror_on_drop(&mut self, pipe: u8, dest: Option<(u16, u8)>) -> R<()> {
        self.tm.set_mirror_on_drop(pipe, dest).map_err(cfg_err)
    }

    /// Puts the PAUSE / PFC frames the TM asked for on their ports' links: each
    /// reaches the peer after its serialisation at the port's rate and the
    /// port's delay (it does not wait for the frame on the wire, nor delay it).
    pub(crate) fn send_flow_control(&mut self) {
        while let Some(f) = self.tm.take_flow_control_frame() {
            let Some(cfg) = self.tm.port_config(f.port).copied() else {
                continue;
            };
            let bits = (MAC_CONTROL_LEN as u64 + u64::from(cfg.wire_overhead_bytes)) * 8;
            let wire_ns = match cfg.rate_bps {
                0 => 0,
                r => (u128::from(bits) * 1_000_000_000).div_ceil(u128::from(r)) as u64,
            };
            let arrival = f.t_ns + wire_ns + cfg.delay_ns;
            let buf = match self.free_bufs.pop() {
                Some(b) => b,
                None => {
                    self.out_bufs.push(Vec::new());
                    (self.out_bufs.len() - 1) as u32
                }
            };
            mac_control_frame(&f, &mut self.out_bufs[buf as usize]);
            self.seq += 1;
            self.pending.push(Reverse((arrival, self.seq, f.port, buf)));
        }
    }

    /// Sends packet `h`, which the TM refused for `reason`, to its pipe's
    /// mirror-on-drop destination when it asked for `deflect_on_drop`; false
    /// (and `h` untouched) when it is not deflected.
    pub(crate) fn tna_deflect(&mut self, h: u32, reason: DropReason, now: u64) -> bool {
        let t = &self.pool[h as usize].tna;
        let admission = !matches!(
            reason,
            DropReason::PortOutOfRange | DropReason::QueueOutOfRange
        );
        // Tofino's pipe of a dev port: bits 8:7.
        let pipe = t.from.map_or(0, |(port, _)| ((port >> 7) & 3) as u8);
        let Some((port, queue)) = self.tm.mirror_on_drop(pipe) else {
            return false;
        };
        if !t.deflect_on_drop || !admission {
            return false;
        }
        trace_pkt!(
            self.main.st,
            self.pool[h as usize],
            Debug,
            "Deflecting packet dropped at enqueue ({}) to port {}, queue {}",
            reason.name(),
            port,
            queue
        );
        let t = &mut self.pool[h as usize].tna;
        (t.deflect_on_drop, t.deflected, t.from) = (false, true, None);
        let bytes = self.pool[h as usize].out.len() as u32;
        match self.tm.enqueue(now, port, queue, bytes, h) {
            Ok(e) => {
                self.pool[h as usize].tna.enq_qdepth_cells =
                    u32::try_from(e.enq_qdepth_cells).unwrap_or(u32::MAX);
            }
            Err(r) => {
                self.stats.dropped_by_tm += 1;
                self.release(r.item);
            }
        }
        true
    }

    /// Entry `queue` of a per-queue setting, if ports of this target have that queue.
    fn queue_slot<'a, T>(&self, slots: &'a mut [T], queue: u8) -> R<&'a mut T> {
        let max = self.tm.queues_per_port();
        slots
            .get_mut(usize::from(queue))
            .filter(|_| queue < max)
            .ok_or_else(|| {
                RuntimeError::InvalidArgument(format!(
                    "queue {queue}: this target's ports have queues 0..={}",
                    max - 1
                ))
            })
    }
}
