//! Ingress accounting and the PAUSE / PFC the TM asks the MAC to send, as
//! Tofino's TM does: frames are counted against the port they came in on and
//! its priority group (PPG, one per iCoS here). A PFC-enabled PPG over its limit
//! asserts XOFF for its classes and keeps taking frames into its skid (headroom)
//! until that is full; a port in PAUSE mode does the same for the whole port
//! against `ig_limit_cells` and `skid_limit_cells`. XON is sent when use falls
//! to the limit less the hysteresis. XOFF is sent again every half pause time
//! while it holds, checked whenever a frame of that port is queued or leaves.

use std::collections::VecDeque;

use crate::pools::{admit_in_pool, AppPools, QueueBuffer};
use crate::stats::DropReason;

/// What a port's MAC sends toward its peer when the TM asks (`mode_tx`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlowControlMode {
    /// No flow control: frames over a limit are dropped.
    #[default]
    None,
    /// 802.3x PAUSE for the whole port.
    Pause,
    /// 802.1Qbb PFC per class.
    Pfc,
}

/// A port's ingress limits and flow control (Tofino's `tm.port.flowcontrol`
/// and `tm.port.buffer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortFlowControl {
    /// PAUSE, PFC or none.
    pub mode_tx: FlowControlMode,
    /// Cells the port's arrivals may hold before PAUSE (PAUSE mode) or drops
    /// (no flow control); 0 = no port limit.
    pub ig_limit_cells: u32,
    /// Cells under `ig_limit_cells` the port must fall to before XON.
    pub ig_hysteresis_cells: u32,
    /// Cells the port may still take after XOFF (PAUSE mode) before it drops.
    pub skid_limit_cells: u32,
    /// pause_time sent with XOFF, in quanta of 512 bit times.
    pub pause_quanta: u16,
    /// `cos_to_icos[c]`: the iCoS that PFC class c stands for.
    pub cos_to_icos: [u8; 8],
    /// Source MAC address of the PAUSE / PFC frames.
    pub src_mac: [u8; 6],
}

impl Default for PortFlowControl {
    /// No flow control, no limit, 0xFFFF quanta, class c = iCoS c.
    fn default() -> Self {
        PortFlowControl {
            mode_tx: FlowControlMode::None,
            ig_limit_cells: 0,
            ig_hysteresis_cells: 0,
            skid_limit_cells: 0,
            pause_quanta: 0xFFFF,
            cos_to_icos: [0, 1, 2, 3, 4, 5, 6, 7],
            src_mac: [0; 6],
        }
    }
}

/// A port priority group's limits (Tofino's `tm.ppg.cfg`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PpgConfig {
    /// Guaranteed cells, ingress application pool (0..=3), static and dynamic
    /// limit, hysteresis; with no pool the PPG's limit is its guaranteed cells
    /// (0: no limit).
    pub buffer: QueueBuffer,
    /// Lossless: over its limit the PPG asserts PFC instead of dropping.
    pub pfc_enable: bool,
    /// Cells a lossless PPG may take after XOFF before it drops.
    pub pfc_skid_max_cells: u32,
}

/// A PAUSE (class_enable 0) or PFC frame the TM asks port `port`'s MAC to send;
/// `pause_quanta` 0 is XON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowControlFrame {
    /// When the TM asked, ns.
    pub t_ns: u64,
    /// The port toward whose peer it goes.
    pub port: u16,
    /// PFC class-enable vector; 0 for an 802.3x PAUSE.
    pub class_enable: u8,
    /// pause_time of every enabled class (or of the PAUSE).
    pub pause_quanta: u16,
    /// Source MAC address.
    pub src_mac: [u8; 6],
}

/// What a frame holds on its ingress side, returned when it leaves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct IngressCharge {
    pub port: u16,
    pub icos: u8,
    pub cells: u32,
    pub pool_cells: u32,
    pub skid_cells: u32,
}

/// Ingress state of one port.
#[derive(Clone, Debug, Default)]
pub(crate) struct IngressPort {
    pub fc: PortFlowControl,
    pub ppg: [PpgConfig; 8],
    ppg_cells: [u64; 8],
    ppg_skid: [u64; 8],
    ppg_dropping: [bool; 8],
    port_cells: u64,
    port_skid: u64,
    /// PPGs (bit = iCoS) whose classes are paused.
    ppg_xoff: u8,
    port_xoff: bool,
    /// When XOFF was last sent, ns.
    last_xoff: u64,
}

/// Ingress accounting of all ports and the frames it asks the MACs to send.
#[derive(Debug)]
pub(crate) struct Ingress {
    pub ports: Vec<IngressPort>,
    pub pools: AppPools,
    pub frames: VecDeque<FlowControlFrame>,
    /// Frames asked for: XOFF (PAUSE or PFC), XON.
    pub xoff_sent: u64,
    pub xon_sent: u64,
}

impl Ingress {
    /// Ingress state for `ports` ports.
    pub(crate) fn new(ports: u16) -> Self {
        Ingress {
            ports: vec![IngressPort::default(); usize::from(ports)],
            pools: AppPools::default(),
            frames: VecDeque::new(),
            xoff_sent: 0,
            xon_sent: 0,
        }
    }

    /// Admits `cells` from `port`'s iCoS `icos` at `now`, or names the drop;
    /// may ask for XOFF. `pause_ns` is the XOFF's length on the port's link.
    pub(crate) fn admit(
        &mut self,
        now: u64,
        port: u16,
        icos: u8,
        cells: u32,
        pause_ns: Option<u64>,
    ) -> Result<IngressCharge, DropReason> {
        let icos = icos & 7;
        let i = usize::from(icos);
        let Some(ip) = self.ports.get_mut(usize::from(port)) else {
            return Err(DropReason::PortOutOfRange);
        };
        let mut charge = IngressCharge {
            port,
            icos,
            cells,
            ..IngressCharge::default()
        };
        let ppg = ip.ppg[i];
        let lossless = ppg.pfc_enable && ip.fc.mode_tx == FlowControlMode::Pfc;
        let within = match ppg.buffer.pool {
            Some(pool) => admit_in_pool(
                &self.pools,
                &ppg.buffer,
                usize::from(pool),
                ip.ppg_cells[i],
                cells,
                &mut ip.ppg_dropping[i],
            )
            .map(|c| charge.pool_cells = c)
            .is_ok(),
            None => {
                let g = u64::from(ppg.buffer.guaranteed_cells);
                g == 0 || ip.ppg_cells[i] + u64::from(cells) <= g
            }
        };
        let mut xoff = None;
        if !within {
            if !lossless {
                return Err(DropReason::IngressLimit);
            }
            if ip.ppg_skid[i] + u64::from(cells) > u64::from(ppg.pfc_skid_max_cells) {
                return Err(DropReason::SkidFull);
            }
            charge.skid_cells = cells;
            if ip.ppg_xoff & (1 << icos) == 0 {
                ip.ppg_xoff |= 1 << icos;
                xoff = Some(classes_of(&ip.fc, 1 << icos));
            }
        }
        let port_limit = u64::from(ip.fc.ig_limit_cells);
        if port_limit != 0 && ip.port_cells + u64::from(cells) > port_limit {
            if ip.fc.mode_tx != FlowControlMode::Pause {
                return Err(DropReason::IngressLimit);
            }
            if ip.port_skid + u64::from(cells) > u64::from(ip.fc.skid_limit_cells) {
                return Err(DropReason::SkidFull);
            }
            charge.skid_cells = cells;
            if !ip.port_xoff {
                ip.port_xoff = true;
                xoff = Some(0);
            }
        }
        ip.ppg_cells[i] += u64::from(cells);
        ip.port_cells += u64::from(cells);
        if charge.skid_cells > 0 {
            ip.ppg_skid[i] += u64::from(charge.skid_cells);
            ip.port_skid += u64::from(charge.skid_cells);
        }
        if let Some(p) = ppg.buffer.pool {
            let pi = usize::from(p);
            self.pools.used_cells[pi] += u64::from(charge.pool_cells);
            self.pools.max_used_cells[pi] =
                self.pools.max_used_cells[pi].max(self.pools.used_cells[pi]);
        }
        match xoff {
            Some(classes) => self.send(now, port, classes, true),
            None => self.refresh(now, port, pause_ns),
        }
        Ok(charge)
    }

    /// Returns a leaving frame's cells at `now`; may ask for XON, or refresh XOFF.
    pub(crate) fn release(&mut self, now: u64, c: IngressCharge, pause_ns: Option<u64>) {
        let i = usize::from(c.icos);
        let Some(ip) = self.ports.get_mut(usize::from(c.port)) else {
            return;
        };
        ip.ppg_cells[i] = ip.ppg_cells[i].saturating_sub(u64::from(c.cells));
        ip.port_cells = ip.port_cells.saturating_sub(u64::from(c.cells));
        ip.ppg_skid[i] = ip.ppg_skid[i].saturating_sub(u64::from(c.skid_cells));
        ip.port_skid = ip.port_skid.saturating_sub(u64::from(c.skid_cells));
        let buf = ip.ppg[i].buffer;
        if let Some(p) = buf.pool {
            let used = &mut self.pools.used_cells[usize::from(p)];
            *used = used.saturating_sub(u64::from(c.pool_cells));
        }
        let mut xon = None;
        if ip.ppg_xoff & (1 << c.icos) != 0 {
            let free = buf.pool.map_or(0, |p| {
                self.pools.size_cells[usize::from(p)]
                    .saturating_sub(self.pools.used_cells[usize::from(p)])
            });
            let shared =
                u64::from(buf.pool_max_cells).max(buf.dynamic_baf.limit(free).unwrap_or(0));
            let limit =
                u64::from(buf.guaranteed_cells) + if buf.pool.is_some() { shared } else { 0 };
            if ip.ppg_cells[i] <= limit.saturating_sub(u64::from(buf.hysteresis_cells)) {
                ip.ppg_xoff &= !(1 << c.icos);
                ip.ppg_dropping[i] = false;
                xon = Some(classes_of(&ip.fc, 1 << c.icos));
            }
        }
        let resume =
            u64::from(ip.fc.ig_limit_cells).saturating_sub(u64::from(ip.fc.ig_hysteresis_cells));
        if ip.port_xoff && ip.port_cells <= resume {
            ip.port_xoff = false;
            xon = Some(0);
        }
        match xon {
            Some(classes) => self.send(now, c.port, classes, false),
            None => self.refresh(now, c.port, pause_ns),
        }
    }

    /// Sends XOFF again when half its pause time has passed and it still holds.
    fn refresh(&mut self, now: u64, port: u16, pause_ns: Option<u64>) {
        let (Some(ns), Some(ip)) = (pause_ns, self.ports.get(usize::from(port))) else {
            return;
        };
        if (ip.port_xoff || ip.ppg_xoff != 0) && now >= ip.last_xoff.saturating_add(ns / 2) {
            let classes = if ip.port_xoff {
                0
            } else {
                classes_of(&ip.fc, ip.ppg_xoff)
            };
            self.send(now, port, classes, true);
        }
    }

    /// Queues a PAUSE (classes 0) or PFC frame: XOFF with the port's quanta, or XON.
    fn send(&mut self, now: u64, port: u16, classes: u8, xoff: bool) {
        let Some(ip) = self.ports.get_mut(usize::from(port)) else {
            return;
        };
        if xoff {
            ip.last_xoff = now;
            self.xoff_sent += 1;
        } else {
            self.xon_sent += 1;
        }
        self.frames.push_back(FlowControlFrame {
            t_ns: now,
            port,
            class_enable: classes,
            pause_quanta: if xoff { ip.fc.pause_quanta } else { 0 },
            src_mac: ip.fc.src_mac,
        });
    }
}

/// The PFC classes that stand for the iCoS in `icos_mask` (bit = iCoS).
fn classes_of(fc: &PortFlowControl, icos_mask: u8) -> u8 {
    (0..8u8)
        .filter(|&c| icos_mask & (1 << (fc.cos_to_icos[usize::from(c)] & 7)) != 0)
        .fold(0, |m, c| m | (1 << c))
}
