//! Tofino's application pools on the egress side: a queue mapped to one of
//! four pools holds its first `guaranteed_cells` outside the pool, then grows
//! in the pool up to `pool_max_cells` or, with a burst-absorption factor, up to
//! the dynamic limit D(t) = (pool size − pool used) · BAF, whichever is larger;
//! a queue that hit its limit admits again once its use has fallen to
//! `hysteresis_cells` below it.

use std::fmt;
use std::str::FromStr;

/// Application pools the TM has (Tofino: EG_APP_POOL_0..3).
pub const APP_POOLS: usize = 4;

/// Burst-absorption factor: the share of a pool's free cells a queue (or PPG)
/// may grow to, one of the steps Tofino's TM offers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Baf {
    /// 1.5 % of the free pool.
    Pct1_5,
    /// 3 %.
    Pct3,
    /// 6 %.
    Pct6,
    /// 11 %.
    Pct11,
    /// 20 %.
    Pct20,
    /// 33 %.
    Pct33,
    /// 50 %.
    Pct50,
    /// 66 %.
    Pct66,
    /// 80 %.
    Pct80,
    /// No burst absorption: the static `pool_max_cells` only.
    #[default]
    Disable,
}

/// The steps with their names as Tofino's BF Runtime writes them.
const BAF_NAMES: [(Baf, &str, u64); 10] = [
    (Baf::Pct1_5, "1.5%", 15),
    (Baf::Pct3, "3%", 30),
    (Baf::Pct6, "6%", 60),
    (Baf::Pct11, "11%", 110),
    (Baf::Pct20, "20%", 200),
    (Baf::Pct33, "33%", 330),
    (Baf::Pct50, "50%", 500),
    (Baf::Pct66, "66%", 660),
    (Baf::Pct80, "80%", 800),
    (Baf::Disable, "DISABLE", 0),
];

impl Baf {
    /// The factor in thousandths (15 for 1.5 %), 0 when disabled.
    pub fn per_mille(self) -> u64 {
        BAF_NAMES
            .iter()
            .find(|(b, ..)| *b == self)
            .map_or(0, |e| e.2)
    }

    /// The dynamic limit D = ⌊free · BAF⌋ in cells, None when disabled.
    pub fn limit(self, free_cells: u64) -> Option<u64> {
        match self {
            Baf::Disable => None,
            b => Some(free_cells * b.per_mille() / 1000),
        }
    }

    /// The name BF Runtime uses ("1.5%", ..., "80%", "DISABLE").
    pub fn name(self) -> &'static str {
        BAF_NAMES
            .iter()
            .find(|(b, ..)| *b == self)
            .map_or("DISABLE", |e| e.1)
    }
}

impl fmt::Display for Baf {
    /// Writes the BF Runtime name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Baf {
    type Err = String;

    /// Reads "1.5%", "3%", ... "80%" or "DISABLE" (case-insensitive, "%" optional).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let want = s.trim().trim_end_matches('%').to_ascii_uppercase();
        BAF_NAMES
            .iter()
            .find(|(_, name, _)| name.trim_end_matches('%') == want)
            .map(|e| e.0)
            .ok_or_else(|| {
                format!(
                    "dynamic_baf '{s}': one of 1.5%, 3%, 6%, 11%, 20%, 33%, 50%, 66%, 80%, DISABLE"
                )
            })
    }
}

/// How one queue uses the buffer (Tofino's `tm.queue.buffer`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueBuffer {
    /// Cells the queue holds before it uses its pool (guaranteed minimum).
    pub guaranteed_cells: u32,
    /// The application pool (0..=3) the queue grows in; None: the queue uses
    /// the port threshold and shared pool as a v1model port does.
    pub pool: Option<u8>,
    /// The queue's static limit in its pool, cells.
    pub pool_max_cells: u32,
    /// Burst-absorption factor above `pool_max_cells`.
    pub dynamic_baf: Baf,
    /// Cells the queue's pool usage must fall below its limit before a queue
    /// that hit the limit admits again.
    pub hysteresis_cells: u32,
}

/// The application pools' sizes and use, in cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AppPools {
    /// Size of each pool, cells (0: the pool holds nothing).
    pub size_cells: [u64; APP_POOLS],
    /// Cells in use in each pool.
    pub used_cells: [u64; APP_POOLS],
    /// Largest `used_cells` seen per pool.
    pub max_used_cells: [u64; APP_POOLS],
}

/// Whether a queue of `queue_cells` may take `frame_cells` more under `buf`;
/// Ok(cells charged to the pool) or Err(()) when its pool limit refuses.
/// `dropping` is the queue's hysteresis state, updated.
pub(crate) fn admit_in_pool(
    pools: &AppPools,
    buf: &QueueBuffer,
    pool: usize,
    queue_cells: u64,
    frame_cells: u32,
    dropping: &mut bool,
) -> Result<u32, ()> {
    let gmin = u64::from(buf.guaranteed_cells);
    let after = queue_cells + u64::from(frame_cells);
    if after <= gmin {
        *dropping = false;
        return Ok(0);
    }
    let shared_before = queue_cells.saturating_sub(gmin);
    let shared_after = after - gmin;
    let charge = shared_after - shared_before;
    let (size, used) = (pools.size_cells[pool], pools.used_cells[pool]);
    let free = size.saturating_sub(used);
    let base = u64::from(buf.pool_max_cells);
    let limit = buf.dynamic_baf.limit(free).map_or(base, |d| d.max(base));
    if *dropping && shared_before > limit.saturating_sub(u64::from(buf.hysteresis_cells)) {
        return Err(());
    }
    if shared_after > limit || charge > free {
        *dropping = true;
        return Err(());
    }
    *dropping = false;
    // The charge is at most the frame's cells, a u32.
    Ok(charge as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baf_steps_and_names() {
        assert_eq!("1.5%".parse::<Baf>(), Ok(Baf::Pct1_5));
        assert_eq!("80".parse::<Baf>(), Ok(Baf::Pct80));
        assert_eq!("disable".parse::<Baf>(), Ok(Baf::Disable));
        assert!("25%".parse::<Baf>().is_err());
        // D = (1000 − 200) · 1.5 % = 12 cells; · 50 % = 400; disabled: none.
        assert_eq!(Baf::Pct1_5.limit(800), Some(12));
        assert_eq!(Baf::Pct50.limit(800), Some(400));
        assert_eq!(Baf::Disable.limit(800), None);
        assert_eq!(Baf::Pct66.to_string(), "66%");
    }

    #[test]
    fn guaranteed_cells_first_then_the_pool_limit() {
        let mut pools = AppPools::default();
        pools.size_cells[1] = 1000;
        let buf = QueueBuffer {
            guaranteed_cells: 10,
            pool: Some(1),
            pool_max_cells: 20,
            dynamic_baf: Baf::Disable,
            hysteresis_cells: 5,
        };
        let mut dropping = false;
        // 8 + 2 = 10 cells: all guaranteed, nothing charged.
        assert_eq!(admit_in_pool(&pools, &buf, 1, 8, 2, &mut dropping), Ok(0));
        // 10 + 3: 3 cells in the pool.
        assert_eq!(admit_in_pool(&pools, &buf, 1, 10, 3, &mut dropping), Ok(3));
        // 9 + 4 = 13: 3 above the guarantee.
        assert_eq!(admit_in_pool(&pools, &buf, 1, 9, 4, &mut dropping), Ok(3));
        // 29 + 2 = 31: 21 shared > 20.
        assert_eq!(
            admit_in_pool(&pools, &buf, 1, 29, 2, &mut dropping),
            Err(())
        );
        assert!(dropping);
        // Hysteresis: refused until the queue's pool use is down to 20 − 5 = 15:
        // at 26 cells it is 16; at 24 it is 14, and 24 + 1 is admitted.
        assert_eq!(
            admit_in_pool(&pools, &buf, 1, 26, 1, &mut dropping),
            Err(())
        );
        assert_eq!(admit_in_pool(&pools, &buf, 1, 24, 1, &mut dropping), Ok(1));
        assert!(!dropping);
    }
}
