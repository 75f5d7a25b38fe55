//! Admission of a frame into a queue: the queue's cap, the port's threshold
//! on the shared pool, and the pool's capacity, checked in that order.

use crate::config::{QueueLimit, Threshold};
use crate::stats::DropReason;

/// Occupancy the admission decision looks at, all in frame bytes except `queue_pkts`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Occupancy {
    /// Frames in the target queue.
    pub queue_pkts: u32,
    /// Bytes in the target queue.
    pub queue_bytes: u64,
    /// Bytes in all queues of the port.
    pub port_bytes: u64,
    /// Bytes in the shared pool.
    pub pool_used: u64,
    /// Size of the shared pool.
    pub pool_bytes: u64,
}

/// Decides whether a frame of `frame_bytes` may join; the first failing check names the reason.
pub(crate) fn admit(
    limit: QueueLimit,
    threshold: Threshold,
    occ: Occupancy,
    frame_bytes: u32,
) -> Result<(), DropReason> {
    let frame = u128::from(frame_bytes);
    let fits_queue = match limit {
        QueueLimit::None => true,
        QueueLimit::Packets(max) => occ.queue_pkts < max,
        QueueLimit::Bytes(max) => u128::from(occ.queue_bytes) + frame <= u128::from(max),
    };
    if !fits_queue {
        return Err(DropReason::QueueFull);
    }
    // 128-bit products: pool sizes times percentages or alphas must not overflow.
    let port_after = u128::from(occ.port_bytes) + frame;
    let pool = u128::from(occ.pool_bytes);
    let free = pool.saturating_sub(u128::from(occ.pool_used));
    let within_threshold = match threshold {
        Threshold::None => true,
        Threshold::StaticBytes(max) => port_after <= u128::from(max),
        Threshold::PercentOfPool(pct) => port_after * 100 <= pool * u128::from(pct),
        Threshold::Dynamic {
            alpha_num,
            alpha_den,
        } => port_after * u128::from(alpha_den) <= u128::from(alpha_num) * free,
    };
    if !within_threshold {
        return Err(DropReason::PortThreshold);
    }
    if frame > free {
        return Err(DropReason::PoolFull);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn occ(queue_pkts: u32, queue_bytes: u64, port_bytes: u64, pool_used: u64) -> Occupancy {
        Occupancy {
            queue_pkts,
            queue_bytes,
            port_bytes,
            pool_used,
            pool_bytes: 10_000,
        }
    }

    #[test]
    fn queue_caps_are_inclusive() {
        let pk = QueueLimit::Packets(3);
        assert_eq!(admit(pk, Threshold::None, occ(2, 0, 0, 0), 100), Ok(()));
        assert_eq!(
            admit(pk, Threshold::None, occ(3, 0, 0, 0), 100),
            Err(DropReason::QueueFull)
        );
        let by = QueueLimit::Bytes(1000);
        assert_eq!(
            admit(by, Threshold::None, occ(9, 900, 900, 900), 100),
            Ok(())
        );
        assert_eq!(
            admit(by, Threshold::None, occ(9, 901, 901, 901), 100),
            Err(DropReason::QueueFull)
        );
    }

    #[test]
    fn thresholds_against_the_pool() {
        let none = QueueLimit::None;
        let st = Threshold::StaticBytes(2000);
        assert_eq!(admit(none, st, occ(0, 0, 1500, 1500), 500), Ok(()));
        assert_eq!(
            admit(none, st, occ(0, 0, 1501, 1501), 500),
            Err(DropReason::PortThreshold)
        );
        // 25 % of 10_000 = 2500 bytes.
        let pct = Threshold::PercentOfPool(25);
        assert_eq!(admit(none, pct, occ(0, 0, 2000, 2000), 500), Ok(()));
        assert_eq!(
            admit(none, pct, occ(0, 0, 2001, 2001), 500),
            Err(DropReason::PortThreshold)
        );
        // alpha = 1/2: 3000 + 1000 <= 0.5 * (10_000 - 2000) = 4000.
        let dt = Threshold::Dynamic {
            alpha_num: 1,
            alpha_den: 2,
        };
        assert_eq!(admit(none, dt, occ(0, 0, 3000, 2000), 1000), Ok(()));
        assert_eq!(
            admit(none, dt, occ(0, 0, 3000, 2002), 1000),
            Err(DropReason::PortThreshold)
        );
    }

    #[test]
    fn pool_capacity_is_checked_last() {
        assert_eq!(
            admit(QueueLimit::None, Threshold::None, occ(0, 0, 0, 9_500), 500),
            Ok(())
        );
        assert_eq!(
            admit(QueueLimit::None, Threshold::None, occ(0, 0, 0, 9_501), 500),
            Err(DropReason::PoolFull)
        );
        // A full queue is reported as such even when the pool is full too.
        assert_eq!(
            admit(
                QueueLimit::Packets(0),
                Threshold::None,
                occ(0, 0, 0, 10_000),
                1
            ),
            Err(DropReason::QueueFull)
        );
    }
}
