//! Benchmark: traffic-manager enqueue+dequeue operations per second, printed
//! as one JSON line. Run by `bench/tm_throughput.py`.
//!
//! Each scenario offers bursts of frames at a virtual clock and drains them
//! through the shaper; the figure is frames that went in and out per second
//! of wall time (one frame = one enqueue + one dequeue).

use std::hint::black_box;
use std::time::Instant;

use bufferlab_tm::{PortConfig, Scheduling, TmConfig, TrafficManager};

/// Frames per burst offered to the manager before draining it.
const BURST: u64 = 256;

/// Runs `frames` frames over `ports` ports with `queues` queues each; returns frames/s.
fn frames_per_second(frames: u64, ports: u16, queues: u8, scheduling: Scheduling) -> f64 {
    let mut tm = TrafficManager::<u64>::new(TmConfig {
        pool_bytes: 1 << 30,
        ..TmConfig::default()
    })
    .unwrap_or_else(|e| panic!("benchmark config: {e}"));
    for port in 0..ports {
        let cfg = PortConfig {
            rate_bps: 10_000_000_000,
            num_queues: queues,
            scheduling,
            ..PortConfig::default()
        };
        tm.configure_port(port, cfg)
            .unwrap_or_else(|e| panic!("benchmark port config: {e}"));
    }
    let mut now = 0u64;
    let mut run = |tm: &mut TrafficManager<u64>, n: u64| {
        let mut out = 0u64;
        let mut id = 0u64;
        while id < n {
            for _ in 0..BURST {
                let port = (id % u64::from(ports)) as u16;
                let queue = ((id / u64::from(ports)) % u64::from(queues)) as u8;
                let bytes = 64 + (id % 1437) as u32;
                if tm.enqueue(now, port, queue, bytes, id).is_ok() {
                    out += 1;
                }
                id += 1;
            }
            while let Some(t) = tm.next_event_time() {
                now = now.max(t);
                while let Some(d) = tm.dequeue(now) {
                    black_box(d);
                }
            }
        }
        out
    };
    // Warm up the queues' storage so the timed run measures steady state.
    run(&mut tm, 100_000);
    let started = Instant::now();
    let done = run(&mut tm, frames);
    let secs = started.elapsed().as_secs_f64();
    done as f64 / secs
}

fn main() {
    let frames = 3_000_000;
    let drr = Scheduling::drr(&[1500, 3000, 1500, 3000, 1500, 3000, 1500, 3000]);
    let fifo = frames_per_second(frames, 1, 1, Scheduling::StrictPriority);
    let strict = frames_per_second(frames, 8, 8, Scheduling::StrictPriority);
    let weighted = frames_per_second(frames, 8, 8, drr);
    let many_ports = frames_per_second(frames, 512, 1, Scheduling::StrictPriority);
    println!(
        "{{\"benchmark\": \"tm_throughput\", \"frames\": {frames}, \"burst_frames\": {BURST}, \
         \"fifo_1port_pairs_per_s\": {fifo:.0}, \"strict_8ports_8queues_pairs_per_s\": {strict:.0}, \
         \"drr_8ports_8queues_pairs_per_s\": {weighted:.0}, \
         \"fifo_512ports_pairs_per_s\": {many_ports:.0}, \
         \"unit\": \"enqueue+dequeue pairs per second of wall time\"}}"
    );
}
