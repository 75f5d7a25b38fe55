//! Tofino's packet generator: applications the control plane configures that put
//! packets into a pipe's ingress on its generator port, on a timer (once or
//! periodically) or when a port goes down, with the generator's header (pipe, app,
//! batch and packet numbers) in front of the configured payload. It is how a Tofino
//! program makes feedback frames without a passing packet.
//!
//! Timing: a trigger at `t` starts batch `b` at `t + b·ibg_ns`, and its packet `p`
//! at that plus `p·ipg_ns`; a periodic timer triggers every `timer_ns` from
//! `timer_ns` after the application is enabled, a one-shot timer once.

use std::collections::BTreeSet;

use crate::error::RuntimeError;

/// What starts an application's batches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// Once, `timer_ns` after it is enabled.
    OneShot,
    /// Every `timer_ns`, the first `timer_ns` after it is enabled.
    Periodic,
    /// When one of these ports goes down (once per port until it comes back up).
    PortDown(BTreeSet<u16>),
}

/// One application's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppConfig {
    /// The trigger.
    pub trigger: Trigger,
    /// Timer, ns (timer triggers).
    pub timer_ns: u64,
    /// Batches per trigger (>= 1).
    pub batches: u16,
    /// Packets per batch (>= 1).
    pub packets: u16,
    /// Gap between the starts of two batches, ns.
    pub ibg_ns: u64,
    /// Gap between two packets of a batch, ns.
    pub ipg_ns: u64,
    /// The payload after the generator's header (the packet buffer's bytes).
    pub payload: Vec<u8>,
}

/// Tofino generation: header layout and port numbers differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    /// Tofino 1: 8 applications, app id in 3 bits, generator port 68 of each pipe.
    Tofino1,
    /// Tofino 2: 16 applications, app id in 4 bits, generator port 6 of each pipe.
    Tofino2,
}

impl Generation {
    /// Applications the generator has.
    pub fn apps(self) -> u8 {
        match self {
            Generation::Tofino1 => 8,
            Generation::Tofino2 => 16,
        }
    }

    /// The generator port of `pipe` (dev port), where generated packets enter ingress.
    pub fn port(self, pipe: u8) -> u16 {
        let local = match self {
            Generation::Tofino1 => 68,
            Generation::Tofino2 => 6,
        };
        u16::from(pipe) * 128 + local
    }

    /// The first byte of the generator's header: pipe and app id.
    fn first_byte(self, pipe: u8, app: u8) -> u8 {
        match self {
            Generation::Tofino1 => (pipe & 3) << 3 | (app & 7),
            Generation::Tofino2 => (pipe & 3) << 4 | (app & 15),
        }
    }
}

/// An application's state.
#[derive(Debug, Clone)]
struct App {
    config: AppConfig,
    enabled: bool,
    /// Next timer trigger, ns.
    next_trigger: Option<u64>,
    /// Triggers being played out: (time of the trigger, the port that went down).
    pending: Vec<(u64, Option<u16>)>,
    /// Ports whose down event fired and that have not come back up.
    fired: BTreeSet<u16>,
    /// Packets made of the trigger being played out (`pending[0]`).
    played: u64,
    /// Packets generated so far.
    generated: u64,
}

/// The generator of one pipe.
#[derive(Debug, Clone)]
pub struct PacketGenerator {
    generation: Generation,
    pipe: u8,
    apps: Vec<Option<App>>,
}

/// Why the control plane's request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PktgenError(pub String);

impl PacketGenerator {
    /// A generator for `pipe` with no application configured.
    pub fn new(generation: Generation, pipe: u8) -> Self {
        PacketGenerator {
            generation,
            pipe,
            apps: vec![None; usize::from(generation.apps())],
        }
    }

    /// The port its packets enter on.
    pub fn port(&self) -> u16 {
        self.generation.port(self.pipe)
    }

    /// Configures application `app` (disabled until `enable`).
    pub fn configure(&mut self, app: u8, config: AppConfig) -> Result<(), PktgenError> {
        let slot = self.slot(app)?;
        if config.batches == 0 || config.packets == 0 {
            return Err(PktgenError("batches and packets must be at least 1".into()));
        }
        if !matches!(config.trigger, Trigger::PortDown(_)) && config.timer_ns == 0 {
            return Err(PktgenError("a timer trigger needs timer_ns > 0".into()));
        }
        *slot = Some(App {
            config,
            enabled: false,
            next_trigger: None,
            pending: vec![],
            fired: BTreeSet::new(),
            played: 0,
            generated: 0,
        });
        Ok(())
    }

    /// Enables or disables application `app` at time `now`.
    pub fn enable(&mut self, app: u8, on: bool, now: u64) -> Result<(), PktgenError> {
        let Some(a) = self.slot(app)?.as_mut() else {
            return Err(PktgenError(format!("application {app} is not configured")));
        };
        a.enabled = on;
        a.pending.clear();
        a.played = 0;
        a.next_trigger = match (&a.config.trigger, on) {
            (Trigger::OneShot | Trigger::Periodic, true) => Some(now + a.config.timer_ns),
            _ => None,
        };
        Ok(())
    }

    /// Packets application `app` has generated.
    pub fn generated(&self, app: u8) -> Result<u64, PktgenError> {
        match self.apps.get(usize::from(app)) {
            Some(Some(a)) => Ok(a.generated),
            Some(None) => Err(PktgenError(format!("application {app} is not configured"))),
            None => Err(self.out_of_range(app)),
        }
    }

    /// A port went down (`up` false) or came back (`up` true) at `now`: enabled
    /// port-down applications watching it trigger once per down event.
    pub fn port_status(&mut self, port: u16, up: bool, now: u64) {
        for a in self.apps.iter_mut().flatten() {
            let Trigger::PortDown(ports) = &a.config.trigger else {
                continue;
            };
            if !ports.contains(&port) {
                continue;
            }
            if up {
                a.fired.remove(&port);
            } else if a.enabled && a.fired.insert(port) {
                a.pending.push((now, Some(port)));
            }
        }
    }

    /// When the next packet is due, if any.
    pub fn next_ns(&self) -> Option<u64> {
        self.apps
            .iter()
            .flatten()
            .filter(|a| a.enabled)
            .filter_map(|a| {
                let pending = a
                    .pending
                    .first()
                    .map(|&(t, _)| t + Self::offset(a, a.played));
                pending.into_iter().chain(a.next_trigger).min()
            })
            .min()
    }

    /// Writes the packet due first, at or before `now`, into `frame` (cleared first) and
    /// says when it is due and which port it enters; None when none is due.
    pub fn take_due(&mut self, now: u64, frame: &mut Vec<u8>) -> Option<(u64, u16)> {
        let (generation, pipe, port) = (self.generation, self.pipe, self.port());
        let mut best: Option<(u64, usize)> = None;
        for (i, a) in self.apps.iter_mut().enumerate() {
            let Some(a) = a.as_mut().filter(|a| a.enabled) else {
                continue;
            };
            // A timer due now becomes a trigger being played out.
            if let Some(t) = a.next_trigger.filter(|&t| t <= now) {
                a.pending.push((t, None));
                a.next_trigger = match a.config.trigger {
                    Trigger::Periodic => Some(t + a.config.timer_ns),
                    _ => None,
                };
            }
            if let Some(&(t, _)) = a.pending.first() {
                let due = t + Self::offset(a, a.played);
                if due <= now && best.is_none_or(|(b, _)| due < b) {
                    best = Some((due, i));
                }
            }
        }
        let (due, i) = best?;
        let a = self.apps[i].as_mut()?;
        let (_, down_port) = a.pending[0];
        let per_batch = u64::from(a.config.packets);
        let (batch, packet) = (a.played / per_batch, a.played % per_batch);
        // Bytes 1..3 hold the batch number (timer) or the port that went down, then the
        // packet number within its batch.
        let word = down_port.map_or(batch, |p| u64::from(p & 0x1ff));
        frame.clear();
        frame.push(generation.first_byte(pipe, i as u8));
        frame.extend_from_slice(&(word as u32).to_be_bytes()[1..]);
        frame.extend_from_slice(&(packet as u16).to_be_bytes());
        frame.extend_from_slice(&a.config.payload);
        a.generated += 1;
        a.played += 1;
        if a.played == u64::from(a.config.batches) * per_batch {
            a.pending.remove(0);
            a.played = 0;
        }
        Some((due, port))
    }

    fn offset(a: &App, n: u64) -> u64 {
        let per_batch = u64::from(a.config.packets);
        (n / per_batch) * a.config.ibg_ns + (n % per_batch) * a.config.ipg_ns
    }

    fn slot(&mut self, app: u8) -> Result<&mut Option<App>, PktgenError> {
        let err = self.out_of_range(app);
        self.apps.get_mut(usize::from(app)).ok_or(err)
    }

    fn out_of_range(&self, app: u8) -> PktgenError {
        PktgenError(format!(
            "application {app}: the generator has {} (0..={})",
            self.generation.apps(),
            self.generation.apps() - 1
        ))
    }
}

impl crate::engine::Engine {
    /// The generator of `pipe` of the loaded TNA program.
    fn generator(&mut self, pipe: u8) -> Result<&mut PacketGenerator, RuntimeError> {
        if self.pktgen.is_empty() {
            return Err(RuntimeError::FailedPrecondition(
                "the packet generator belongs to Tofino; this program is v1model".into(),
            ));
        }
        let n = self.pktgen.len();
        self.pktgen.get_mut(usize::from(pipe)).ok_or_else(|| {
            RuntimeError::InvalidArgument(format!("pipe {pipe}: the program has {n} pipe(s)"))
        })
    }

    /// Configures application `app` of `pipe`'s packet generator (disabled until enabled).
    pub fn pktgen_configure(
        &mut self,
        pipe: u8,
        app: u8,
        config: AppConfig,
    ) -> Result<(), RuntimeError> {
        self.generator(pipe)?
            .configure(app, config)
            .map_err(|e| RuntimeError::InvalidArgument(e.0))
    }

    /// Enables or disables an application; its timer starts now.
    pub fn pktgen_enable(&mut self, pipe: u8, app: u8, on: bool) -> Result<(), RuntimeError> {
        let now = self.now;
        self.generator(pipe)?
            .enable(app, on, now)
            .map_err(|e| RuntimeError::NotFound(e.0))
    }

    /// Packets an application has generated.
    pub fn pktgen_generated(&mut self, pipe: u8, app: u8) -> Result<u64, RuntimeError> {
        self.generator(pipe)?
            .generated(app)
            .map_err(|e| RuntimeError::NotFound(e.0))
    }

    /// The generator port of `pipe`, where its packets enter ingress.
    pub fn pktgen_port(&mut self, pipe: u8) -> Result<u16, RuntimeError> {
        Ok(self.generator(pipe)?.port())
    }

    /// A port's link went down (`up` false) or up: port-down applications watching it
    /// trigger (a TNA program; nothing happens for v1model).
    pub fn port_status(&mut self, port: u16, up: bool) {
        let now = self.now;
        for g in &mut self.pktgen {
            g.port_status(port, up, now);
        }
    }

    /// When the packet generator next has a packet due.
    pub(crate) fn pktgen_next_ns(&self) -> Option<u64> {
        self.pktgen
            .iter()
            .filter_map(PacketGenerator::next_ns)
            .min()
    }

    /// Makes the packet due first (at or before `t`) and runs it through ingress.
    pub(crate) fn generate(&mut self, t: u64) {
        let Some(g) = (0..self.pktgen.len())
            .filter(|&i| self.pktgen[i].next_ns().is_some_and(|n| n <= t))
            .min_by_key(|&i| self.pktgen[i].next_ns())
        else {
            return;
        };
        let mut frame = std::mem::take(&mut self.pktgen_frame);
        let Some((due, port)) = self.pktgen[g].take_due(t, &mut frame) else {
            self.pktgen_frame = frame;
            return;
        };
        self.now = self.now.max(due);
        self.stats.generated += 1;
        let h = self.alloc();
        self.pool[h as usize].receive_buffer(&self.main.prog, &mut frame, due);
        self.pktgen_frame = frame;
        self.start_ingress(h, port, due);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn periodic(timer_ns: u64) -> AppConfig {
        AppConfig {
            trigger: Trigger::Periodic,
            timer_ns,
            batches: 1,
            packets: 1,
            ibg_ns: 0,
            ipg_ns: 0,
            payload: vec![0xee],
        }
    }

    #[test]
    fn tofino_2_puts_a_4_bit_app_id_and_the_pipe_in_the_first_byte() {
        let mut g = PacketGenerator::new(Generation::Tofino2, 3);
        assert_eq!(g.port(), 3 * 128 + 6);
        g.configure(13, periodic(50)).unwrap();
        g.enable(13, true, 0).unwrap();
        let mut frame = vec![];
        assert_eq!(g.take_due(49, &mut frame), None);
        assert_eq!(g.take_due(50, &mut frame), Some((50, 390)));
        assert_eq!(frame, [3 << 4 | 13, 0, 0, 0, 0, 0, 0xee]);
        assert!(g.configure(16, periodic(50)).is_err());
    }

    #[test]
    fn disabling_stops_a_trigger_being_played_out() {
        let mut g = PacketGenerator::new(Generation::Tofino1, 0);
        let mut config = periodic(100);
        config.packets = 4;
        config.ipg_ns = 10;
        g.configure(0, config).unwrap();
        g.enable(0, true, 0).unwrap();
        let mut frame = vec![];
        assert_eq!(g.take_due(100, &mut frame), Some((100, 68)));
        assert_eq!(g.next_ns(), Some(110));
        g.enable(0, false, 105).unwrap();
        assert_eq!(g.next_ns(), None);
        assert_eq!(g.generated(0), Ok(1));
    }
}
