//! Clocks for the live wrapper only (the engine never reads a clock): CLOCK_MONOTONIC
//! drives the switch's `now`, while kernel receive timestamps are CLOCK_REALTIME, so the
//! wrapper needs the offset between the two to put a frame's arrival on the engine's clock.

fn read(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; both clock ids always exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_MONOTONIC in ns: the switch's `now` in live mode.
pub fn monotonic_ns() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}

/// CLOCK_REALTIME in ns since the Unix epoch: the clock of kernel timestamps and pcap.
pub fn realtime_ns() -> u64 {
    read(libc::CLOCK_REALTIME)
}

/// Samples taken by [`ClockOffset::measure`]; the tightest one is kept.
const OFFSET_SAMPLES: usize = 16;

/// CLOCK_REALTIME minus CLOCK_MONOTONIC, in ns, as measured at one moment.
///
/// The offset changes when the realtime clock is stepped (settimeofday, NTP steps) and
/// drifts slowly while NTP slews it; measure again now and then in long runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockOffset {
    /// realtime − monotonic, ns.
    pub realtime_minus_monotonic_ns: i64,
    /// Half the width of the monotonic interval the realtime reading fell in, ns.
    pub uncertainty_ns: u64,
}

impl ClockOffset {
    /// Measure the offset: read monotonic, realtime, monotonic, and keep the sample whose
    /// two monotonic readings are closest (least disturbed by preemption).
    pub fn measure() -> Self {
        let mut best = ClockOffset {
            realtime_minus_monotonic_ns: 0,
            uncertainty_ns: u64::MAX,
        };
        for _ in 0..OFFSET_SAMPLES {
            let before = monotonic_ns();
            let real = realtime_ns();
            let after = monotonic_ns();
            let half = (after - before) / 2;
            if half < best.uncertainty_ns {
                best = ClockOffset {
                    realtime_minus_monotonic_ns: real as i64 - (before + half) as i64,
                    uncertainty_ns: half,
                };
            }
        }
        best
    }

    /// The monotonic time, ns, of a realtime instant such as a kernel timestamp.
    pub fn to_monotonic(&self, realtime_ns: u64) -> u64 {
        (realtime_ns as i64 - self.realtime_minus_monotonic_ns).max(0) as u64
    }

    /// The realtime instant, ns, of a monotonic time such as the engine's `now`.
    pub fn to_realtime(&self, monotonic_ns: u64) -> u64 {
        (monotonic_ns as i64 + self.realtime_minus_monotonic_ns).max(0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_are_inverse_and_use_the_offset() {
        let off = ClockOffset {
            realtime_minus_monotonic_ns: 1_700_000_000_000_000_000,
            uncertainty_ns: 10,
        };
        assert_eq!(off.to_monotonic(1_700_000_000_000_000_500), 500);
        assert_eq!(off.to_realtime(500), 1_700_000_000_000_000_500);
        // A realtime instant before the monotonic epoch clamps to 0 instead of wrapping.
        assert_eq!(off.to_monotonic(3), 0);
    }

    #[test]
    fn a_measured_offset_maps_realtime_now_near_monotonic_now() {
        let off = ClockOffset::measure();
        let mono = monotonic_ns();
        let mapped = off.to_monotonic(realtime_ns());
        let after = monotonic_ns();
        // The realtime reading happened between `mono` and `after`; allow the
        // measurement's own uncertainty (plus 1 ns of rounding) either side.
        let slack = off.uncertainty_ns + 1;
        assert!(mapped + slack >= mono && mapped <= after + slack, "{off:?}");
    }
}
