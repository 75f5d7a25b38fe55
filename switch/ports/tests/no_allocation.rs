//! Receiving and sending through live ports allocates nothing per frame (needs root for
//! the veth pair; skipped with a printed reason otherwise).
//!
//! This file holds a single test so that the counting allocator sees only it.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use bufferlab_ports::{clock, PortSet};
use common::{frame, root_or_skip, VethPair};

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

#[test]
fn send_wait_and_receive_allocate_nothing() {
    if !root_or_skip("send_wait_and_receive_allocate_nothing") {
        return;
    }
    let veth = VethPair::create();
    let mut set = PortSet::new().unwrap();
    set.add(1, veth.open(&veth.a)).unwrap();
    set.add(2, veth.open(&veth.b)).unwrap();
    let mut batch = set.new_batch();
    let sent: Vec<Vec<u8>> = (0..500u32)
        .map(|seq| frame(1, seq, 60 + (seq as usize * 13) % 1450))
        .collect();

    let before = ALLOCATIONS.with(Cell::get);
    let tx = set.port_mut(1).unwrap();
    let consumed = tx.send(sent.iter().map(Vec::as_slice)).unwrap();
    let mut received = 0;
    let mut intact = 0;
    let give_up = clock::monotonic_ns() + 5_000_000_000;
    while received < sent.len() && clock::monotonic_ns() < give_up {
        set.wait(Some(100_000_000)).unwrap();
        while let Some(port) = set.recv_next(&mut batch).unwrap() {
            assert_eq!(port, 2);
            for f in batch.iter() {
                if sent.get(received).is_some_and(|s| f.bytes == s.as_slice())
                    && f.kernel_ns.is_some()
                {
                    intact += 1;
                }
                received += 1;
            }
        }
    }
    let allocations = ALLOCATIONS.with(Cell::get) - before;

    assert_eq!(consumed, 500);
    assert_eq!((received, intact), (500, 500));
    assert_eq!(allocations, 0);
}
