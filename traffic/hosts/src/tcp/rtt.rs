//! Round-trip time estimation and the retransmission timeout (RFC 6298), with the
//! minimum and the formula Linux uses as an option.

/// How the RTO is derived from SRTT and RTTVAR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RtoFormula {
    /// RFC 6298 (2.3): RTO = max(min, SRTT + max(G, 4·RTTVAR)), clock granularity G.
    Rfc6298 {
        /// Clock granularity G, ns.
        granularity_ns: u64,
    },
    /// Linux (`tcp_rtt_estimator`, `__tcp_set_rto`): RTO = SRTT + max(min, 4·RTTVAR),
    /// so the minimum sits on top of the smoothed RTT rather than under it.
    Linux,
}

/// RTT and RTO state of a sender.
#[derive(Debug, Clone)]
pub struct RttEstimator {
    srtt_ns: Option<f64>,
    rttvar_ns: f64,
    min_rtt_ns: Option<u64>,
    latest_ns: Option<u64>,
    rto_ns: u64,
    backoff: u32,
    min_ns: u64,
    max_ns: u64,
    formula: RtoFormula,
}

impl RttEstimator {
    /// Before any sample: RTO = `initial_ns` (RFC 6298: 1 s), bounded by `min_ns`, `max_ns`.
    pub fn new(initial_ns: u64, min_ns: u64, max_ns: u64, formula: RtoFormula) -> Self {
        RttEstimator {
            srtt_ns: None,
            rttvar_ns: 0.0,
            min_rtt_ns: None,
            latest_ns: None,
            rto_ns: initial_ns.clamp(min_ns, max_ns),
            backoff: 0,
            min_ns,
            max_ns,
            formula,
        }
    }

    /// Takes one RTT measurement (RFC 6298 2.2/2.3, α = 1/8, β = 1/4) and clears the
    /// backoff (Karn: a valid sample means the path answers again).
    pub fn sample(&mut self, rtt_ns: u64) {
        let r = rtt_ns as f64;
        match self.srtt_ns {
            None => {
                self.srtt_ns = Some(r);
                self.rttvar_ns = r / 2.0;
            }
            Some(srtt) => {
                self.rttvar_ns = 0.75 * self.rttvar_ns + 0.25 * (srtt - r).abs();
                self.srtt_ns = Some(0.875 * srtt + 0.125 * r);
            }
        }
        self.min_rtt_ns = Some(self.min_rtt_ns.map_or(rtt_ns, |m| m.min(rtt_ns)));
        self.latest_ns = Some(rtt_ns);
        self.backoff = 0;
        let srtt = self.srtt_ns.unwrap_or(r);
        let var4 = 4.0 * self.rttvar_ns;
        let rto = match self.formula {
            RtoFormula::Rfc6298 { granularity_ns } => {
                (srtt + var4.max(granularity_ns as f64)).max(self.min_ns as f64)
            }
            RtoFormula::Linux => srtt + var4.max(self.min_ns as f64),
        };
        self.rto_ns = (rto.ceil() as u64).clamp(self.min_ns, self.max_ns);
    }

    /// The timeout to arm now, ns: the RTO doubled once per backoff, at most the maximum.
    pub fn rto_ns(&self) -> u64 {
        self.rto_ns
            .saturating_mul(1u64 << self.backoff.min(32))
            .min(self.max_ns)
    }

    /// The RTO without backoff, ns.
    pub fn base_rto_ns(&self) -> u64 {
        self.rto_ns
    }

    /// A timeout fired: the next one waits twice as long (RFC 6298 5.5).
    pub fn back_off(&mut self) {
        self.backoff = self.backoff.saturating_add(1);
    }

    /// Consecutive backoffs.
    pub fn backoff(&self) -> u32 {
        self.backoff
    }

    /// Smoothed RTT, ns (None before the first sample).
    pub fn srtt_ns(&self) -> Option<u64> {
        self.srtt_ns.map(|s| s.round() as u64)
    }

    /// RTT variation, ns.
    pub fn rttvar_ns(&self) -> u64 {
        self.rttvar_ns.round() as u64
    }

    /// Smallest RTT seen, ns.
    pub fn min_rtt_ns(&self) -> Option<u64> {
        self.min_rtt_ns
    }

    /// The latest sample, ns.
    pub fn latest_ns(&self) -> Option<u64> {
        self.latest_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn rfc6298_first_samples_and_the_200_ms_floor() {
        let mut r = RttEstimator::new(
            1000 * MS,
            200 * MS,
            120_000 * MS,
            RtoFormula::Rfc6298 { granularity_ns: MS },
        );
        assert_eq!(r.rto_ns(), 1000 * MS);
        r.sample(100 * MS);
        // SRTT 100, RTTVAR 50: 100 + 4·50 = 300 ms.
        assert_eq!(
            (r.srtt_ns(), r.rttvar_ns(), r.rto_ns()),
            (Some(100 * MS), 50 * MS, 300 * MS)
        );
        r.sample(60 * MS);
        // RTTVAR = 3/4·50 + 1/4·40 = 47.5; SRTT = 7/8·100 + 1/8·60 = 95; RTO 285 ms.
        assert_eq!(
            (r.srtt_ns(), r.rttvar_ns(), r.rto_ns()),
            (Some(95 * MS), 47_500_000, 285 * MS)
        );
        let mut small = RttEstimator::new(
            1000 * MS,
            200 * MS,
            120_000 * MS,
            RtoFormula::Rfc6298 { granularity_ns: MS },
        );
        small.sample(10 * MS);
        assert_eq!(small.rto_ns(), 200 * MS, "30 ms raised to the minimum");
    }

    #[test]
    fn linux_puts_the_minimum_on_top_of_srtt_and_backoff_doubles_to_the_cap() {
        let mut r = RttEstimator::new(1000 * MS, 200 * MS, 120_000 * MS, RtoFormula::Linux);
        r.sample(50 * MS);
        // 50 + max(200, 4·25) = 250 ms.
        assert_eq!(r.rto_ns(), 250 * MS);
        r.back_off();
        r.back_off();
        assert_eq!(r.rto_ns(), 1000 * MS);
        for _ in 0..20 {
            r.back_off();
        }
        assert_eq!(r.rto_ns(), 120_000 * MS);
        r.sample(50 * MS);
        assert_eq!(r.backoff(), 0);
        assert_eq!(r.min_rtt_ns(), Some(50 * MS));
    }
}
