//! Once queues are warmed up, enqueue and dequeue allocate nothing.
//!
//! This file holds a single test so that the counting allocator sees only it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use bufferlab_tm::{DelayLine, PortConfig, Scheduling, TmConfig, TrafficManager};

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// The system allocator, counting allocations made by the current thread.
struct Counting;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Offers `rounds` bursts to four ports and drains them through their links;
/// returns how many frames reached the peers.
fn cycle(
    tm: &mut TrafficManager<u64>,
    line: &mut DelayLine<u64>,
    now: &mut u64,
    rounds: u64,
) -> u64 {
    let mut sent = 0;
    for r in 0..rounds {
        for k in 0..64u64 {
            let port = (k % 4) as u16;
            let queue = (k % 8) as u8;
            // Some are refused (queue 7 does not exist on port 3): the item comes back.
            let _ = tm.enqueue(*now, port, queue, 64 + ((r + k) % 1400) as u32, k);
        }
        while let Some(t) = tm.next_event_time() {
            *now = (*now).max(t);
            while let Some(d) = tm.dequeue(*now) {
                let _ = line.send(d.port, d.arrival, d.item);
            }
        }
        while line.receive(u64::MAX).is_some() {
            sent += 1;
        }
    }
    sent
}

#[test]
fn warmed_up_queues_do_not_allocate() {
    let mut tm = TrafficManager::<u64>::new(TmConfig::default()).expect("valid");
    for port in 0..4u16 {
        let cfg = PortConfig {
            rate_bps: 1_000_000_000,
            delay_ns: 3_000 * u64::from(port),
            num_queues: if port == 3 { 7 } else { 8 },
            scheduling: if port % 2 == 0 {
                Scheduling::StrictPriority
            } else {
                Scheduling::drr(&[1500; 8])
            },
            ..PortConfig::default()
        };
        tm.configure_port(port, cfg).expect("valid");
    }
    let mut line = DelayLine::new();
    let mut now = 0;
    let start = ALLOCATIONS.with(Cell::get);
    assert!(cycle(&mut tm, &mut line, &mut now, 10) > 0);
    let before = ALLOCATIONS.with(Cell::get);
    // The counter does see the queues growing while they warm up.
    assert!(before > start);
    let sent = cycle(&mut tm, &mut line, &mut now, 200);
    let after = ALLOCATIONS.with(Cell::get);
    assert_eq!(sent, 200 * 56);
    assert_eq!(after - before, 0, "allocations after warm-up");
}
