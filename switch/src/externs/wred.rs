//! Tofino's `Wred` / `DirectWred`: random early detection per cell. Each
//! `execute(x)` averages the input (a queue depth, usually in cells) with the
//! configured time constant, as a SAMPLE-mode low-pass filter does, and decides:
//! below the minimum threshold never, at or above the maximum always, and in
//! between with a probability rising linearly from 0 to the maximum probability.
//! It returns the instance's `drop_value` when it decides to drop (or mark) and
//! `no_drop_value` otherwise. An unconfigured cell never drops.

use super::lpf::{LpfCell, LpfMode, LpfSpec};

/// One cell's configuration (BF Runtime's WRED spec).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WredSpec {
    /// Averaging time constant, ns (`$WRED_SPEC_TIME_CONSTANT_NS`).
    pub time_constant_ns: f64,
    /// Average at which dropping starts (`$WRED_SPEC_MIN_THRESH_CELLS`).
    pub min_thresh: u64,
    /// Average from which every sample drops (`$WRED_SPEC_MAX_THRESH_CELLS`).
    pub max_thresh: u64,
    /// Drop probability just below the maximum threshold, 0..=1
    /// (`$WRED_SPEC_MAX_PROBABILITY`).
    pub max_probability: f64,
}

impl Default for WredSpec {
    fn default() -> Self {
        WredSpec {
            time_constant_ns: 0.0,
            min_thresh: u64::MAX,
            max_thresh: u64::MAX,
            max_probability: 0.0,
        }
    }
}

impl WredSpec {
    /// Checks the ranges BF Runtime accepts; the error names the bad value.
    pub fn validate(&self) -> Result<(), String> {
        if !self.time_constant_ns.is_finite() || self.time_constant_ns < 0.0 {
            return Err(format!(
                "time constant {} ns is not a finite value >= 0",
                self.time_constant_ns
            ));
        }
        if self.min_thresh > self.max_thresh {
            return Err(format!(
                "minimum threshold {} is above the maximum {}",
                self.min_thresh, self.max_thresh
            ));
        }
        if !(0.0..=1.0).contains(&self.max_probability) {
            return Err(format!(
                "maximum probability {} is outside 0..=1",
                self.max_probability
            ));
        }
        Ok(())
    }
}

/// One WRED cell: its configuration and the average it keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WredCell {
    /// Configuration.
    pub spec: WredSpec,
    avg: LpfCell,
}

impl WredCell {
    /// A cell with configuration `spec` and no history.
    pub fn configured(spec: WredSpec) -> Self {
        WredCell {
            spec,
            avg: LpfCell::default(),
        }
    }

    /// The average so far.
    pub fn average(&self) -> f64 {
        self.avg.y
    }

    /// Takes sample `x` at `now_ns`; `uniform` is a draw in [0, 1). True: drop.
    pub fn execute(&mut self, x: u128, now_ns: u64, uniform: f64) -> bool {
        self.avg.spec = LpfSpec {
            mode: LpfMode::Sample,
            gain_ns: self.spec.time_constant_ns,
            decay_ns: self.spec.time_constant_ns,
            scale_down: 0,
        };
        self.avg.execute(x, now_ns, 128);
        let (lo, hi) = (self.spec.min_thresh as f64, self.spec.max_thresh as f64);
        let avg = self.avg.y;
        if self.spec.min_thresh == u64::MAX || avg < lo {
            false
        } else if avg >= hi {
            true
        } else {
            uniform < self.spec.max_probability * (avg - lo) / (hi - lo)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(tc: f64, lo: u64, hi: u64, p: f64) -> WredCell {
        WredCell::configured(WredSpec {
            time_constant_ns: tc,
            min_thresh: lo,
            max_thresh: hi,
            max_probability: p,
        })
    }

    #[test]
    fn below_min_never_at_max_always_between_linearly() {
        let mut c = cell(0.0, 100, 200, 0.5);
        assert!(!c.execute(99, 0, 0.0));
        assert!(c.execute(200, 1, 0.999));
        // avg 150: probability 0.5·50/100 = 0.25.
        assert!(c.execute(150, 2, 0.2499));
        assert!(!c.execute(150, 3, 0.25));
    }

    #[test]
    fn the_decision_follows_the_average_not_the_sample() {
        // τ = 1000 ns, samples 1000 ns apart: a burst to 1000 from 0 averages 632.
        let mut c = cell(1000.0, 700, 800, 1.0);
        assert!(!c.execute(0, 0, 0.0));
        assert!(!c.execute(1000, 1000, 0.0), "average 632 < 700");
        assert!((c.average() - 1000.0 * (1.0 - (-1.0f64).exp())).abs() < 1e-9);
        // Next: 1000 + (632.1 - 1000)·e^-1 = 864.7 ≥ 800.
        assert!(c.execute(1000, 2000, 0.999));
    }

    #[test]
    fn an_unconfigured_cell_never_drops() {
        let mut c = WredCell::default();
        assert!(!c.execute(u128::from(u64::MAX), 0, 0.0));
    }

    #[test]
    fn bad_specs_are_refused() {
        let mut s = WredSpec {
            time_constant_ns: 1.0,
            min_thresh: 10,
            max_thresh: 5,
            max_probability: 0.5,
        };
        assert!(s.validate().unwrap_err().contains("above the maximum"));
        s.max_thresh = 20;
        s.max_probability = 1.5;
        assert!(s.validate().unwrap_err().contains("0..=1"));
        s.max_probability = 1.0;
        assert!(s.validate().is_ok());
    }
}
