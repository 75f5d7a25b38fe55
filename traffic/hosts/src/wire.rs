//! Time on the wire: serialisation at a rate, exact over back-to-back runs.

/// Nanoseconds per second.
pub const NS_PER_S: u128 = 1_000_000_000;

/// Time to put `bytes` on a link of `rate_bps`, ns, rounded up (a frame never ends early).
pub fn serialisation_ns(bytes: u64, rate_bps: u64) -> u64 {
    let bits_ns = u128::from(bytes) * 8 * NS_PER_S;
    let rate = u128::from(rate_bps.max(1));
    u64::try_from(bits_ns.div_ceil(rate)).unwrap_or(u64::MAX)
}

/// Serialisation times of frames sent back to back at one rate whose sum never
/// drifts: the part of a nanosecond one frame leaves over is carried into the next,
/// so k frames end at exactly ⌊Σ bits·10⁹ / R⌋ ns after the first began.
#[derive(Debug, Clone)]
pub struct Serialiser {
    rate_bps: u64,
    carry: u128,
}

impl Serialiser {
    /// A serialiser for `rate_bps` (must be positive).
    pub fn new(rate_bps: u64) -> Self {
        Serialiser {
            rate_bps: rate_bps.max(1),
            carry: 0,
        }
    }

    /// The rate, bit/s.
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    /// Changes the rate; the next frame starts a fresh run.
    pub fn set_rate(&mut self, rate_bps: u64) {
        self.rate_bps = rate_bps.max(1);
        self.carry = 0;
    }

    /// Forgets the carried fraction: the next frame does not follow the last one back to back.
    pub fn restart(&mut self) {
        self.carry = 0;
    }

    /// Duration of the next frame of `bytes` in the run, ns.
    pub fn next_ns(&mut self, bytes: u64) -> u64 {
        let total = u128::from(bytes) * 8 * NS_PER_S + self.carry;
        let rate = u128::from(self.rate_bps);
        self.carry = total % rate;
        u64::try_from(total / rate).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_1500_byte_frame_takes_1200_ns_at_10_gbit_and_1219_with_overhead() {
        assert_eq!(serialisation_ns(1500, 10_000_000_000), 1200);
        // 1524 bytes = 12,192 bits = 1,219.2 ns, rounded up.
        assert_eq!(serialisation_ns(1524, 10_000_000_000), 1220);
    }

    #[test]
    fn back_to_back_frames_end_on_the_exact_sum() {
        let mut s = Serialiser::new(10_000_000_000);
        let total: u64 = (0..5).map(|_| s.next_ns(1524)).sum();
        // 5 × 1,219.2 ns = 6,096 ns exactly; per-frame rounding up would give 6,100.
        assert_eq!(total, 6096);
        s.restart();
        assert_eq!(s.next_ns(1524), 1219);
    }
}
