//! Stateful objects: counter cells, two-rate three-colour meters, registers.

/// Meter colours as v1model reports them.
pub const GREEN: u128 = 0;
/// Yellow: above the committed rate, within the peak rate.
pub const YELLOW: u128 = 1;
/// Red: above the peak rate.
pub const RED: u128 = 2;

/// A packets/bytes counter cell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CounterCell {
    /// Packets counted.
    pub packets: u64,
    /// Bytes counted.
    pub bytes: u64,
}

impl CounterCell {
    /// Counts one packet of `bytes` bytes.
    #[inline]
    pub fn count(&mut self, bytes: u64) {
        self.packets += 1;
        self.bytes += bytes;
    }
}

/// One rate of a meter: units (bytes or packets) per second and burst size in units.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MeterRate {
    /// Rate in units per second.
    pub units_per_s: u64,
    /// Bucket depth in units.
    pub burst: u64,
}

/// A two-rate three-colour marker (RFC 2698); unconfigured meters colour green.
#[derive(Debug, Clone, Default)]
pub struct MeterCell {
    /// Committed and peak rates, once configured.
    pub rates: Option<[MeterRate; 2]>,
    // Bucket contents in units × 1e9, so refills are exact integer arithmetic.
    tokens: [u128; 2],
    last_ns: u64,
}

impl MeterCell {
    /// Configures the committed (index 0) and peak (index 1) rates and fills the buckets.
    pub fn set_rates(&mut self, rates: [MeterRate; 2], now_ns: u64) {
        self.rates = Some(rates);
        self.tokens = [
            u128::from(rates[0].burst) * 1_000_000_000,
            u128::from(rates[1].burst) * 1_000_000_000,
        ];
        self.last_ns = now_ns;
    }

    /// Removes the configuration (every packet is green again).
    pub fn reset(&mut self) {
        *self = MeterCell::default();
    }

    /// Colours a packet of `units` units at time `now_ns`.
    pub fn execute(&mut self, units: u64, now_ns: u64) -> u128 {
        let Some(rates) = self.rates else {
            return GREEN;
        };
        let dt = u128::from(now_ns.saturating_sub(self.last_ns));
        self.last_ns = self.last_ns.max(now_ns);
        for (i, r) in rates.iter().enumerate() {
            let cap = u128::from(r.burst) * 1_000_000_000;
            self.tokens[i] = (self.tokens[i] + dt * u128::from(r.units_per_s)).min(cap);
        }
        let need = u128::from(units) * 1_000_000_000;
        if self.tokens[1] < need {
            RED
        } else if self.tokens[0] < need {
            self.tokens[1] -= need;
            YELLOW
        } else {
            self.tokens[0] -= need;
            self.tokens[1] -= need;
            GREEN
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meter_colours_follow_buckets() {
        let mut m = MeterCell::default();
        assert_eq!(m.execute(100, 0), GREEN);
        // 1000 units/s committed with burst 2, 2000 units/s peak with burst 3.
        m.set_rates(
            [
                MeterRate {
                    units_per_s: 1000,
                    burst: 2,
                },
                MeterRate {
                    units_per_s: 2000,
                    burst: 3,
                },
            ],
            0,
        );
        assert_eq!(m.execute(1, 0), GREEN);
        assert_eq!(m.execute(1, 0), GREEN);
        assert_eq!(m.execute(1, 0), YELLOW);
        assert_eq!(m.execute(1, 0), RED);
        // After 1 ms the committed bucket holds 1 unit again, the peak 2.
        assert_eq!(m.execute(1, 1_000_000), GREEN);
    }
}
