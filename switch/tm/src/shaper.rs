//! Exact integer timing: the port shaper (bit/s with wire overhead) and the
//! per-queue packet pacer (packets/s).
//!
//! Both divide in whole nanoseconds and carry the remainder into the next
//! back-to-back interval, so a long burst ends exactly where the real-valued
//! arithmetic says: frame k of a burst ends at floor(sum of bits * 1e9 / R).

const NS_PER_S: u128 = 1_000_000_000;

/// Length in ns of a PAUSE/PFC time of `quanta` (512 bit times each) on a
/// link of `link_bps`, rounded up; `None` for a link of unknown (0) rate.
pub fn pause_quanta_ns(quanta: u16, link_bps: u64) -> Option<u64> {
    if link_bps == 0 {
        return None;
    }
    let bits = u128::from(quanta) * 512 * NS_PER_S;
    u64::try_from(bits.div_ceil(u128::from(link_bps))).ok()
}

/// Serialisation time of frames on a port at `rate_bps`, counting wire overhead.
#[derive(Clone, Debug)]
pub(crate) struct Shaper {
    rate_bps: u64,
    wire_overhead_bytes: u32,
    /// Remainder (in bit·ns/s units, < rate) of the previous back-to-back frame.
    remainder: u64,
}

impl Shaper {
    /// A shaper at `rate_bps` (0 = unlimited) adding `wire_overhead_bytes` per frame.
    pub(crate) fn new(rate_bps: u64, wire_overhead_bytes: u32) -> Self {
        Shaper {
            rate_bps,
            wire_overhead_bytes,
            remainder: 0,
        }
    }

    /// Changes rate and overhead for frames not yet started.
    pub(crate) fn reconfigure(&mut self, rate_bps: u64, wire_overhead_bytes: u32) {
        if rate_bps != self.rate_bps {
            self.remainder = 0;
        }
        self.rate_bps = rate_bps;
        self.wire_overhead_bytes = wire_overhead_bytes;
    }

    /// The fractional nanosecond carried to the next back-to-back frame.
    pub(crate) fn remainder(&self) -> u64 {
        self.remainder
    }

    /// Puts back the carry `serialise_ns` started from, to serialise that frame again.
    pub(crate) fn restore(&mut self, remainder: u64) {
        self.remainder = remainder;
    }

    /// Serialisation time in ns of a frame; `back_to_back` carries the previous
    /// frame's fractional nanosecond, otherwise the port was idle and starts afresh.
    pub(crate) fn serialise_ns(&mut self, frame_bytes: u32, back_to_back: bool) -> u64 {
        if self.rate_bps == 0 {
            return 0;
        }
        let bits = (u128::from(frame_bytes) + u128::from(self.wire_overhead_bytes)) * 8;
        let carried = if back_to_back { self.remainder } else { 0 };
        let scaled = bits * NS_PER_S + u128::from(carried);
        let rate = u128::from(self.rate_bps);
        // The remainder is below the rate, itself a u64.
        self.remainder = (scaled % rate) as u64;
        u64::try_from(scaled / rate).unwrap_or(u64::MAX)
    }
}

/// Spacing of departures from one queue at `rate_pps` (BMv2 `set_queue_rate`).
#[derive(Clone, Debug)]
pub(crate) struct PpsPacer {
    rate_pps: u64,
    /// Start time of the last departure, if any since the rate was set.
    last_start: Option<u64>,
    /// Remainder (in ns·pps units, < rate) carried from the last spacing.
    remainder: u64,
}

impl PpsPacer {
    /// A pacer at `rate_pps` (0 = unlimited).
    pub(crate) fn new(rate_pps: u64) -> Self {
        PpsPacer {
            rate_pps,
            last_start: None,
            remainder: 0,
        }
    }

    /// Changes the rate; the next departure is spaced at the new rate.
    pub(crate) fn set_rate(&mut self, rate_pps: u64) {
        if rate_pps != self.rate_pps {
            self.remainder = 0;
        }
        self.rate_pps = rate_pps;
    }

    /// Earliest time the next departure may start.
    pub(crate) fn allowed_at(&self) -> u64 {
        match self.last_start {
            Some(last) if self.rate_pps > 0 => last.saturating_add(self.spacing().0),
            _ => 0,
        }
    }

    /// Records a departure starting at `start`.
    pub(crate) fn on_start(&mut self, start: u64) {
        if self.rate_pps == 0 {
            self.last_start = Some(start);
            return;
        }
        let (_, remainder) = self.spacing();
        // Carry only when the queue was held back to the rate; after an idle
        // gap the fraction belongs to a spacing that never constrained anything.
        self.remainder = if self.last_start.is_some() && start == self.allowed_at() {
            remainder
        } else {
            0
        };
        self.last_start = Some(start);
    }

    /// Whole ns to the next departure and the remainder to carry.
    fn spacing(&self) -> (u64, u64) {
        let rate = u128::from(self.rate_pps);
        let scaled = NS_PER_S + u128::from(self.remainder);
        // NS_PER_S + remainder < 2^64 for any rate in u64, and the quotient is smaller.
        ((scaled / rate) as u64, (scaled % rate) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialisation_counts_overhead() {
        // 1000-byte frame + 24 at 1 Gb/s: 8192 bits = 8192 ns.
        let mut s = Shaper::new(1_000_000_000, 24);
        assert_eq!(s.serialise_ns(1000, false), 8192);
        let mut bare = Shaper::new(1_000_000_000, 0);
        assert_eq!(bare.serialise_ns(1000, false), 8000);
    }

    #[test]
    fn remainders_carry_across_back_to_back_frames() {
        // 64 + 24 bytes at 3 Gb/s = 704 bits = 234.666.. ns per frame.
        let mut s = Shaper::new(3_000_000_000, 24);
        let mut end = 0u64;
        for k in 1..=3000u64 {
            end += s.serialise_ns(64, true);
            assert_eq!(end, k * 704 * 1_000_000_000 / 3_000_000_000);
        }
        // An idle port starts afresh: no carried fraction.
        assert_eq!(s.serialise_ns(64, false), 234);
    }

    #[test]
    fn pause_quanta_follow_the_link_rate() {
        // One quantum is 512 ns at 1 Gb/s and 51.2 ns at 10 Gb/s (rounded up).
        assert_eq!(pause_quanta_ns(1, 1_000_000_000), Some(512));
        assert_eq!(pause_quanta_ns(1, 10_000_000_000), Some(52));
        assert_eq!(pause_quanta_ns(0xFFFF, 10_000_000_000), Some(3_355_392));
        assert_eq!(pause_quanta_ns(0xFFFF, 0), None);
    }

    #[test]
    fn unlimited_rate_takes_no_time() {
        let mut s = Shaper::new(0, 24);
        assert_eq!(s.serialise_ns(1500, true), 0);
    }

    #[test]
    fn pacer_spaces_departures_exactly() {
        // 3 pps: 333_333_333.33 ns apart; three spacings make exactly one second.
        let mut p = PpsPacer::new(3);
        assert_eq!(p.allowed_at(), 0);
        p.on_start(0);
        let mut starts = Vec::new();
        for _ in 0..3 {
            let t = p.allowed_at();
            starts.push(t);
            p.on_start(t);
        }
        assert_eq!(starts, [333_333_333, 666_666_666, 1_000_000_000]);
    }

    #[test]
    fn pacer_restarts_after_idle_and_unlimited_never_waits() {
        let mut p = PpsPacer::new(3);
        p.on_start(0);
        p.on_start(5_000_000_000);
        assert_eq!(p.allowed_at(), 5_333_333_333);
        p.set_rate(0);
        assert_eq!(p.allowed_at(), 0);
    }
}
