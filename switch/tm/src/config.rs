//! Settings of the traffic manager and of each port, with their validation.
//!
//! Every setting carries its unit in its name (bytes, bit/s, pps, ns).

use std::fmt;

use crate::pools::{QueueBuffer, APP_POOLS};

/// Number of ports: v1model's `egress_spec` is 9 bits wide, so ports are 0..=511.
pub const NUM_PORTS: u16 = 512;

/// Largest number of queues per port any target has (128 on Tofino 2); a
/// manager allows `TmConfig::queues_per_port` of them.
pub const MAX_QUEUES: u8 = 128;

/// Queues per port of a v1model switch (its `priority` is 3 bits), the default.
pub const V1MODEL_QUEUES: u8 = 8;

/// Ethernet overhead per frame that a Linux frame does not carry: preamble and
/// start delimiter (8), inter-frame gap (12) and FCS (4), in bytes.
pub const ETHERNET_WIRE_OVERHEAD_BYTES: u32 = 24;

/// Default shared buffer: 1 MiB, the buffer size of the lab's reference experiments.
pub const DEFAULT_POOL_BYTES: u64 = 1 << 20;

/// Per-queue admission cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    /// No per-queue cap: only the port threshold and the pool limit the queue.
    None,
    /// At most this many frames queued (BMv2 `set_queue_depth`).
    Packets(u32),
    /// At most this many frame bytes queued.
    Bytes(u64),
    /// At most this many buffer cells queued (see `TmConfig::cell_bytes`).
    Cells(u64),
}

/// How a port picks the queue it serves next.
// The quanta stay inline (512 B) so a port's settings remain one `Copy` value.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduling {
    /// Highest non-empty queue first (the highest number wins), as BMv2's `QueueingLogicPriRL`.
    StrictPriority,
    /// Deficit round robin: each visit credits a queue `quantum_bytes[q]` bytes,
    /// so long-run byte shares follow the quanta. Every quantum must be >= 1.
    Drr {
        /// Bytes credited to each queue per round; the queues' weights.
        quantum_bytes: [u32; MAX_QUEUES as usize],
    },
}

impl Scheduling {
    /// DRR with `quanta[q]` bytes for the first queues and one 1500-byte frame
    /// for every queue after them.
    pub fn drr(quanta: &[u32]) -> Scheduling {
        let mut quantum_bytes = [1500; MAX_QUEUES as usize];
        let n = quanta.len().min(quantum_bytes.len());
        quantum_bytes[..n].copy_from_slice(&quanta[..n]);
        Scheduling::Drr { quantum_bytes }
    }
}

/// A port's share of the shared pool, checked against the port's occupancy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threshold {
    /// The port may use the whole pool.
    None,
    /// Admit iff port occupancy + frame <= this many bytes.
    StaticBytes(u64),
    /// Admit iff port occupancy + frame <= this many buffer cells.
    StaticCells(u64),
    /// Admit iff port occupancy + frame <= this percentage (1..=100) of the pool.
    PercentOfPool(u8),
    /// Dynamic threshold (Choudhury & Hahne): admit iff
    /// port occupancy + frame <= alpha_num / alpha_den * (pool - pool used).
    Dynamic {
        /// Numerator of alpha.
        alpha_num: u32,
        /// Denominator of alpha, >= 1.
        alpha_den: u32,
    },
}

/// Settings of one egress port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortConfig {
    /// Port shaper rate in bit/s; 0 = unlimited (frames leave at once, one at a time).
    pub rate_bps: u64,
    /// Bytes added to every frame when computing its serialisation time.
    pub wire_overhead_bytes: u32,
    /// Propagation delay in ns added after the last bit leaves.
    pub delay_ns: u64,
    /// Number of queues, 1..=`TmConfig::queues_per_port`; queue `num_queues - 1`
    /// is the highest priority.
    pub num_queues: u8,
    /// How the port picks the next queue.
    pub scheduling: Scheduling,
    /// Per-queue admission caps.
    pub queue_limits: [QueueLimit; MAX_QUEUES as usize],
    /// Per-queue departure rate in packets/s (BMv2 `set_queue_rate`); 0 = unlimited.
    pub queue_rate_pps: [u64; MAX_QUEUES as usize],
    /// The PFC class (0..=7) each queue honours (Tofino's `pfc_cos`): a PFC frame
    /// from the peer pausing class c holds every queue whose class is c.
    /// Default: queue q honours class q mod 8.
    pub pfc_cos: [u8; MAX_QUEUES as usize],
    /// Each queue's guaranteed cells and application pool (Tofino's `tm.queue.buffer`).
    pub queue_buffer: [QueueBuffer; MAX_QUEUES as usize],
    /// The port's share of the shared pool.
    pub threshold: Threshold,
}

impl Default for PortConfig {
    /// Unlimited rate, Ethernet overhead, no delay, one queue without a cap.
    fn default() -> Self {
        PortConfig {
            rate_bps: 0,
            wire_overhead_bytes: ETHERNET_WIRE_OVERHEAD_BYTES,
            delay_ns: 0,
            num_queues: 1,
            scheduling: Scheduling::StrictPriority,
            queue_limits: [QueueLimit::None; MAX_QUEUES as usize],
            queue_rate_pps: [0; MAX_QUEUES as usize],
            pfc_cos: std::array::from_fn(|q| (q % 8) as u8),
            queue_buffer: [QueueBuffer::default(); MAX_QUEUES as usize],
            threshold: Threshold::None,
        }
    }
}

impl PortConfig {
    /// Checks every setting and names the first one that is out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.num_queues == 0 || self.num_queues > MAX_QUEUES {
            return Err(ConfigError::NumQueues(self.num_queues));
        }
        if let Scheduling::Drr { quantum_bytes } = &self.scheduling {
            if let Some(q) = quantum_bytes.iter().position(|&b| b == 0) {
                return Err(ConfigError::ZeroQuantum(q as u8));
            }
        }
        let bad_pool = |b: &QueueBuffer| b.pool.is_some_and(|p| usize::from(p) >= APP_POOLS);
        if let Some(q) = self.queue_buffer.iter().position(bad_pool) {
            return Err(ConfigError::AppPool(self.queue_buffer[q].pool.unwrap_or(0)));
        }
        if let Some(q) = self.pfc_cos.iter().position(|&c| c > 7) {
            return Err(ConfigError::PfcCos(q as u8, self.pfc_cos[q]));
        }
        match self.threshold {
            Threshold::PercentOfPool(p) if p == 0 || p > 100 => Err(ConfigError::PercentOfPool(p)),
            Threshold::Dynamic { alpha_den: 0, .. } => Err(ConfigError::AlphaDenominatorZero),
            _ => Ok(()),
        }
    }
}

impl PortConfig {
    /// Checks `num_queues` against the queues a port of this manager may have.
    pub fn fits(&self, queues_per_port: u8) -> Result<(), ConfigError> {
        if self.num_queues > queues_per_port {
            return Err(ConfigError::TooManyQueues {
                num_queues: self.num_queues,
                max: queues_per_port,
            });
        }
        Ok(())
    }
}

/// Settings of the whole traffic manager.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TmConfig {
    /// Size of the shared buffer pool in bytes (frame bytes, no overhead), >= 1.
    pub pool_bytes: u64,
    /// Buffer cell size in bytes, as a Tofino TM counts its buffer (80 B on
    /// Tofino 1, 176 B on Tofino 2): each frame then holds ⌈len / cell⌉ cells
    /// and the pool ⌊pool_bytes / cell⌋. None: the buffer is counted in bytes
    /// (a cell of one byte), as BMv2 and the lab's v1model switch do.
    pub cell_bytes: Option<u32>,
    /// Queues a port may have: 8 for v1model (the default), 32 on Tofino 1, 128 on Tofino 2.
    pub queues_per_port: u8,
    /// Settings every port starts with.
    pub default_port: PortConfig,
}

impl Default for TmConfig {
    /// A 1 MiB pool counted in bytes and the default port settings.
    fn default() -> Self {
        TmConfig {
            pool_bytes: DEFAULT_POOL_BYTES,
            cell_bytes: None,
            queues_per_port: V1MODEL_QUEUES,
            default_port: PortConfig::default(),
        }
    }
}

impl TmConfig {
    /// Checks the pool size, the cell size and the default port settings.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.pool_bytes == 0 {
            return Err(ConfigError::PoolBytesZero);
        }
        if self.cell_bytes == Some(0) {
            return Err(ConfigError::CellBytesZero);
        }
        if self.queues_per_port == 0 || self.queues_per_port > MAX_QUEUES {
            return Err(ConfigError::NumQueues(self.queues_per_port));
        }
        self.default_port.validate()?;
        self.default_port.fits(self.queues_per_port)
    }
}

/// A setting that is out of range, or a port or queue that does not exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// `pool_bytes` was 0.
    PoolBytesZero,
    /// The port number is not in 0..=511.
    PortOutOfRange(u16),
    /// The queue number is not below `MAX_QUEUES`.
    QueueOutOfRange(u8),
    /// `num_queues` (or `queues_per_port`) is not in 1..=`MAX_QUEUES`.
    NumQueues(u8),
    /// `num_queues` is above the queues a port of this manager may have.
    TooManyQueues {
        /// The number asked for.
        num_queues: u8,
        /// `TmConfig::queues_per_port`.
        max: u8,
    },
    /// A queue's PFC class (queue, class) is not 0..=7.
    PfcCos(u8, u8),
    /// An application pool number is not 0..=3.
    AppPool(u8),
    /// A pipe number is not 0..=3.
    Pipe(u8),
    /// A DRR quantum (of the given queue) is 0 bytes.
    ZeroQuantum(u8),
    /// `PercentOfPool` is not in 1..=100.
    PercentOfPool(u8),
    /// The dynamic threshold's `alpha_den` is 0.
    AlphaDenominatorZero,
    /// `cell_bytes` was 0.
    CellBytesZero,
    /// The cell size cannot change while frames are buffered.
    BufferNotEmpty,
}

impl fmt::Display for ConfigError {
    /// Names the setting and why it was refused.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::PoolBytesZero => write!(f, "pool_bytes: must be at least 1 byte"),
            ConfigError::PortOutOfRange(p) => {
                write!(f, "port {p}: ports are 0..={}", NUM_PORTS - 1)
            }
            ConfigError::QueueOutOfRange(q) => {
                write!(f, "queue {q}: beyond this target's queues per port")
            }
            ConfigError::NumQueues(n) => {
                write!(f, "num_queues {n}: must be 1..={MAX_QUEUES}")
            }
            ConfigError::TooManyQueues { num_queues, max } => write!(
                f,
                "num_queues {num_queues}: this target's ports have at most {max} queues"
            ),
            ConfigError::PfcCos(q, c) => write!(f, "pfc_cos[{q}] {c}: PFC classes are 0..=7"),
            ConfigError::Pipe(p) => write!(f, "pipe {p}: pipes are 0..=3"),
            ConfigError::AppPool(p) => {
                write!(
                    f,
                    "pool_id {p}: application pools are 0..={}",
                    APP_POOLS - 1
                )
            }
            ConfigError::ZeroQuantum(q) => {
                write!(f, "quantum_bytes[{q}]: DRR quanta must be at least 1 byte")
            }
            ConfigError::PercentOfPool(p) => {
                write!(f, "threshold percent_of_pool {p}: must be 1..=100")
            }
            ConfigError::AlphaDenominatorZero => {
                write!(f, "threshold dynamic alpha_den: must be at least 1")
            }
            ConfigError::CellBytesZero => write!(f, "cell_bytes: must be at least 1 byte"),
            ConfigError::BufferNotEmpty => {
                write!(
                    f,
                    "cell_bytes: frames are buffered; drain before changing the cell size"
                )
            }
        }
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_port_is_valid_and_counts_ethernet_overhead() {
        let cfg = PortConfig::default();
        assert_eq!(cfg.validate(), Ok(()));
        assert_eq!(cfg.wire_overhead_bytes, 24);
        assert_eq!(cfg.num_queues, 1);
    }

    #[test]
    fn out_of_range_settings_are_named() {
        let mut cfg = PortConfig {
            num_queues: 129,
            ..PortConfig::default()
        };
        assert_eq!(cfg.validate(), Err(ConfigError::NumQueues(129)));
        cfg.num_queues = 9;
        assert_eq!(
            cfg.fits(8),
            Err(ConfigError::TooManyQueues {
                num_queues: 9,
                max: 8
            })
        );
        assert_eq!(cfg.fits(32), Ok(()));
        cfg.pfc_cos[40] = 8;
        assert_eq!(cfg.validate(), Err(ConfigError::PfcCos(40, 8)));
        cfg.pfc_cos[40] = 0;
        cfg.num_queues = 0;
        assert_eq!(cfg.validate(), Err(ConfigError::NumQueues(0)));
        cfg.num_queues = 8;
        cfg.threshold = Threshold::PercentOfPool(101);
        assert_eq!(cfg.validate(), Err(ConfigError::PercentOfPool(101)));
        cfg.threshold = Threshold::PercentOfPool(0);
        assert_eq!(cfg.validate(), Err(ConfigError::PercentOfPool(0)));
        cfg.threshold = Threshold::Dynamic {
            alpha_num: 1,
            alpha_den: 0,
        };
        assert_eq!(cfg.validate(), Err(ConfigError::AlphaDenominatorZero));
        cfg.threshold = Threshold::None;
        let mut quanta = [1500; MAX_QUEUES as usize];
        quanta[5] = 0;
        cfg.scheduling = Scheduling::Drr {
            quantum_bytes: quanta,
        };
        assert_eq!(cfg.validate(), Err(ConfigError::ZeroQuantum(5)));
        assert_eq!(
            ConfigError::ZeroQuantum(5).to_string(),
            "quantum_bytes[5]: DRR quanta must be at least 1 byte"
        );
    }

    #[test]
    fn empty_pool_is_refused() {
        let cfg = TmConfig {
            pool_bytes: 0,
            ..TmConfig::default()
        };
        assert_eq!(cfg.validate(), Err(ConfigError::PoolBytesZero));
        assert_eq!(TmConfig::default().validate(), Ok(()));
        let cells = TmConfig {
            cell_bytes: Some(0),
            ..TmConfig::default()
        };
        assert_eq!(cells.validate(), Err(ConfigError::CellBytesZero));
    }
}
