//! The traffic manager against a plain event-by-event reference model of one
//! strict-priority port, under random arrivals and random (often late) polling.

mod common;

use bufferlab_tm::{PortConfig, Scheduling};
use common::{drain, tm_with, GBPS};

/// 1 Gb/s: every frame's serialisation time is a whole number of ns.
const RATE_BPS: u64 = GBPS;
const OVERHEAD: u64 = 24;

#[derive(Clone, Copy, Debug)]
struct Arrival {
    id: u32,
    time: u64,
    queue: u8,
    bytes: u32,
}

/// Departures (id, tx_start, tx_end) computed the obvious way: whenever the
/// wire is free, the highest queue holding an arrived frame sends its oldest.
fn reference(arrivals: &[Arrival]) -> Vec<(u32, u64, u64)> {
    let mut pending: Vec<Arrival> = arrivals.to_vec();
    let mut free_at = 0u64;
    let mut out = Vec::new();
    while !pending.is_empty() {
        let earliest = pending.iter().map(|a| a.time).min().unwrap_or(0);
        let t = free_at.max(earliest);
        let pick = pending
            .iter()
            .enumerate()
            .filter(|(_, a)| a.time <= t)
            .max_by_key(|(i, a)| (a.queue, std::cmp::Reverse(*i)))
            .map(|(i, _)| i);
        let Some(i) = pick else { break };
        let a = pending.remove(i);
        let end = t + (u64::from(a.bytes) + OVERHEAD) * 8 * 1_000_000_000 / RATE_BPS;
        out.push((a.id, t, end));
        free_at = end;
    }
    out
}

/// Same arrivals through the traffic manager, polled at pseudo-random times.
fn simulate(arrivals: &[Arrival], seed: u64) -> Vec<(u32, u64, u64)> {
    let cfg = PortConfig {
        rate_bps: RATE_BPS,
        wire_overhead_bytes: OVERHEAD as u32,
        num_queues: 8,
        scheduling: Scheduling::StrictPriority,
        ..PortConfig::default()
    };
    let mut tm = tm_with(1 << 30, 4, cfg);
    let mut x = seed;
    let mut out = Vec::new();
    for a in arrivals {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        // Before each arrival, sometimes poll up to just before it (an arrival
        // and a start at the same ns: the arrival counts first, as in the
        // reference), sometimes not at all.
        if x >> 62 != 0 {
            while let Some(d) = tm.dequeue(a.time.saturating_sub(1)) {
                out.push((d.item, d.tx_start, d.tx_end));
            }
        }
        tm.enqueue(a.time, 4, a.queue, a.bytes, a.id)
            .expect("the pool is large enough");
    }
    out.extend(
        drain(&mut tm)
            .iter()
            .map(|d| (d.item, d.tx_start, d.tx_end)),
    );
    out
}

#[test]
fn matches_the_reference_under_random_polling() {
    for seed in 1..=8u64 {
        let mut x = seed;
        let mut now = 0u64;
        let arrivals: Vec<Arrival> = (0..2_000u32)
            .map(|id| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                now += (x >> 52) * 2;
                Arrival {
                    id,
                    time: now,
                    queue: ((x >> 20) % 8) as u8,
                    bytes: 64 + ((x >> 30) % 1437) as u32,
                }
            })
            .collect();
        assert_eq!(
            simulate(&arrivals, seed),
            reference(&arrivals),
            "seed {seed}"
        );
    }
}
