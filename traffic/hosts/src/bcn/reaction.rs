//! The reaction point: BCNs (and its own timer) in, the regulated rate out.
//!
//! On a BCN with feedback Fb (64-byte pages, |Fb| saturated at Fbmax, then quantised if
//! that feature is on): negative ⇒ R ← R·(1 − min(Gd·|Fb|, max decrease)); positive ⇒
//! R ← R + min(Gi·Fb·Ru, max increase·R); severe ⇒ the largest cut, or BCN(0,0)'s stop
//! and restart at Rmin. R stays within [min rate, line rate]. The first negative BCN
//! installs the limiter (starting from the line rate or the measured sending rate) and
//! the rate-limiter tag RLT(CPID); while it is installed, the drift timer adds its step
//! every interval; when R is back at line rate the limiter, tag and timer go.

use super::features::{InitialRate, PositiveFrom, RpFeatures, Severe};
use super::meter::RateMeter;
use super::BcnFeedback;
use crate::rng::Rng;

/// RP parameters: rates in bit/s, Gd per 64-byte page, Gi dimensionless.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RpConfig {
    /// The host link's rate: the unlimited rate, bit/s.
    pub line_rate_bps: f64,
    /// The regulator never goes below this, bit/s.
    pub min_rate_bps: f64,
    /// Decrease gain per page of |Fb|.
    pub gd_per_page: f64,
    /// Increase gain.
    pub gi: f64,
    /// Rate unit of the increase, bit/s.
    pub ru_bps: f64,
    /// |Fb| saturates here, pages (Qeq·(1 + 2W)).
    pub fb_max_pages: i32,
    /// The 2006 RP's further features, each off or on.
    pub features: RpFeatures,
}

impl RpConfig {
    /// Seed 003's gains (Gi 0.53, Gd 2.6e-4 per page, Ru 1 Mbit/s, Fbmax 1,875 pages)
    /// for a link of `line_rate_bps`, floored at `min_rate_bps`, every feature off.
    pub fn seed_003(line_rate_bps: f64, min_rate_bps: f64) -> RpConfig {
        RpConfig {
            line_rate_bps,
            min_rate_bps,
            gd_per_page: 2.6e-4,
            gi: 0.53,
            ru_bps: 1e6,
            fb_max_pages: 1875,
            features: RpFeatures::OFF,
        }
    }

    /// Checks the values: 0 < Rmin ≤ line rate, 0 < Gd·Fbmax < 1 (a cut keeps R > 0),
    /// Gi ≥ 0, Ru > 0, and each feature's own.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.min_rate_bps > 0.0 && self.min_rate_bps <= self.line_rate_bps) {
            return Err(format!(
                "need 0 < min_rate_bps <= line_rate_bps: {}, {}",
                self.min_rate_bps, self.line_rate_bps
            ));
        }
        let cut = self.gd_per_page * f64::from(self.fb_max_pages);
        if !(cut > 0.0 && cut < 1.0) {
            return Err(format!(
                "gd_per_page·fb_max_pages must be in (0, 1) so a cut keeps R > 0: {} × {}",
                self.gd_per_page, self.fb_max_pages
            ));
        }
        if !(self.gi >= 0.0 && self.ru_bps > 0.0) {
            return Err(format!(
                "need gi >= 0 and ru_bps > 0: {}, {}",
                self.gi, self.ru_bps
            ));
        }
        self.features
            .validate(self.min_rate_bps, self.line_rate_bps)
    }
}

/// The RP's state after acting on a BCN or its timer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateChange {
    /// When it acted, ns.
    pub now_ns: u64,
    /// The regulated rate, bit/s.
    pub rate_bps: f64,
    /// Whether a limiter is installed.
    pub limited: bool,
    /// The CPID frames are tagged with.
    pub rlt_cpid: Option<u64>,
    /// BCN(0,0): send nothing before this time, ns.
    pub hold_until_ns: Option<u64>,
}

/// Pure RP logic: feed BCNs, timer expiries and (for a limiter starting at the current
/// rate) the bytes sent; read the regulated rate.
#[derive(Debug, Clone)]
pub struct ReactionPoint {
    config: RpConfig,
    rate_bps: f64,
    rlt_cpid: Option<u64>,
    ignored: u64,
    drift_next_ns: Option<u64>,
    held_until_ns: u64,
    meter: Option<RateMeter>,
    rng: Rng,
}

impl ReactionPoint {
    /// Starts unlimited, at line rate; BCN(0,0) back-offs drawn from seed 0.
    pub fn new(config: RpConfig) -> Result<ReactionPoint, String> {
        ReactionPoint::seeded(config, 0)
    }

    /// Starts unlimited, at line rate; BCN(0,0) back-offs drawn from `seed`.
    pub fn seeded(config: RpConfig, seed: u64) -> Result<ReactionPoint, String> {
        config.validate()?;
        let meter = match config.features.initial_rate {
            InitialRate::CurrentRate { window_ns } => Some(RateMeter::new(window_ns)),
            InitialRate::LineRate => None,
        };
        Ok(ReactionPoint {
            rate_bps: config.line_rate_bps,
            config,
            rlt_cpid: None,
            ignored: 0,
            drift_next_ns: None,
            held_until_ns: 0,
            meter,
            rng: Rng::new(seed),
        })
    }

    /// The parameters.
    pub fn config(&self) -> &RpConfig {
        &self.config
    }

    /// The regulated rate, bit/s (line rate when unlimited).
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    /// The CPID frames are tagged with, None when no limiter is installed.
    pub fn rlt_cpid(&self) -> Option<u64> {
        self.rlt_cpid
    }

    /// Whether a limiter is installed.
    pub fn limited(&self) -> bool {
        self.rlt_cpid.is_some()
    }

    /// BCNs that did not apply (positive from a congestion point that may not raise the
    /// rate, or Fb = 0 after quantisation).
    pub fn ignored(&self) -> u64 {
        self.ignored
    }

    /// When the RP next wants `on_timer` (the next drift step), ns.
    pub fn next_timer_ns(&self) -> Option<u64> {
        self.drift_next_ns
    }

    /// The source sent `wire_bytes` (frame and wire overhead) at `now_ns`; only a limiter
    /// that starts from the current rate needs to know.
    pub fn note_sent(&mut self, now_ns: u64, wire_bytes: u64) {
        if let Some(meter) = &mut self.meter {
            meter.note(now_ns, wire_bytes);
        }
    }

    fn change(&self, now_ns: u64, hold_until_ns: Option<u64>) -> RateChange {
        RateChange {
            now_ns,
            rate_bps: self.rate_bps,
            limited: self.limited(),
            rlt_cpid: self.rlt_cpid,
            hold_until_ns,
        }
    }

    /// Installs the limiter at `now_ns` if there is none: its starting rate, the drift timer.
    fn install(&mut self, now_ns: u64) {
        if self.limited() {
            return;
        }
        let cfg = &self.config;
        self.rate_bps = match &self.meter {
            Some(meter) => meter.rate_bps(now_ns),
            None => cfg.line_rate_bps,
        }
        .clamp(cfg.min_rate_bps, cfg.line_rate_bps);
        self.drift_next_ns = cfg.features.drift.map(|d| now_ns + d.interval_ns);
    }

    /// Clamps R; at line rate the limiter, tag and drift timer go.
    fn settle(&mut self) {
        let cfg = &self.config;
        self.rate_bps = self.rate_bps.clamp(cfg.min_rate_bps, cfg.line_rate_bps);
        if self.rate_bps >= cfg.line_rate_bps {
            self.rlt_cpid = None;
            self.drift_next_ns = None;
        }
    }

    /// Acts on one BCN at `now_ns`; None when it does not apply.
    pub fn on_bcn(&mut self, now_ns: u64, bcn: &BcnFeedback) -> Option<RateChange> {
        let cfg = self.config;
        let features = cfg.features;
        if let (
            true,
            Severe::Stop {
                backoff_max_ns,
                restart_rate_bps,
            },
        ) = (bcn.severe, features.severe)
        {
            self.install(now_ns);
            let backoff = 1 + self.rng.below(backoff_max_ns);
            self.held_until_ns = now_ns + backoff;
            self.rate_bps = restart_rate_bps;
            self.rlt_cpid = Some(bcn.cpid);
            self.settle();
            return Some(self.change(now_ns, Some(self.held_until_ns)));
        }
        let mut fb = if bcn.severe {
            -f64::from(cfg.fb_max_pages)
        } else {
            f64::from(bcn.fb_pages.clamp(-cfg.fb_max_pages, cfg.fb_max_pages))
        };
        if let Some(q) = features.quantisation {
            fb = q.apply(fb);
        }
        let positive_applies = match features.positive {
            PositiveFrom::TaggedCp => self.rlt_cpid == Some(bcn.cpid),
            PositiveFrom::AnyCp => self.limited(),
        };
        if fb < 0.0 {
            self.install(now_ns);
            let cut = cfg.gd_per_page * -fb;
            let cut = features.max_decrease.map_or(cut, |alpha| cut.min(alpha));
            self.rate_bps *= 1.0 - cut;
            self.rlt_cpid = Some(bcn.cpid);
        } else if fb > 0.0 && positive_applies {
            let step = cfg.gi * fb * cfg.ru_bps;
            let step = features
                .max_increase
                .map_or(step, |beta| step.min(beta * self.rate_bps));
            self.rate_bps += step;
        } else {
            self.ignored += 1;
            return None;
        }
        self.settle();
        Some(self.change(now_ns, None))
    }

    /// Takes every drift step due by `now_ns` (steps that fall in a BCN(0,0) back-off are
    /// skipped: the source restarts at Rmin); None when none was due.
    pub fn on_timer(&mut self, now_ns: u64) -> Option<RateChange> {
        let drift = self.config.features.drift?;
        let mut stepped = false;
        while let Some(at) = self.drift_next_ns {
            if at > now_ns {
                break;
            }
            if at >= self.held_until_ns {
                self.rate_bps += drift.step_bps;
            }
            self.drift_next_ns = Some(at + drift.interval_ns);
            stepped = true;
            self.settle();
        }
        stepped.then(|| self.change(now_ns, None))
    }
}

#[cfg(test)]
mod tests {
    use super::super::features::{Drift, Quantisation};
    use super::*;

    fn bcn(cpid: u64, fb: i32, severe: bool) -> BcnFeedback {
        BcnFeedback {
            cpid,
            qoff_pages: 0,
            qdelta_pages: 0,
            fb_pages: fb,
            severe,
            timestamp_us: 0,
            sample_offset: 0,
            sample_len: 0,
        }
    }

    fn rp() -> ReactionPoint {
        ReactionPoint::new(RpConfig::seed_003(10e9, 1e7)).unwrap()
    }

    fn with(features: RpFeatures) -> ReactionPoint {
        let mut c = RpConfig::seed_003(10e9, 1e7);
        c.features = features;
        ReactionPoint::seeded(c, 7).unwrap()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-3
    }

    #[test]
    fn one_negative_step_cuts_by_gd_times_fb_and_tags() {
        let mut r = rp();
        let c = r.on_bcn(1_000, &bcn(7, -1000, false)).unwrap();
        // 10 Gbit/s × (1 − 2.6e-4 × 1000) = 7.4 Gbit/s.
        assert!((c.rate_bps - 7.4e9).abs() < 1.0, "{}", c.rate_bps);
        assert_eq!(c.rlt_cpid, Some(7));
        assert!(c.limited);
        assert_eq!(c.hold_until_ns, None);
    }

    #[test]
    fn a_positive_step_adds_gi_fb_ru_only_from_the_tagged_cp() {
        let mut r = rp();
        r.on_bcn(0, &bcn(7, -1000, false)).unwrap();
        assert_eq!(r.on_bcn(1, &bcn(8, 100, false)), None);
        let c = r.on_bcn(2, &bcn(7, 100, false)).unwrap();
        // 7.4 Gbit/s + 0.53 × 100 × 1 Mbit/s = 7.453 Gbit/s.
        assert!((c.rate_bps - 7.453e9).abs() < 1.0, "{}", c.rate_bps);
        assert_eq!(r.ignored(), 1);
    }

    #[test]
    fn severe_is_the_largest_cut_and_feedback_saturates() {
        let mut a = rp();
        let mut b = rp();
        let severe = a.on_bcn(0, &bcn(7, 5, true)).unwrap();
        let saturated = b.on_bcn(0, &bcn(7, -100_000, false)).unwrap();
        // 10 Gbit/s × (1 − 2.6e-4 × 1875) = 5.125 Gbit/s.
        assert!((severe.rate_bps - 5.125e9).abs() < 1.0);
        assert_eq!(severe.rate_bps, saturated.rate_bps);
    }

    #[test]
    fn back_at_line_rate_the_limiter_and_tag_go() {
        let mut r = rp();
        r.on_bcn(0, &bcn(7, -10, false)).unwrap();
        let c = r.on_bcn(1, &bcn(7, 1875, false)).unwrap();
        assert_eq!(c.rate_bps, 10e9);
        assert!(!c.limited);
        assert_eq!(c.rlt_cpid, None);
    }

    #[test]
    fn bad_gains_are_refused() {
        let mut c = RpConfig::seed_003(10e9, 1e7);
        c.gd_per_page = 0.53; // seed 001's listing: 0.53 × 1875 ≫ 1
        assert!(ReactionPoint::new(c).is_err());
        assert!(ReactionPoint::new(RpConfig::seed_003(10e9, 0.0)).is_err());
        let mut c = RpConfig::seed_003(10e9, 1e7);
        c.features.max_increase = Some(-0.1);
        assert!(ReactionPoint::new(c).unwrap_err().contains("max_increase"));
    }

    #[test]
    fn max_decrease_caps_each_cut() {
        // Saturated Fb cuts 48.75 %; capped at 10 %: 10 → 9 → 8.1 → 7.29 Gbit/s, while a
        // cut below the cap (Gd × 100 = 2.6 %) is untouched: 7.29 × 0.974 = 7.10046.
        let mut r = with(RpFeatures {
            max_decrease: Some(0.1),
            ..RpFeatures::OFF
        });
        let rates: Vec<f64> = (0..3)
            .map(|k| r.on_bcn(k, &bcn(7, -1875, false)).unwrap().rate_bps)
            .collect();
        assert!(close(rates[0], 9e9) && close(rates[1], 8.1e9) && close(rates[2], 7.29e9));
        let c = r.on_bcn(3, &bcn(7, -100, false)).unwrap();
        assert!(close(c.rate_bps, 7.100_46e9), "{}", c.rate_bps);
    }

    #[test]
    fn max_increase_caps_each_step_at_a_share_of_r() {
        // Fb −1,731 pages cuts 45.006 %: 5.4994 Gbit/s. Then +1,875 pages would add
        // 993.75 Mbit/s, capped at 10 % of R: 5.4994 → 6.04934 → 6.654274 Gbit/s; a small
        // step (+100 pages = 53 Mbit/s) is below the cap: 6.707274 Gbit/s.
        let mut r = with(RpFeatures {
            max_increase: Some(0.1),
            ..RpFeatures::OFF
        });
        let c = r.on_bcn(0, &bcn(7, -1731, false)).unwrap();
        assert!(close(c.rate_bps, 5.4994e9), "{}", c.rate_bps);
        let a = r.on_bcn(1, &bcn(7, 1875, false)).unwrap().rate_bps;
        let b = r.on_bcn(2, &bcn(7, 1875, false)).unwrap().rate_bps;
        let d = r.on_bcn(3, &bcn(7, 100, false)).unwrap().rate_bps;
        assert!(close(a, 6.04934e9) && close(b, 6.654274e9) && close(d, 6.707274e9));
    }

    #[test]
    fn drift_adds_its_step_every_interval_while_limited() {
        let mut r = with(RpFeatures {
            drift: Some(Drift {
                interval_ns: 100_000,
                step_bps: 50e6,
            }),
            ..RpFeatures::OFF
        });
        assert_eq!(r.next_timer_ns(), None);
        assert_eq!(r.on_timer(1_000_000), None);
        // Installed at 1 ms: 10 × (1 − 0.26) = 7.4 Gbit/s; steps at 1.1, 1.2, 1.3 ms.
        r.on_bcn(1_000_000, &bcn(7, -1000, false)).unwrap();
        assert_eq!(r.next_timer_ns(), Some(1_100_000));
        assert_eq!(r.on_timer(1_099_999), None);
        let c = r.on_timer(1_100_000).unwrap();
        assert!(close(c.rate_bps, 7.45e9));
        // Two steps due at once (1.2 and 1.3 ms) are both taken.
        let c = r.on_timer(1_350_000).unwrap();
        assert!(close(c.rate_bps, 7.55e9));
        assert_eq!(r.next_timer_ns(), Some(1_400_000));
        // A BCN does not move the timer.
        r.on_bcn(1_380_000, &bcn(7, -100, false)).unwrap();
        assert_eq!(r.next_timer_ns(), Some(1_400_000));
    }

    #[test]
    fn drift_back_to_line_rate_removes_the_limiter_and_stops() {
        let mut r = with(RpFeatures {
            drift: Some(Drift {
                interval_ns: 10,
                step_bps: 1e9,
            }),
            ..RpFeatures::OFF
        });
        r.on_bcn(0, &bcn(7, -100, false)).unwrap(); // 9.74 Gbit/s
        let c = r.on_timer(10).unwrap();
        assert_eq!(c.rate_bps, 10e9);
        assert!(!c.limited && c.rlt_cpid.is_none());
        assert_eq!(r.next_timer_ns(), None);
    }

    #[test]
    fn bcn_0_0_stops_for_a_random_time_up_to_tmax_then_restarts_at_rmin() {
        let features = RpFeatures {
            severe: Severe::Stop {
                backoff_max_ns: 100_000,
                restart_rate_bps: 100e6,
            },
            ..RpFeatures::OFF
        };
        let mut r = with(features);
        let c = r.on_bcn(1_000, &bcn(9, 0, true)).unwrap();
        let hold = c.hold_until_ns.unwrap();
        assert!(hold > 1_000 && hold <= 101_000, "{hold}");
        assert_eq!(c.rate_bps, 100e6);
        assert_eq!(c.rlt_cpid, Some(9));
        // The same seed draws the same back-off; the draws vary with the seed.
        let mut twin = with(features);
        assert_eq!(
            twin.on_bcn(1_000, &bcn(9, 0, true)).unwrap().hold_until_ns,
            Some(hold)
        );
        let mut c = RpConfig::seed_003(10e9, 1e7);
        c.features = features;
        let holds: std::collections::BTreeSet<u64> = (0..20)
            .map(|seed| {
                let mut r = ReactionPoint::seeded(c, seed).unwrap();
                r.on_bcn(0, &bcn(9, 0, true))
                    .unwrap()
                    .hold_until_ns
                    .unwrap()
            })
            .collect();
        assert!(holds.len() > 10 && holds.iter().all(|&h| (1..=100_000).contains(&h)));
        // Without the severe bit the same frame is ordinary feedback.
        assert_eq!(r.on_bcn(200_000, &bcn(9, 0, false)), None);
    }

    #[test]
    fn drift_steps_inside_a_back_off_are_skipped() {
        let mut r = with(RpFeatures {
            drift: Some(Drift {
                interval_ns: 1_000,
                step_bps: 1e6,
            }),
            severe: Severe::Stop {
                backoff_max_ns: 1,
                restart_rate_bps: 100e6,
            },
            ..RpFeatures::OFF
        });
        // Back-off of exactly 1 ns (Tmax 1 ns): held until 1; steps at 1,000 and 2,000.
        assert_eq!(
            r.on_bcn(0, &bcn(9, 0, true)).unwrap().hold_until_ns,
            Some(1)
        );
        assert!(close(r.on_timer(2_000).unwrap().rate_bps, 102e6));
        let mut r = with(RpFeatures {
            drift: Some(Drift {
                interval_ns: 1_000,
                step_bps: 1e6,
            }),
            severe: Severe::Stop {
                backoff_max_ns: 1_000_000,
                restart_rate_bps: 100e6,
            },
            ..RpFeatures::OFF
        });
        let hold = r
            .on_bcn(0, &bcn(9, 0, true))
            .unwrap()
            .hold_until_ns
            .unwrap();
        let steps_after = (1..=hold / 1_000 + 3).filter(|k| k * 1_000 >= hold).count();
        let c = r.on_timer((hold / 1_000 + 3) * 1_000).unwrap();
        assert!(
            close(c.rate_bps, 100e6 + steps_after as f64 * 1e6),
            "{}",
            c.rate_bps
        );
    }

    #[test]
    fn quantised_feedback_moves_in_whole_steps() {
        // 6 bits over 1,875 pages: Fb −100 → 3 steps = −89.2857 pages: cut 2.32143 %;
        // Fb −20 is below one step (29.76 pages) and is ignored.
        let mut r = with(RpFeatures {
            quantisation: Some(Quantisation {
                bits: 6,
                range_pages: 1875,
            }),
            ..RpFeatures::OFF
        });
        let c = r.on_bcn(0, &bcn(7, -100, false)).unwrap();
        assert!(close(
            c.rate_bps,
            10e9 * (1.0 - 2.6e-4 * 3.0 * 1875.0 / 63.0)
        ));
        assert_eq!(r.on_bcn(1, &bcn(7, -20, false)), None);
        assert_eq!(r.ignored(), 1);
        // A narrow range saturates earlier: 8 bits over 255 pages caps a cut at
        // 2.6e-4 × 255 = 6.63 %.
        let mut r = with(RpFeatures {
            quantisation: Some(Quantisation {
                bits: 8,
                range_pages: 255,
            }),
            ..RpFeatures::OFF
        });
        let c = r.on_bcn(0, &bcn(7, -1875, false)).unwrap();
        assert!(close(c.rate_bps, 10e9 * (1.0 - 2.6e-4 * 255.0)));
    }

    #[test]
    fn positive_feedback_from_any_cp_when_asked() {
        let mut r = with(RpFeatures {
            positive: PositiveFrom::AnyCp,
            ..RpFeatures::OFF
        });
        // Unlimited: nothing to raise, from any CP.
        assert_eq!(r.on_bcn(0, &bcn(8, 100, false)), None);
        r.on_bcn(1, &bcn(7, -1000, false)).unwrap();
        let c = r.on_bcn(2, &bcn(8, 100, false)).unwrap();
        assert!(close(c.rate_bps, 7.453e9));
        assert_eq!(c.rlt_cpid, Some(7)); // the tag stays the limiting CP's
    }

    #[test]
    fn a_limiter_may_start_from_the_current_rate() {
        let mut r = with(RpFeatures {
            initial_rate: InitialRate::CurrentRate { window_ns: 100_000 },
            ..RpFeatures::OFF
        });
        // 1,500 bytes every 2.4 µs for 1 ms: 5 Gbit/s; the first cut starts there:
        // 5 × (1 − 0.26) = 3.7 Gbit/s.
        let mut t = 0;
        while t < 1_000_000 {
            r.note_sent(t, 1500);
            t += 2400;
        }
        let c = r.on_bcn(t, &bcn(7, -1000, false)).unwrap();
        assert!((c.rate_bps - 3.7e9).abs() < 0.04e9, "{}", c.rate_bps);
        // The next cut starts from the limiter's rate, not the meter's.
        r.note_sent(t + 10, 1500);
        let d = r.on_bcn(t + 20, &bcn(7, -1000, false)).unwrap();
        assert!(close(d.rate_bps, c.rate_bps * 0.74));
        // A line-rate start (the default) cuts from 10 Gbit/s whatever was sent.
        let mut line = rp();
        line.note_sent(0, 1500);
        assert!(close(
            line.on_bcn(10, &bcn(7, -1000, false)).unwrap().rate_bps,
            7.4e9
        ));
    }
}
