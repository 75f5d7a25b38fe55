//! Tofino's `Lpf` / `DirectLpf`: a first-order low-pass filter per cell, in
//! continuous time. Each `execute(x)` moves the cell's output towards the input by
//! how much time has passed since the cell's previous sample, with the time
//! constant the control plane configured for rising (gain) and falling (decay)
//! output, and returns the output shifted right by the scale-down factor.
//!
//! Modes, as BF Runtime's `$LPF_SPEC_TYPE` names them (Δt since the cell's last
//! sample, τ the gain constant when the output rises and the decay constant when
//! it falls):
//! - `SAMPLE`: an exponentially weighted average of the samples,
//!   `y ← y + (x − y)·(1 − e^(−Δt/τ))`;
//! - `RATE`: the inputs are amounts (bytes, packets) and the output their sum per
//!   time constant, `y ← y·e^(−Δt/τ) + x` (a steady x every Δt settles at x·τ/Δt).
//!
//! A cell's first sample sets its output to the input (SAMPLE) or to x (RATE); a
//! time constant of 0 makes the filter follow its input. An unconfigured cell is
//! SAMPLE with both constants 0 and no scaling: it returns its input.

/// Filter mode (`$LPF_SPEC_TYPE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LpfMode {
    /// Average of the samples.
    Sample,
    /// Sum of the inputs per time constant.
    Rate,
}

/// One cell's configuration (BF Runtime's LPF spec).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LpfSpec {
    /// RATE or SAMPLE.
    pub mode: LpfMode,
    /// Time constant while the output rises, ns (`$LPF_SPEC_GAIN_TIME_CONSTANT_NS`).
    pub gain_ns: f64,
    /// Time constant while the output falls, ns (`$LPF_SPEC_DECAY_TIME_CONSTANT_NS`).
    pub decay_ns: f64,
    /// The output is shifted right by this many bits, 0..=31
    /// (`$LPF_SPEC_OUT_SCALE_DOWN_FACTOR`).
    pub scale_down: u32,
}

impl Default for LpfSpec {
    fn default() -> Self {
        LpfSpec {
            mode: LpfMode::Sample,
            gain_ns: 0.0,
            decay_ns: 0.0,
            scale_down: 0,
        }
    }
}

impl LpfSpec {
    /// Checks the ranges BF Runtime accepts; the error names the bad value.
    pub fn validate(&self) -> Result<(), String> {
        for (what, v) in [("gain", self.gain_ns), ("decay", self.decay_ns)] {
            if !v.is_finite() || v < 0.0 {
                return Err(format!(
                    "{what} time constant {v} ns is not a finite value >= 0"
                ));
            }
        }
        if self.scale_down > 31 {
            return Err(format!(
                "output scale-down factor {} is outside 0..=31",
                self.scale_down
            ));
        }
        Ok(())
    }
}

/// One filter cell: its configuration and state.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LpfCell {
    /// Configuration.
    pub spec: LpfSpec,
    /// The filter's output before scaling.
    pub y: f64,
    /// Time of the previous sample, ns (None: no sample yet).
    pub last_ns: Option<u64>,
}

/// e^(−Δt/τ): how much of the old output survives Δt (0 for τ = 0 or no history).
fn keep(dt: Option<f64>, tau: f64) -> f64 {
    match dt {
        Some(dt) if tau > 0.0 => (-dt / tau).exp(),
        _ => 0.0,
    }
}

impl LpfCell {
    /// Filters sample `x` taken at `now_ns`; returns the output, scaled down and
    /// saturated at `width` bits.
    pub fn execute(&mut self, x: u128, now_ns: u64, width: u32) -> u128 {
        let dt = self.last_ns.map(|t| now_ns.saturating_sub(t) as f64);
        self.last_ns = Some(now_ns);
        let x = x as f64;
        let s = self.spec;
        self.y = match s.mode {
            LpfMode::Sample => {
                let tau = if x > self.y { s.gain_ns } else { s.decay_ns };
                x + (self.y - x) * keep(dt, tau)
            }
            LpfMode::Rate => {
                // Rising when the input adds more than the gain constant lets decay.
                let rising = x >= self.y * (1.0 - keep(dt, s.gain_ns));
                let tau = if rising { s.gain_ns } else { s.decay_ns };
                self.y * keep(dt, tau) + x
            }
        };
        let out = (self.y.floor() as u128) >> s.scale_down;
        out.min(crate::bits::mask(width))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(mode: LpfMode, gain_ns: f64, decay_ns: f64, scale_down: u32) -> LpfCell {
        LpfCell {
            spec: LpfSpec {
                mode,
                gain_ns,
                decay_ns,
                scale_down,
            },
            ..LpfCell::default()
        }
    }

    #[test]
    fn an_unconfigured_cell_returns_its_input() {
        let mut c = LpfCell::default();
        assert_eq!(c.execute(100, 0, 16), 100);
        assert_eq!(c.execute(40, 1_000, 16), 40);
    }

    #[test]
    fn sample_mode_moves_towards_the_input_by_elapsed_time() {
        // τ = 1000 ns, samples 1000 ns apart: each step keeps e^-1 of the distance.
        let mut c = cell(LpfMode::Sample, 1000.0, 1000.0, 0);
        assert_eq!(
            c.execute(1000, 0, 16),
            1000,
            "the first sample sets the output"
        );
        let e = (-1.0f64).exp();
        // 0 + (1000 - 0)·e^-1 = 367.88 → 367.
        assert_eq!(c.execute(0, 1000, 16), (1000.0 * e).floor() as u128);
        assert_eq!(c.execute(0, 1000, 16), 367, "no time passed: no change");
        // Towards 2000 from 367.88: 2000 + (367.88 - 2000)·e^-1 = 1399.57 → 1399.
        let y = 1000.0 * e;
        assert_eq!(
            c.execute(2000, 2000, 16),
            (2000.0 + (y - 2000.0) * e) as u128
        );
    }

    #[test]
    fn sample_mode_rises_with_the_gain_and_falls_with_the_decay_constant() {
        let mut c = cell(LpfMode::Sample, 500.0, 4000.0, 0);
        c.execute(0, 0, 32);
        let up = c.execute(1000, 1000, 32);
        assert_eq!(up, (1000.0 * (1.0 - (-2.0f64).exp())) as u128, "τ = 500");
        let y = c.y;
        let down = c.execute(0, 2000, 32);
        assert_eq!(down, (y * (-0.25f64).exp()) as u128, "τ = 4000");
    }

    #[test]
    fn rate_mode_settles_at_the_input_per_time_constant() {
        // 100 bytes every 1000 ns with τ = 10 µs: 100·τ/Δt ≈ 1000 (exactly
        // 100 / (1 − e^-0.1) = 1050.8 in the discrete filter).
        let mut c = cell(LpfMode::Rate, 10_000.0, 10_000.0, 0);
        let mut out = 0;
        for i in 0..5000u64 {
            out = c.execute(100, i * 1000, 32);
        }
        let exact = 100.0 / (1.0 - (-0.1f64).exp());
        assert_eq!(out, exact.floor() as u128);
        // Input stops: one later sample of 0 after 10 µs keeps e^-1 of it.
        let y = c.y;
        assert_eq!(c.execute(0, 5_009_000, 32), (y * (-1.0f64).exp()) as u128);
    }

    #[test]
    fn the_output_is_scaled_down_and_saturates_at_the_width() {
        let mut c = cell(LpfMode::Sample, 0.0, 0.0, 3);
        assert_eq!(c.execute(1000, 0, 16), 125);
        let mut c = cell(LpfMode::Rate, 1e9, 1e9, 0);
        c.execute(60_000, 0, 16);
        assert_eq!(
            c.execute(60_000, 1, 16),
            0xffff,
            "120000 does not fit 16 bits"
        );
    }

    #[test]
    fn bad_specs_are_refused() {
        let mut s = LpfSpec {
            scale_down: 32,
            ..LpfSpec::default()
        };
        assert!(s.validate().unwrap_err().contains("0..=31"));
        s.scale_down = 0;
        s.gain_ns = -1.0;
        assert!(s.validate().unwrap_err().contains("gain"));
        s.gain_ns = f64::NAN;
        assert!(s.validate().is_err());
    }
}
