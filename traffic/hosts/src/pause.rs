//! 802.3x PAUSE and 802.1Qbb PFC honouring (congestion.md §2).
//!
//! A PAUSE with quanta q received at link rate R stops the sender for q·512/R
//! from the frame's arrival; quanta 0 (XON) resumes at once; a new PAUSE replaces
//! the running timer. PFC keeps one such timer per priority and touches only the
//! classes whose enable bit is set.

/// EtherType of MAC Control frames.
pub const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
/// MAC Control opcode of 802.3x PAUSE.
pub const OPCODE_PAUSE: u16 = 0x0001;
/// MAC Control opcode of 802.1Qbb PFC.
pub const OPCODE_PFC: u16 = 0x0101;
/// Bit times in one pause quantum.
pub const QUANTUM_BITS: u64 = 512;
/// PFC priorities.
pub const PFC_CLASSES: usize = 8;

/// q·512/R in ns, rounded up (a pause never ends early).
pub fn pause_duration_ns(quanta: u16, link_rate_bps: u64) -> u64 {
    let bits_ns = u128::from(quanta) * u128::from(QUANTUM_BITS) * 1_000_000_000;
    u64::try_from(bits_ns.div_ceil(u128::from(link_rate_bps.max(1)))).unwrap_or(u64::MAX)
}

/// A received MAC control frame: PAUSE (one time, all classes) or PFC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PauseEvent {
    /// The opcode: `OPCODE_PAUSE` or `OPCODE_PFC`.
    pub opcode: u16,
    /// PFC class-enable vector (0 for PAUSE).
    pub class_enable: u8,
    /// PAUSE: `quanta[0]`; PFC: the time of each class.
    pub quanta: [u16; PFC_CLASSES],
}

impl PauseEvent {
    /// Whether this is a PFC frame.
    pub fn is_pfc(&self) -> bool {
        self.opcode == OPCODE_PFC
    }
}

/// Decodes an untagged PAUSE or PFC frame; None for anything else (other opcodes too).
pub fn parse_mac_control(frame: &[u8]) -> Option<PauseEvent> {
    let be16 = |at: usize| -> Option<u16> {
        Some(u16::from_be_bytes(frame.get(at..at + 2)?.try_into().ok()?))
    };
    if be16(12)? != ETHERTYPE_MAC_CONTROL {
        return None;
    }
    let opcode = be16(14)?;
    let mut quanta = [0u16; PFC_CLASSES];
    match opcode {
        OPCODE_PAUSE => {
            quanta[0] = be16(16)?;
            Some(PauseEvent {
                opcode,
                class_enable: 0,
                quanta,
            })
        }
        OPCODE_PFC => {
            let enable = be16(16)?;
            for (class, q) in quanta.iter_mut().enumerate() {
                *q = be16(18 + 2 * class)?;
            }
            Some(PauseEvent {
                opcode,
                class_enable: (enable & 0xff) as u8,
                quanta,
            })
        }
        _ => None,
    }
}

/// One pause timer: paused while `now < paused_until_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PauseTimer {
    link_rate_bps: u64,
    paused_until_ns: u64,
    pauses: u64,
    resumes: u64,
}

impl PauseTimer {
    /// A running (not paused) timer for a link of `link_rate_bps` (positive).
    pub fn new(link_rate_bps: u64) -> Result<PauseTimer, String> {
        if link_rate_bps == 0 {
            return Err("link_rate_bps must be positive".into());
        }
        Ok(PauseTimer {
            link_rate_bps,
            paused_until_ns: 0,
            pauses: 0,
            resumes: 0,
        })
    }

    /// The link rate quanta are counted at, bit/s.
    pub fn link_rate_bps(&self) -> u64 {
        self.link_rate_bps
    }

    /// Applies a pause time received at `now_ns`; returns when sending may resume.
    pub fn on_quanta(&mut self, now_ns: u64, quanta: u16) -> u64 {
        if quanta == 0 {
            self.resumes += 1;
            self.paused_until_ns = now_ns;
        } else {
            self.pauses += 1;
            self.paused_until_ns =
                now_ns.saturating_add(pause_duration_ns(quanta, self.link_rate_bps));
        }
        self.paused_until_ns
    }

    /// Whether sending is stopped at `now_ns`.
    pub fn is_paused(&self, now_ns: u64) -> bool {
        now_ns < self.paused_until_ns
    }

    /// The end of the current pause, ns (in the past when running).
    pub fn paused_until_ns(&self) -> u64 {
        self.paused_until_ns
    }

    /// Non-zero pause times received.
    pub fn pauses(&self) -> u64 {
        self.pauses
    }

    /// XONs received.
    pub fn resumes(&self) -> u64 {
        self.resumes
    }
}

/// Eight independent pause timers, one per priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PfcTimers {
    timers: [PauseTimer; PFC_CLASSES],
}

impl PfcTimers {
    /// All priorities running.
    pub fn new(link_rate_bps: u64) -> Result<PfcTimers, String> {
        Ok(PfcTimers {
            timers: [PauseTimer::new(link_rate_bps)?; PFC_CLASSES],
        })
    }

    /// Applies the enabled classes' times; returns each class's resume time (None
    /// for classes the frame does not enable).
    pub fn on_pfc(
        &mut self,
        now_ns: u64,
        class_enable: u8,
        quanta: &[u16; PFC_CLASSES],
    ) -> [Option<u64>; PFC_CLASSES] {
        let mut out = [None; PFC_CLASSES];
        for (class, slot) in out.iter_mut().enumerate() {
            if class_enable & (1 << class) != 0 {
                *slot = Some(self.timers[class].on_quanta(now_ns, quanta[class]));
            }
        }
        out
    }

    /// One priority's timer.
    pub fn timer(&self, priority: usize) -> &PauseTimer {
        &self.timers[priority % PFC_CLASSES]
    }

    /// Whether `priority` is stopped at `now_ns`.
    pub fn is_paused(&self, priority: usize, now_ns: u64) -> bool {
        self.timer(priority).is_paused(now_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quanta_expire_at_the_exact_ns() {
        // 65,535 quanta × 512 bits at 10 Gbit/s = 3,355,392 ns.
        assert_eq!(pause_duration_ns(65535, 10_000_000_000), 3_355_392);
        // 1 quantum at 3 Gbit/s = 170.67 ns, rounded up.
        assert_eq!(pause_duration_ns(1, 3_000_000_000), 171);
        let mut t = PauseTimer::new(10_000_000_000).unwrap();
        assert_eq!(t.link_rate_bps(), 10_000_000_000);
        assert_eq!(t.on_quanta(1_000, 65535), 3_356_392);
        assert!(t.is_paused(3_356_391));
        assert!(!t.is_paused(3_356_392));
    }

    #[test]
    fn xon_resumes_at_once_and_a_new_pause_replaces_the_old() {
        let mut t = PauseTimer::new(1_000_000_000).unwrap();
        t.on_quanta(0, 100);
        assert_eq!(t.on_quanta(10, 0), 10);
        assert!(!t.is_paused(10));
        t.on_quanta(20, 1000);
        assert_eq!(t.on_quanta(30, 1), 30 + 512);
        assert_eq!((t.pauses(), t.resumes()), (3, 1));
    }

    #[test]
    fn pfc_touches_only_enabled_classes() {
        let mut p = PfcTimers::new(1_000_000_000).unwrap();
        let mut q = [0u16; 8];
        q[3] = 10;
        q[5] = 10;
        let r = p.on_pfc(0, 1 << 3, &q);
        assert_eq!(r[3], Some(5120));
        assert_eq!(r[5], None);
        assert!(p.is_paused(3, 5119));
        assert!(!p.is_paused(5, 1));
    }

    #[test]
    fn parses_pause_and_pfc_and_ignores_others() {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&[0x88, 0x08, 0x00, 0x01, 0xff, 0xff]);
        f.resize(60, 0);
        let e = parse_mac_control(&f).unwrap();
        assert!(!e.is_pfc());
        assert_eq!(e.quanta[0], 0xffff);
        f[14..16].copy_from_slice(&OPCODE_PFC.to_be_bytes());
        f[16..18].copy_from_slice(&0x0004u16.to_be_bytes());
        f[22..24].copy_from_slice(&7u16.to_be_bytes());
        let e = parse_mac_control(&f).unwrap();
        assert!(e.is_pfc());
        assert_eq!((e.class_enable, e.quanta[2]), (4, 7));
        f[15] = 9;
        assert_eq!(parse_mac_control(&f), None);
        assert_eq!(parse_mac_control(&f[..13]), None);
        assert!(PauseTimer::new(0).is_err());
    }
}
