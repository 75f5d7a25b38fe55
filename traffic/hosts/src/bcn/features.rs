//! The parts of the 2006 BCN reaction point beyond the two gains, each off or on
//! (experiments/bcn/README.md "The reaction point's features" has their sources,
//! units and documented values).
//!
//! Off, every feature leaves the reaction point as congestion.md §1.4 writes it:
//! a cut of Gd·|Fb| however large, an increase of Gi·Fb·Ru however large, no
//! self-increase, severe feedback taken as Fb = −Fbmax, Fb used as received,
//! positive feedback only from the tagged congestion point, and a new limiter
//! starting from the line rate.

/// What the reaction point does with a BCN whose severe bit is set (Q ≥ Qsc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Severe {
    /// Treat it as the largest negative feedback, Fb = −Fbmax (US 8,792,352 claim 4).
    MaxDecrease,
    /// BCN(0,0): stop for a time drawn uniformly from (0, `backoff_max_ns`], then send
    /// at `restart_rate_bps` (Intel's rp_tmax and rp_rmin).
    Stop {
        /// Longest back-off, ns.
        backoff_max_ns: u64,
        /// The regulated rate after the back-off, bit/s.
        restart_rate_bps: f64,
    },
}

/// Which congestion points' positive feedback raises the rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PositiveFrom {
    /// Only the one the rate-limiter tag names (US 7,961,621's gating).
    TaggedCp,
    /// Any congestion point, while a limiter is installed.
    AnyCp,
}

/// Where a newly installed limiter's rate starts before the first cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitialRate {
    /// The host link's rate.
    LineRate,
    /// The rate the source was sending at, measured over the last `window_ns`.
    CurrentRate {
        /// The measuring window, ns.
        window_ns: u64,
    },
}

/// Self-increase: every `interval_ns` while a limiter is installed, R ← R + `step_bps`
/// (Intel's drift interval rp_td and drift increase rp_rd).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Drift {
    /// Time between two increases, ns (counted from the limiter's installation).
    pub interval_ns: u64,
    /// Increase per interval, bit/s.
    pub step_bps: f64,
}

/// |Fb| carried in `bits` bits over 0..=`range_pages` (QCN: 6 bits over Qeq·(1 + 2W)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantisation {
    /// Bits of the magnitude (the sign is carried apart), 1..=16.
    pub bits: u8,
    /// The magnitude the largest code stands for, pages; larger |Fb| saturates there.
    pub range_pages: i32,
}

impl Quantisation {
    /// Pages one code step stands for.
    pub fn step_pages(&self) -> f64 {
        f64::from(self.range_pages) / f64::from((1u32 << self.bits) - 1)
    }

    /// `fb_pages` as the reaction point sees it: |Fb| saturated at the range, cut down
    /// to a whole number of steps, sign kept.
    pub fn apply(&self, fb_pages: f64) -> f64 {
        let step = self.step_pages();
        let magnitude = fb_pages.abs().min(f64::from(self.range_pages));
        // A tiny allowance so a value a step's multiple in exact arithmetic stays there.
        let codes = (magnitude / step + 1e-9).floor();
        (codes * step).copysign(fb_pages)
    }
}

/// The features, each off (None, or the first variant) or on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RpFeatures {
    /// One cut is at most this fraction of R (Intel's rp_alpha, 0.5).
    pub max_decrease: Option<f64>,
    /// One increase is at most this fraction of R (Intel's rp_beta, 0.1).
    pub max_increase: Option<f64>,
    /// Self-increase every interval.
    pub drift: Option<Drift>,
    /// Severe feedback: the largest cut, or BCN(0,0)'s stop.
    pub severe: Severe,
    /// Fb quantisation.
    pub quantisation: Option<Quantisation>,
    /// Positive feedback from the tagged congestion point only, or from any.
    pub positive: PositiveFrom,
    /// A new limiter's starting rate.
    pub initial_rate: InitialRate,
}

impl Default for RpFeatures {
    fn default() -> Self {
        RpFeatures::OFF
    }
}

impl RpFeatures {
    /// Every feature off: congestion.md §1.4's reaction point.
    pub const OFF: RpFeatures = RpFeatures {
        max_decrease: None,
        max_increase: None,
        drift: None,
        severe: Severe::MaxDecrease,
        quantisation: None,
        positive: PositiveFrom::TaggedCp,
        initial_rate: InitialRate::LineRate,
    };

    /// Checks each feature's values against `min_rate_bps` and the line rate.
    pub fn validate(&self, min_rate_bps: f64, line_rate_bps: f64) -> Result<(), String> {
        if let Some(alpha) = self.max_decrease {
            if !(alpha > 0.0 && alpha < 1.0) {
                return Err(format!("max_decrease must be in (0, 1): {alpha}"));
            }
        }
        if let Some(beta) = self.max_increase {
            if !(beta > 0.0 && beta.is_finite()) {
                return Err(format!("max_increase must be positive: {beta}"));
            }
        }
        if let Some(d) = self.drift {
            if d.interval_ns == 0 || !(d.step_bps > 0.0 && d.step_bps.is_finite()) {
                return Err(format!(
                    "drift needs interval_ns > 0 and step_bps > 0: {} ns, {} bit/s",
                    d.interval_ns, d.step_bps
                ));
            }
        }
        if let Severe::Stop {
            backoff_max_ns,
            restart_rate_bps,
        } = self.severe
        {
            if backoff_max_ns == 0 {
                return Err("severe stop: backoff_max_ns must be positive".into());
            }
            // Line rate 0 means "the host's link, set later" (the simulator fills it in).
            let ceiling = if line_rate_bps > 0.0 {
                line_rate_bps
            } else {
                f64::INFINITY
            };
            if !(restart_rate_bps >= min_rate_bps && restart_rate_bps <= ceiling) {
                return Err(format!(
                    "severe stop: need min_rate_bps <= restart_rate_bps <= line rate: {restart_rate_bps}"
                ));
            }
        }
        if let Some(q) = self.quantisation {
            if !(1..=16).contains(&q.bits) || q.range_pages <= 0 {
                return Err(format!(
                    "quantisation needs 1 <= bits <= 16 and range_pages > 0: {} bits, {} pages",
                    q.bits, q.range_pages
                ));
            }
        }
        if let InitialRate::CurrentRate { window_ns } = self.initial_rate {
            if window_ns == 0 {
                return Err("initial rate: the measuring window_ns must be positive".into());
            }
        }
        Ok(())
    }
}

/// The features as a configuration file or a keyword call spells them (the names and
/// units of experiments/bcn/README.md's table); both Python bindings build from this.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FeatureOptions {
    /// `max_decrease`: the largest cut, a fraction of R.
    pub max_decrease: Option<f64>,
    /// `max_increase`: the largest increase, a fraction of R.
    pub max_increase: Option<f64>,
    /// `drift_interval_ns`: time between self-increases.
    pub drift_interval_ns: Option<u64>,
    /// `drift_step_bps`: one self-increase.
    pub drift_step_bps: Option<f64>,
    /// `severe`: "max_decrease" (default) or "stop".
    pub severe: Option<String>,
    /// `backoff_max_ns`: BCN(0,0)'s longest back-off.
    pub backoff_max_ns: Option<u64>,
    /// `restart_rate_bps`: the rate after BCN(0,0)'s back-off.
    pub restart_rate_bps: Option<f64>,
    /// `fb_bits`: bits of |Fb|.
    pub fb_bits: Option<u8>,
    /// `fb_range_pages`: the |Fb| the largest code stands for (default: Fbmax).
    pub fb_range_pages: Option<i32>,
    /// `positive_from`: "tagged" (default) or "any".
    pub positive_from: Option<String>,
    /// `initial_rate`: "line" (default) or "current".
    pub initial_rate: Option<String>,
    /// `rate_window_ns`: the window the current rate is measured over (default 100 µs).
    pub rate_window_ns: Option<u64>,
}

/// The current rate's default measuring window: 100 µs, some 40 full-size frames at
/// 5 Gbit/s, short beside the first BCN's arrival after a source starts.
pub const DEFAULT_RATE_WINDOW_NS: u64 = 100_000;

impl FeatureOptions {
    /// The features these options ask for (`fb_max_pages` is the quantisation's default
    /// range); an option that contradicts or misses another is named in the error.
    pub fn features(&self, fb_max_pages: i32) -> Result<RpFeatures, String> {
        let drift = match (self.drift_interval_ns, self.drift_step_bps) {
            (None, None) => None,
            (Some(interval_ns), Some(step_bps)) => Some(Drift {
                interval_ns,
                step_bps,
            }),
            _ => return Err("drift_interval_ns and drift_step_bps go together".into()),
        };
        let severe = match self.severe.as_deref() {
            None | Some("max_decrease") => {
                if self.backoff_max_ns.is_some() || self.restart_rate_bps.is_some() {
                    return Err("backoff_max_ns and restart_rate_bps need severe = \"stop\"".into());
                }
                Severe::MaxDecrease
            }
            Some("stop") => Severe::Stop {
                backoff_max_ns: self
                    .backoff_max_ns
                    .ok_or("severe = \"stop\" needs backoff_max_ns")?,
                restart_rate_bps: self
                    .restart_rate_bps
                    .ok_or("severe = \"stop\" needs restart_rate_bps")?,
            },
            Some(other) => {
                return Err(format!(
                    "severe {other:?}: use \"max_decrease\" or \"stop\""
                ))
            }
        };
        let quantisation = match (self.fb_bits, self.fb_range_pages) {
            (None, None) => None,
            (Some(bits), range) => Some(Quantisation {
                bits,
                range_pages: range.unwrap_or(fb_max_pages),
            }),
            (None, Some(_)) => return Err("fb_range_pages needs fb_bits".into()),
        };
        let positive = match self.positive_from.as_deref() {
            None | Some("tagged") => PositiveFrom::TaggedCp,
            Some("any") => PositiveFrom::AnyCp,
            Some(other) => {
                return Err(format!(
                    "positive_from {other:?}: use \"tagged\" or \"any\""
                ))
            }
        };
        let initial_rate = match self.initial_rate.as_deref() {
            None | Some("line") => {
                if self.rate_window_ns.is_some() {
                    return Err("rate_window_ns needs initial_rate = \"current\"".into());
                }
                InitialRate::LineRate
            }
            Some("current") => InitialRate::CurrentRate {
                window_ns: self.rate_window_ns.unwrap_or(DEFAULT_RATE_WINDOW_NS),
            },
            Some(other) => {
                return Err(format!(
                    "initial_rate {other:?}: use \"line\" or \"current\""
                ))
            }
        };
        Ok(RpFeatures {
            max_decrease: self.max_decrease,
            max_increase: self.max_increase,
            drift,
            severe,
            quantisation,
            positive,
            initial_rate,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantisation_cuts_to_whole_steps_and_saturates() {
        // QCN's 6 bits over Qeq·(1 + 2W) = 1,875 pages: a step of 1,875 / 63 pages.
        let q = Quantisation {
            bits: 6,
            range_pages: 1875,
        };
        let step = 1875.0 / 63.0;
        assert!((q.step_pages() - step).abs() < 1e-12);
        assert_eq!(q.apply(29.0), 0.0); // below one step
        assert!((q.apply(-100.0) + 3.0 * step).abs() < 1e-9); // 100 / 29.76 = 3.36
        assert!((q.apply(60.0) - 2.0 * step).abs() < 1e-9);
        assert_eq!(q.apply(-5000.0), -1875.0);
        assert_eq!(q.apply(1875.0), 1875.0);
        // 8 bits over 255 pages: one page per step, as a field in pages would carry it.
        let pages = Quantisation {
            bits: 8,
            range_pages: 255,
        };
        assert_eq!(pages.apply(-1000.0), -255.0);
        assert_eq!(pages.apply(37.0), 37.0);
    }

    #[test]
    fn options_spell_every_feature() {
        assert_eq!(
            FeatureOptions::default().features(1875),
            Ok(RpFeatures::OFF)
        );
        let all = FeatureOptions {
            max_decrease: Some(0.5),
            max_increase: Some(0.1),
            drift_interval_ns: Some(100_000),
            drift_step_bps: Some(1e6),
            severe: Some("stop".into()),
            backoff_max_ns: Some(100_000),
            restart_rate_bps: Some(100e6),
            fb_bits: Some(6),
            fb_range_pages: None,
            positive_from: Some("any".into()),
            initial_rate: Some("current".into()),
            rate_window_ns: None,
        };
        let f = all.features(1875).unwrap();
        assert_eq!(f.max_decrease, Some(0.5));
        assert_eq!(f.max_increase, Some(0.1));
        assert_eq!(
            f.drift,
            Some(Drift {
                interval_ns: 100_000,
                step_bps: 1e6
            })
        );
        assert_eq!(
            f.severe,
            Severe::Stop {
                backoff_max_ns: 100_000,
                restart_rate_bps: 100e6
            }
        );
        assert_eq!(
            f.quantisation,
            Some(Quantisation {
                bits: 6,
                range_pages: 1875
            })
        );
        assert_eq!(f.positive, PositiveFrom::AnyCp);
        assert_eq!(
            f.initial_rate,
            InitialRate::CurrentRate {
                window_ns: DEFAULT_RATE_WINDOW_NS
            }
        );
        for (bad, says) in [
            (
                FeatureOptions {
                    drift_step_bps: Some(1e6),
                    ..Default::default()
                },
                "go together",
            ),
            (
                FeatureOptions {
                    severe: Some("stop".into()),
                    ..Default::default()
                },
                "backoff_max_ns",
            ),
            (
                FeatureOptions {
                    severe: Some("halt".into()),
                    ..Default::default()
                },
                "severe \"halt\"",
            ),
            (
                FeatureOptions {
                    fb_range_pages: Some(255),
                    ..Default::default()
                },
                "fb_range_pages needs fb_bits",
            ),
            (
                FeatureOptions {
                    positive_from: Some("all".into()),
                    ..Default::default()
                },
                "positive_from",
            ),
            (
                FeatureOptions {
                    rate_window_ns: Some(5),
                    ..Default::default()
                },
                "rate_window_ns",
            ),
        ] {
            let error = bad.features(1875).unwrap_err();
            assert!(error.contains(says), "{error}");
        }
    }

    #[test]
    fn bad_values_name_the_feature() {
        let mut f = RpFeatures::OFF;
        assert!(f.validate(1e6, 10e9).is_ok());
        f.max_decrease = Some(1.0);
        assert!(f.validate(1e6, 10e9).unwrap_err().contains("max_decrease"));
        f = RpFeatures::OFF;
        f.drift = Some(Drift {
            interval_ns: 0,
            step_bps: 1e6,
        });
        assert!(f.validate(1e6, 10e9).unwrap_err().contains("drift"));
        f = RpFeatures::OFF;
        f.severe = Severe::Stop {
            backoff_max_ns: 100_000,
            restart_rate_bps: 0.5e6,
        };
        assert!(f
            .validate(1e6, 10e9)
            .unwrap_err()
            .contains("restart_rate_bps"));
        f = RpFeatures::OFF;
        f.quantisation = Some(Quantisation {
            bits: 17,
            range_pages: 1875,
        });
        assert!(f.validate(1e6, 10e9).unwrap_err().contains("quantisation"));
        f = RpFeatures::OFF;
        f.initial_rate = InitialRate::CurrentRate { window_ns: 0 };
        assert!(f.validate(1e6, 10e9).unwrap_err().contains("window_ns"));
    }
}
