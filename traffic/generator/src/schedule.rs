//! Departure schedules: when each frame leaves (offset from the start, ns) and how big it is.
//!
//! Pure arithmetic with a seeded generator, so a schedule can be checked without sending.

use bufferlab_hosts::rng::Rng;

use crate::header::{check_frame_size, wire_bits};

/// How departures are spread in time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arrivals {
    /// Constant gaps: one frame every `wire_bits / rate` seconds.
    Constant,
    /// Slotted Bernoulli arrivals on a link of `link_bps`: each frame-time slot carries a
    /// frame with probability `rate / link_bps`, so gaps are geometric with the same mean.
    Bernoulli {
        /// Line rate of the slotted link, bit/s (same wire convention as the target rate).
        link_bps: f64,
    },
}

/// Frame sizes (bytes incl. FCS) of successive frames.
#[derive(Debug, Clone, PartialEq)]
pub enum Sizes {
    /// Every frame has this size.
    Fixed(usize),
    /// Each frame draws a size with probability proportional to its weight.
    Mixed(Vec<(usize, f64)>),
}

/// One planned departure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Departure {
    /// Offset from the start of the run, ns.
    pub offset_ns: f64,
    /// Frame size in bytes incl. FCS.
    pub frame_size: usize,
}

/// An endless sequence of departures; the sender decides when to stop.
#[derive(Debug, Clone)]
pub struct Schedule {
    rate_bps: Option<f64>,
    arrivals: Arrivals,
    sizes: Sizes,
    size_total_weight: f64,
    burst_frames: u64,
    rng: Rng,
    index: u64,
    clock_ns: f64,
    burst_start_ns: f64,
}

impl Schedule {
    /// Whether departures are planned in time (a rate) rather than all due at once.
    pub fn is_paced(&self) -> bool {
        self.rate_bps.is_some()
    }

    /// Build a schedule; `rate_bps` is line bit/s (None = back-to-back, as fast as possible),
    /// `burst_frames` frames share each departure time (1 = no bursts).
    pub fn new(
        rate_bps: Option<f64>,
        arrivals: Arrivals,
        sizes: Sizes,
        burst_frames: u64,
        seed: u64,
    ) -> Result<Schedule, String> {
        if let Some(rate) = rate_bps {
            if !(rate.is_finite() && rate > 0.0) {
                return Err(format!("rate {rate} bit/s must be a positive number"));
            }
            if let Arrivals::Bernoulli { link_bps } = arrivals {
                if !(link_bps.is_finite() && link_bps >= rate) {
                    return Err(format!(
                        "Bernoulli arrivals need link rate {link_bps} bit/s >= target rate {rate} bit/s"
                    ));
                }
            }
        }
        if burst_frames == 0 {
            return Err("burst length must be at least 1 frame".into());
        }
        let size_total_weight = match &sizes {
            Sizes::Fixed(size) => {
                check_frame_size(*size)?;
                1.0
            }
            Sizes::Mixed(mix) => {
                if mix.is_empty() {
                    return Err("a size mix needs at least one frame size".into());
                }
                let mut total = 0.0;
                for &(size, weight) in mix {
                    check_frame_size(size)?;
                    if !(weight.is_finite() && weight > 0.0) {
                        return Err(format!(
                            "weight {weight} of frame size {size} must be positive"
                        ));
                    }
                    total += weight;
                }
                total
            }
        };
        Ok(Schedule {
            rate_bps,
            arrivals,
            sizes,
            size_total_weight,
            burst_frames,
            rng: Rng::new(seed),
            index: 0,
            clock_ns: 0.0,
            burst_start_ns: 0.0,
        })
    }

    fn draw_size(&mut self) -> usize {
        match &self.sizes {
            Sizes::Fixed(size) => *size,
            Sizes::Mixed(mix) => {
                let mut pick = self.rng.unit_nonzero() * self.size_total_weight;
                for &(size, weight) in mix {
                    if pick <= weight {
                        return size;
                    }
                    pick -= weight;
                }
                mix[mix.len() - 1].0
            }
        }
    }

    fn gap_ns(&mut self, frame_size: usize) -> f64 {
        let Some(rate) = self.rate_bps else {
            return 0.0;
        };
        let bits = wire_bits(frame_size);
        match self.arrivals {
            Arrivals::Constant => bits * 1e9 / rate,
            Arrivals::Bernoulli { link_bps } => {
                let p = rate / link_bps;
                let slots = if p >= 1.0 {
                    1.0
                } else {
                    (self.rng.unit_nonzero().ln() / (1.0 - p).ln())
                        .ceil()
                        .max(1.0)
                };
                slots * bits * 1e9 / link_bps
            }
        }
    }
}

impl Iterator for Schedule {
    type Item = Departure;

    fn next(&mut self) -> Option<Departure> {
        if self.index.is_multiple_of(self.burst_frames) {
            self.burst_start_ns = self.clock_ns;
        }
        let frame_size = self.draw_size();
        let departure = Departure {
            offset_ns: self.burst_start_ns,
            frame_size,
        };
        // A burst leaves at once but is charged its frames' gaps, so bursts keep the mean rate.
        self.clock_ns += self.gap_ns(frame_size);
        self.index += 1;
        Some(departure)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_rate_gaps_count_wire_overhead() {
        // 1 Gbit/s of 64-byte frames is 1,488,095 frames/s: 672 ns apart.
        let s = Schedule::new(Some(1e9), Arrivals::Constant, Sizes::Fixed(64), 1, 1).unwrap();
        let offsets: Vec<f64> = s.take(3).map(|d| d.offset_ns).collect();
        assert_eq!(offsets, vec![0.0, 672.0, 1344.0]);
    }

    #[test]
    fn bursts_share_a_departure_and_keep_the_mean_rate() {
        let s = Schedule::new(Some(1e9), Arrivals::Constant, Sizes::Fixed(64), 4, 1).unwrap();
        let offsets: Vec<f64> = s.take(8).map(|d| d.offset_ns).collect();
        assert_eq!(
            offsets,
            vec![0.0, 0.0, 0.0, 0.0, 2688.0, 2688.0, 2688.0, 2688.0]
        );
    }

    #[test]
    fn back_to_back_without_rate_has_no_gaps() {
        let s = Schedule::new(None, Arrivals::Constant, Sizes::Fixed(1518), 1, 1).unwrap();
        assert!(s.take(10).all(|d| d.offset_ns == 0.0));
    }

    #[test]
    fn bernoulli_gaps_are_whole_slots_with_the_target_mean() {
        let s = Schedule::new(
            Some(250e6),
            Arrivals::Bernoulli { link_bps: 1e9 },
            Sizes::Fixed(1000),
            1,
            7,
        )
        .unwrap();
        let slot = wire_bits(1000);
        let n = 200_000;
        let last = s.take(n + 1).last().unwrap().offset_ns;
        let mean_slots = last / slot / n as f64;
        assert!(
            (mean_slots - 4.0).abs() < 0.05,
            "mean gap {mean_slots} slots"
        );
        let s = Schedule::new(
            Some(250e6),
            Arrivals::Bernoulli { link_bps: 1e9 },
            Sizes::Fixed(1000),
            1,
            7,
        )
        .unwrap();
        assert!(s
            .take(1000)
            .all(|d| (d.offset_ns / slot).fract().abs() < 1e-6));
    }

    #[test]
    fn mixed_sizes_follow_weights() {
        let s = Schedule::new(
            Some(1e9),
            Arrivals::Constant,
            Sizes::Mixed(vec![(64, 7.0), (576, 4.0), (1518, 1.0)]),
            1,
            3,
        )
        .unwrap();
        let n = 120_000;
        let small = s.take(n).filter(|d| d.frame_size == 64).count();
        let share = small as f64 / n as f64;
        assert!(
            (share - 7.0 / 12.0).abs() < 0.01,
            "share of 64-byte frames {share}"
        );
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert!(Schedule::new(Some(0.0), Arrivals::Constant, Sizes::Fixed(64), 1, 0).is_err());
        assert!(Schedule::new(Some(1e6), Arrivals::Constant, Sizes::Fixed(40), 1, 0).is_err());
        assert!(Schedule::new(Some(1e6), Arrivals::Constant, Sizes::Fixed(64), 0, 0).is_err());
        assert!(Schedule::new(
            Some(2e9),
            Arrivals::Bernoulli { link_bps: 1e9 },
            Sizes::Fixed(64),
            1,
            0
        )
        .is_err());
        assert!(Schedule::new(None, Arrivals::Constant, Sizes::Mixed(vec![]), 1, 0).is_err());
    }
}
