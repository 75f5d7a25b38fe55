//! Traffic sources: when each frame is offered and how large it is.
//!
//! A source is a clock of its own: `next_frame` returns the start time and size
//! of its next frame, in order, until it stops. Patterns:
//! - `Constant`: frames back to back at `rate_bps` (the link's wire overhead counted),
//!   exact over any run length;
//! - `Bernoulli`: time is cut into slots of one frame time at `line_rate_bps`, and
//!   each slot carries a frame with probability `load` (the 802.1 BCN simulations'
//!   "Bernoulli temporal distribution");
//! - either of them gated by `OnOff` periods (fixed, or exponential with those means).
//!
//! Frame sizes come from a weighted `SizeMix`.

use crate::rng::Rng;
use crate::wire::Serialiser;

/// Smallest frame a source offers, bytes (Ethernet's 64 less the FCS).
pub const MIN_FRAME_BYTES: u32 = 60;
/// Largest frame a source offers, bytes (a 9,216-byte jumbo).
pub const MAX_FRAME_BYTES: u32 = 9216;

/// How frames are spaced in time while the source is on.
#[derive(Debug, Clone, PartialEq)]
pub enum Pattern {
    /// Back to back at `rate_bps` (wire bits, overhead included).
    Constant {
        /// Offered rate, bit/s.
        rate_bps: u64,
    },
    /// One frame per slot with probability `load`; a slot is one frame time at `line_rate_bps`.
    Bernoulli {
        /// Probability that a slot carries a frame, (0, 1].
        load: f64,
        /// The rate that sets the slot length, bit/s.
        line_rate_bps: u64,
    },
}

/// On and off periods: the pattern runs during `on_ns`, the source is silent for `off_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OnOff {
    /// Length (or mean length) of an on period, ns.
    pub on_ns: u64,
    /// Length (or mean length) of an off period, ns.
    pub off_ns: u64,
    /// Exponentially distributed periods with these means instead of fixed ones.
    pub exponential: bool,
}

/// Frame sizes with weights (bytes, relative weight).
#[derive(Debug, Clone, PartialEq)]
pub struct SizeMix {
    sizes: Vec<u32>,
    cumulative: Vec<u64>,
}

impl SizeMix {
    /// A mix from (size bytes, weight) pairs; sizes in 60..=9216, weights positive.
    pub fn new(pairs: &[(u32, u32)]) -> Result<SizeMix, String> {
        if pairs.is_empty() {
            return Err("a size mix needs at least one size".into());
        }
        let mut sizes = Vec::with_capacity(pairs.len());
        let mut cumulative = Vec::with_capacity(pairs.len());
        let mut total = 0u64;
        for &(size, weight) in pairs {
            if !(MIN_FRAME_BYTES..=MAX_FRAME_BYTES).contains(&size) {
                return Err(format!(
                    "frame size {size} bytes is outside {MIN_FRAME_BYTES}..={MAX_FRAME_BYTES} \
                     (bytes as the switch receives them, no FCS)"
                ));
            }
            if weight == 0 {
                return Err(format!("frame size {size} bytes has weight 0"));
            }
            total += u64::from(weight);
            sizes.push(size);
            cumulative.push(total);
        }
        Ok(SizeMix { sizes, cumulative })
    }

    /// One fixed size.
    pub fn fixed(size: u32) -> Result<SizeMix, String> {
        SizeMix::new(&[(size, 1)])
    }

    /// The largest size in the mix, bytes.
    pub fn max_bytes(&self) -> u32 {
        self.sizes.iter().copied().max().unwrap_or(0)
    }

    /// The mean size, bytes.
    pub fn mean_bytes(&self) -> f64 {
        let mut last = 0;
        let mut sum = 0.0;
        for (size, &cum) in self.sizes.iter().zip(&self.cumulative) {
            sum += f64::from(*size) * (cum - last) as f64;
            last = cum;
        }
        sum / last as f64
    }

    /// Draws a size (no random draw for a one-size mix).
    pub fn draw(&self, rng: &mut Rng) -> u32 {
        if self.sizes.len() == 1 {
            return self.sizes[0];
        }
        let total = self.cumulative[self.cumulative.len() - 1];
        let pick = rng.below(total);
        let i = self.cumulative.partition_point(|&c| c <= pick);
        self.sizes[i]
    }
}

/// Everything that defines a source's offered traffic.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceSpec {
    /// Spacing while on.
    pub pattern: Pattern,
    /// On/off gating; None = always on.
    pub on_off: Option<OnOff>,
    /// Frame sizes.
    pub sizes: SizeMix,
    /// Bytes the link adds per frame (preamble, gap, FCS), counted in rates and slots.
    pub wire_overhead_bytes: u32,
    /// First frame's start, ns.
    pub start_ns: u64,
    /// No frame starts at or after this time, ns (None = never stops).
    pub stop_ns: Option<u64>,
}

impl SourceSpec {
    /// Checks the values a run could not use.
    pub fn validate(&self) -> Result<(), String> {
        match self.pattern {
            Pattern::Constant { rate_bps: 0 } => {
                return Err("constant rate_bps must be positive".into())
            }
            Pattern::Bernoulli {
                load,
                line_rate_bps,
            } => {
                if !(load > 0.0 && load <= 1.0) {
                    return Err(format!("bernoulli load {load} must be in (0, 1]"));
                }
                if line_rate_bps == 0 {
                    return Err("bernoulli line_rate_bps must be positive".into());
                }
            }
            Pattern::Constant { .. } => {}
        }
        if let Some(o) = self.on_off {
            if o.on_ns == 0 {
                return Err("on_off on_ns must be positive".into());
            }
        }
        if let Some(stop) = self.stop_ns {
            if stop < self.start_ns {
                return Err(format!(
                    "stop_ns {stop} is before start_ns {}",
                    self.start_ns
                ));
            }
        }
        Ok(())
    }

    /// The mean offered rate while on, bit/s on the wire.
    pub fn offered_rate_bps(&self) -> f64 {
        match self.pattern {
            Pattern::Constant { rate_bps } => rate_bps as f64,
            Pattern::Bernoulli {
                load,
                line_rate_bps,
            } => load * line_rate_bps as f64,
        }
    }
}

/// A running source: its clock, random stream and on/off state.
#[derive(Debug, Clone)]
pub struct Source {
    spec: SourceSpec,
    rng: Rng,
    serialiser: Serialiser,
    /// Start of the next slot (or of the next frame, for a constant pattern), ns.
    clock_ns: u64,
    /// End of the current on period, ns (u64::MAX without on/off).
    on_until_ns: u64,
    stopped: bool,
}

impl Source {
    /// A source that offers its first frame at `spec.start_ns`.
    pub fn new(spec: SourceSpec, rng: Rng) -> Result<Source, String> {
        spec.validate()?;
        let rate = match spec.pattern {
            Pattern::Constant { rate_bps } => rate_bps,
            Pattern::Bernoulli { line_rate_bps, .. } => line_rate_bps,
        };
        let mut source = Source {
            serialiser: Serialiser::new(rate),
            clock_ns: spec.start_ns,
            on_until_ns: u64::MAX,
            stopped: false,
            spec,
            rng,
        };
        if let Some(o) = source.spec.on_off {
            source.on_until_ns = source
                .spec
                .start_ns
                .saturating_add(source.period(o.on_ns, o));
        }
        Ok(source)
    }

    /// The source's description.
    pub fn spec(&self) -> &SourceSpec {
        &self.spec
    }

    fn period(&mut self, mean_ns: u64, o: OnOff) -> u64 {
        if o.exponential {
            self.rng.exponential_ns(mean_ns)
        } else {
            mean_ns
        }
    }

    /// The next frame, `(start ns, size bytes)`; None once the source has stopped.
    pub fn next_frame(&mut self) -> Option<(u64, u32)> {
        loop {
            if self.stopped || self.spec.stop_ns.is_some_and(|stop| self.clock_ns >= stop) {
                self.stopped = true;
                return None;
            }
            if self.clock_ns >= self.on_until_ns {
                if let Some(o) = self.spec.on_off {
                    let off = self.period(o.off_ns, o);
                    self.clock_ns = self.on_until_ns.saturating_add(off);
                    self.on_until_ns = self.clock_ns.saturating_add(self.period(o.on_ns, o));
                    self.serialiser.restart();
                    continue;
                }
            }
            let size = self.spec.sizes.draw(&mut self.rng);
            let start = self.clock_ns;
            let wire = u64::from(size) + u64::from(self.spec.wire_overhead_bytes);
            self.clock_ns = start.saturating_add(self.serialiser.next_ns(wire));
            match self.spec.pattern {
                Pattern::Constant { .. } => return Some((start, size)),
                Pattern::Bernoulli { load, .. } => {
                    if load >= 1.0 || self.rng.unit() < load {
                        return Some((start, size));
                    }
                }
            }
        }
    }

    /// Restarts the pattern at `now_ns` if its clock is behind (a source held by a full
    /// queue offers nothing while held, then starts afresh).
    pub fn resume_at(&mut self, now_ns: u64) {
        if now_ns > self.clock_ns {
            self.clock_ns = now_ns;
            self.serialiser.restart();
        }
    }

    /// Stops the source for good.
    pub fn stop(&mut self) {
        self.stopped = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(pattern: Pattern) -> SourceSpec {
        SourceSpec {
            pattern,
            on_off: None,
            sizes: SizeMix::fixed(1500).unwrap(),
            wire_overhead_bytes: 0,
            start_ns: 5_000_000,
            stop_ns: Some(5_012_000),
        }
    }

    #[test]
    fn constant_rate_spaces_frames_by_their_wire_time() {
        let mut s = Source::new(
            spec(Pattern::Constant {
                rate_bps: 5_000_000_000,
            }),
            Rng::new(1),
        )
        .unwrap();
        let starts: Vec<u64> = std::iter::from_fn(|| s.next_frame())
            .map(|(t, _)| t)
            .collect();
        // 1500 B at 5 Gbit/s = 2,400 ns; 12 µs hold 5 frames.
        assert_eq!(
            starts,
            vec![5_000_000, 5_002_400, 5_004_800, 5_007_200, 5_009_600]
        );
    }

    #[test]
    fn bernoulli_frames_start_on_slot_boundaries_at_the_load() {
        let mut sp = spec(Pattern::Bernoulli {
            load: 0.5,
            line_rate_bps: 10_000_000_000,
        });
        sp.stop_ns = Some(5_000_000 + 1200 * 100_000);
        let mut s = Source::new(sp, Rng::new(3)).unwrap();
        let frames: Vec<(u64, u32)> = std::iter::from_fn(|| s.next_frame()).collect();
        assert!(frames.iter().all(|(t, _)| (t - 5_000_000) % 1200 == 0));
        let n = frames.len() as f64;
        assert!(
            (n / 100_000.0 - 0.5).abs() < 0.01,
            "{n} frames in 100,000 slots"
        );
    }

    #[test]
    fn on_off_is_silent_while_off() {
        let mut sp = spec(Pattern::Constant {
            rate_bps: 10_000_000_000,
        });
        sp.on_off = Some(OnOff {
            on_ns: 2400,
            off_ns: 10_000,
            exponential: false,
        });
        sp.stop_ns = Some(5_000_000 + 20_000);
        let mut s = Source::new(sp, Rng::new(1)).unwrap();
        let starts: Vec<u64> = std::iter::from_fn(|| s.next_frame())
            .map(|(t, _)| t - 5_000_000)
            .collect();
        assert_eq!(starts, vec![0, 1200, 12_400, 13_600]);
    }

    #[test]
    fn size_mix_draws_by_weight_and_rejects_bad_sizes() {
        let mix = SizeMix::new(&[(60, 7), (1500, 1)]).unwrap();
        assert_eq!(mix.max_bytes(), 1500);
        assert!((mix.mean_bytes() - (60.0 * 7.0 + 1500.0) / 8.0).abs() < 1e-9);
        let mut rng = Rng::new(9);
        let small = (0..80_000).filter(|_| mix.draw(&mut rng) == 60).count();
        assert!((small as f64 / 80_000.0 - 0.875).abs() < 0.01);
        assert!(SizeMix::fixed(59).is_err());
        assert!(SizeMix::new(&[(100, 0)]).is_err());
    }

    #[test]
    fn resume_restarts_the_clock_after_a_hold() {
        let mut s = Source::new(
            spec(Pattern::Constant {
                rate_bps: 10_000_000_000,
            }),
            Rng::new(1),
        )
        .unwrap();
        assert_eq!(s.next_frame(), Some((5_000_000, 1500)));
        s.resume_at(5_005_000);
        assert_eq!(s.next_frame(), Some((5_005_000, 1500)));
        assert_eq!(s.next_frame(), Some((5_006_200, 1500)));
    }

    #[test]
    fn invalid_specs_are_refused() {
        assert!(Source::new(spec(Pattern::Constant { rate_bps: 0 }), Rng::new(0)).is_err());
        assert!(Source::new(
            spec(Pattern::Bernoulli {
                load: 1.5,
                line_rate_bps: 1
            }),
            Rng::new(0)
        )
        .is_err());
        let mut sp = spec(Pattern::Constant { rate_bps: 1 });
        sp.stop_ns = Some(1);
        assert!(Source::new(sp, Rng::new(0)).is_err());
    }
}
