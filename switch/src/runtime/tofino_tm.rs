//! The traffic manager configured in Tofino's terms (BF Runtime's `tf1.tm.*`
//! tables): application pools, each queue's guaranteed cells and pool, the PFC
//! class a queue honours. The TM is the same one v1model programs use.

use bufferlab_tm::{AppPools, Baf, QueueBuffer, APP_POOLS};

use super::cfg_err;
use crate::engine::Engine;
use crate::error::RuntimeError;

type R<T> = Result<T, RuntimeError>;

/// Reads Tofino's egress pool name `EG_APP_POOL_<n>` (or a bare `n`) as n.
pub fn eg_app_pool(name: &str) -> R<u8> {
    let n = name.trim().trim_start_matches("EG_APP_POOL_");
    n.parse::<u8>()
        .ok()
        .filter(|&p| usize::from(p) < APP_POOLS)
        .ok_or_else(|| {
            RuntimeError::InvalidArgument(format!(
                "pool '{name}': egress application pools are EG_APP_POOL_0..EG_APP_POOL_3"
            ))
        })
}

/// Reads a burst-absorption factor by its BF Runtime name ("1.5%" ... "80%", "DISABLE").
pub fn baf(name: &str) -> R<Baf> {
    name.parse().map_err(RuntimeError::InvalidArgument)
}

impl Engine {
    /// `tf1.tm.pool.cfg`: sizes egress application pool `pool` (0..=3) in cells.
    pub fn tm_pool_cfg(&mut self, pool: u8, size_cells: u64) -> R<()> {
        self.tm
            .set_app_pool_cells(pool, size_cells)
            .map_err(cfg_err)
    }

    /// The application pools' sizes and use, cells.
    pub fn tm_app_pools(&self) -> AppPools {
        self.tm.app_pools()
    }

    /// The TM's cell size in bytes (None: bytes) and queues per port.
    pub fn tm_units(&self) -> (Option<u32>, u8) {
        (self.tm.cell_bytes(), self.tm.queues_per_port())
    }

    /// `tf1.tm.queue.buffer`: queue `queue` of `port` takes `buf` (its guaranteed
    /// cells, pool, static limit, burst-absorption factor and hysteresis).
    pub fn tm_queue_buffer(&mut self, port: u16, queue: u8, buf: QueueBuffer) -> R<()> {
        let mut cfg = self.port_config(port)?;
        *self.queue_slot(&mut cfg.queue_buffer, queue)? = buf;
        self.configure_port(port, cfg)
    }

    /// `tf1.tm.queue.cfg` `pfc_cos`: the PFC class (0..=7) queue `queue` of `port` honours.
    pub fn tm_queue_pfc_cos(&mut self, port: u16, queue: u8, pfc_cos: u8) -> R<()> {
        let mut cfg = self.port_config(port)?;
        *self.queue_slot(&mut cfg.pfc_cos, queue)? = pfc_cos;
        self.configure_port(port, cfg)
    }

    /// Entry `queue` of a per-queue setting, if ports of this target have that queue.
    fn queue_slot<'a, T>(&self, slots: &'a mut [T], queue: u8) -> R<&'a mut T> {
        let max = self.tm.queues_per_port();
        slots
            .get_mut(usize::from(queue))
            .filter(|_| queue < max)
            .ok_or_else(|| {
                RuntimeError::InvalidArgument(format!(
                    "queue {queue}: this target's ports have queues 0..={}",
                    max - 1
                ))
            })
    }
}
