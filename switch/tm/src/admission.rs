//! Admission of a frame into a queue: the queue's cap, the port's threshold
//! on the shared pool, and the pool's capacity, checked in that order.
//!
//! Limits named in bytes compare frame bytes; limits named in cells and
//! everything relative to the pool compare buffer cells (bytes when the
//! manager has no cell size, a cell then being one byte).

use crate::config::{QueueLimit, Threshold};
use crate::stats::DropReason;

/// Occupancy the admission decision looks at.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Occupancy {
    /// Frames in the target queue.
    pub queue_pkts: u32,
    /// Frame bytes in the target queue.
    pub queue_bytes: u64,
    /// Cells in the target queue.
    pub queue_cells: u64,
    /// Frame bytes in all queues of the port.
    pub port_bytes: u64,
    /// Cells in all queues of the port.
    pub port_cells: u64,
    /// Cells in the shared pool.
    pub pool_used: u64,
    /// Size of the shared pool, cells.
    pub pool_cells: u64,
}

/// A frame's size as admission counts it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Size {
    /// Frame bytes.
    pub bytes: u32,
    /// Buffer cells it takes.
    pub cells: u32,
}

/// Decides whether a frame of `size` may join; the first failing check names the reason.
pub(crate) fn admit(
    limit: QueueLimit,
    threshold: Threshold,
    occ: Occupancy,
    size: Size,
) -> Result<(), DropReason> {
    let (bytes, cells) = (u128::from(size.bytes), u128::from(size.cells));
    let fits_queue = match limit {
        QueueLimit::None => true,
        QueueLimit::Packets(max) => occ.queue_pkts < max,
        QueueLimit::Bytes(max) => u128::from(occ.queue_bytes) + bytes <= u128::from(max),
        QueueLimit::Cells(max) => u128::from(occ.queue_cells) + cells <= u128::from(max),
    };
    if !fits_queue {
        return Err(DropReason::QueueFull);
    }
    // 128-bit products: pool sizes times percentages or alphas must not overflow.
    let port_cells = u128::from(occ.port_cells) + cells;
    let pool = u128::from(occ.pool_cells);
    let free = pool.saturating_sub(u128::from(occ.pool_used));
    let within_threshold = match threshold {
        Threshold::None => true,
        Threshold::StaticBytes(max) => u128::from(occ.port_bytes) + bytes <= u128::from(max),
        Threshold::StaticCells(max) => port_cells <= u128::from(max),
        Threshold::PercentOfPool(pct) => port_cells * 100 <= pool * u128::from(pct),
        Threshold::Dynamic {
            alpha_num,
            alpha_den,
        } => port_cells * u128::from(alpha_den) <= u128::from(alpha_num) * free,
    };
    if !within_threshold {
        return Err(DropReason::PortThreshold);
    }
    if cells > free {
        return Err(DropReason::PoolFull);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Occupancy of a byte-counted buffer (cells of one byte) with a 10 000-byte pool.
    fn occ(queue_pkts: u32, queue_bytes: u64, port_bytes: u64, pool_used: u64) -> Occupancy {
        Occupancy {
            queue_pkts,
            queue_bytes,
            queue_cells: queue_bytes,
            port_bytes,
            port_cells: port_bytes,
            pool_used,
            pool_cells: 10_000,
        }
    }

    /// A frame of `bytes` in one-byte cells.
    fn b(bytes: u32) -> Size {
        Size {
            bytes,
            cells: bytes,
        }
    }

    #[test]
    fn cell_limits_count_cells_and_byte_limits_bytes() {
        // 80-byte cells: a 100-byte frame takes 2 cells.
        let frame = Size {
            bytes: 100,
            cells: 2,
        };
        let o = Occupancy {
            queue_cells: 8,
            queue_bytes: 600,
            port_cells: 8,
            port_bytes: 600,
            pool_used: 8,
            pool_cells: 11,
            ..Occupancy::default()
        };
        assert_eq!(
            admit(QueueLimit::Cells(10), Threshold::None, o, frame),
            Ok(())
        );
        assert_eq!(
            admit(QueueLimit::Cells(9), Threshold::None, o, frame),
            Err(DropReason::QueueFull)
        );
        assert_eq!(
            admit(QueueLimit::Bytes(700), Threshold::None, o, frame),
            Ok(())
        );
        assert_eq!(
            admit(QueueLimit::None, Threshold::StaticCells(9), o, frame),
            Err(DropReason::PortThreshold)
        );
        // 8 + 2 cells fit an 11-cell pool; with 10 used, 2 more do not.
        assert_eq!(admit(QueueLimit::None, Threshold::None, o, frame), Ok(()));
        let full = Occupancy { pool_used: 10, ..o };
        assert_eq!(
            admit(QueueLimit::None, Threshold::None, full, frame),
            Err(DropReason::PoolFull)
        );
    }

    #[test]
    fn queue_caps_are_inclusive() {
        let pk = QueueLimit::Packets(3);
        assert_eq!(admit(pk, Threshold::None, occ(2, 0, 0, 0), b(100)), Ok(()));
        assert_eq!(
            admit(pk, Threshold::None, occ(3, 0, 0, 0), b(100)),
            Err(DropReason::QueueFull)
        );
        let by = QueueLimit::Bytes(1000);
        assert_eq!(
            admit(by, Threshold::None, occ(9, 900, 900, 900), b(100)),
            Ok(())
        );
        assert_eq!(
            admit(by, Threshold::None, occ(9, 901, 901, 901), b(100)),
            Err(DropReason::QueueFull)
        );
    }

    #[test]
    fn thresholds_against_the_pool() {
        let none = QueueLimit::None;
        let st = Threshold::StaticBytes(2000);
        assert_eq!(admit(none, st, occ(0, 0, 1500, 1500), b(500)), Ok(()));
        assert_eq!(
            admit(none, st, occ(0, 0, 1501, 1501), b(500)),
            Err(DropReason::PortThreshold)
        );
        // 25 % of 10_000 = 2500 bytes.
        let pct = Threshold::PercentOfPool(25);
        assert_eq!(admit(none, pct, occ(0, 0, 2000, 2000), b(500)), Ok(()));
        assert_eq!(
            admit(none, pct, occ(0, 0, 2001, 2001), b(500)),
            Err(DropReason::PortThreshold)
        );
        // alpha = 1/2: 3000 + 1000 <= 0.5 * (10_000 - 2000) = 4000.
        let dt = Threshold::Dynamic {
            alpha_num: 1,
            alpha_den: 2,
        };
        assert_eq!(admit(none, dt, occ(0, 0, 3000, 2000), b(1000)), Ok(()));
        assert_eq!(
            admit(none, dt, occ(0, 0, 3000, 2002), b(1000)),
            Err(DropReason::PortThreshold)
        );
    }

    #[test]
    fn pool_capacity_is_checked_last() {
        assert_eq!(
            admit(
                QueueLimit::None,
                Threshold::None,
                occ(0, 0, 0, 9_500),
                b(500)
            ),
            Ok(())
        );
        assert_eq!(
            admit(
                QueueLimit::None,
                Threshold::None,
                occ(0, 0, 0, 9_501),
                b(500)
            ),
            Err(DropReason::PoolFull)
        );
        // A full queue is reported as such even when the pool is full too.
        assert_eq!(
            admit(
                QueueLimit::Packets(0),
                Threshold::None,
                occ(0, 0, 0, 10_000),
                b(1)
            ),
            Err(DropReason::QueueFull)
        );
    }
}
