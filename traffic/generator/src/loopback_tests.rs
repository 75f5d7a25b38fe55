//! Sender and receiver together over the loopback interface of a private network namespace
//! (the test thread unshares one, so no traffic touches the machine's own interfaces).

use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::clock::monotonic_ns;
use crate::receiver::{Receiver, RxLimits, StopSignal};
use crate::schedule::{Arrivals, Schedule, Sizes};
use crate::sender::{run, SendConfig};

fn config(port: u16, count: u64) -> SendConfig {
    SendConfig {
        dst: SocketAddrV4::new(Ipv4Addr::LOCALHOST, port),
        src: None,
        tos: 0x28,
        flow: 9,
        first_seq: 100,
        netns: None,
        count: Some(count),
        duration_ns: None,
        start_realtime_ns: None,
        tx_timestamps: true,
        batch: 8,
        spin_ns: 20_000,
        realtime_priority: None,
    }
}

/// Move the calling test thread into a new network namespace with loopback up; false when
/// that is not permitted (not root), and the test then has nothing to run on.
fn private_netns() -> bool {
    // SAFETY: unshare only changes the calling thread's namespace.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        eprintln!("skipped: unshare(CLONE_NEWNET) needs root");
        return false;
    }
    // A child forked from this thread starts in the new namespace.
    let up = std::process::Command::new("ip")
        .args(["link", "set", "lo", "up"])
        .status()
        .expect("run ip");
    assert!(up.success(), "ip link set lo up failed");
    true
}

#[test]
fn frames_arrive_with_headers_sizes_tos_and_timestamps() {
    if !private_netns() {
        return;
    }
    let rx = Arc::new(
        Receiver::open(None, SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0), 4 << 20, 16).unwrap(),
    );
    let port = rx.local_port().unwrap();
    let worker = {
        let rx = Arc::clone(&rx);
        std::thread::spawn(move || {
            let stop = StopSignal::new();
            rx.run(
                &stop,
                RxLimits {
                    max_frames: Some(50),
                    idle_timeout_ns: Some(2_000_000_000),
                    deadline_mono_ns: None,
                },
            )
        })
    };
    let schedule = Schedule::new(
        Some(100e6),
        Arrivals::Constant,
        Sizes::Mixed(vec![(64, 1.0), (1518, 1.0)]),
        1,
        5,
    )
    .unwrap();
    let report = run(&config(port, 50), schedule, &AtomicBool::new(false)).unwrap();
    assert_eq!(report.sent, 50);
    let got = worker.join().unwrap().unwrap();
    assert_eq!(got.records.len(), 50);
    let seqs: Vec<u32> = got.records.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, (100..150).collect::<Vec<u32>>());
    assert!(got.records.iter().all(|r| r.flow == 9 && r.tos == 0x28));
    assert!(got.records.iter().all(|r| r.size == 64 || r.size == 1518));
    assert!(got.records.iter().all(|r| r.rx_ns >= r.tx_ns));
    assert_eq!(got.no_kernel_timestamp, 0);
    assert!(got.records.iter().all(|r| r.rx_kernel));
    // Loopback's driver takes software TX timestamps: one per frame, after the header stamp.
    assert_eq!(report.tx_stamps.len(), 50);
    assert_eq!(report.stamp_ids, Some(crate::sender::StampIds::Explicit));
    for (stamp, rec) in report.tx_stamps.iter().zip(&got.records) {
        assert_eq!(stamp.seq, rec.seq);
        assert!(stamp.kernel_ns >= rec.tx_ns && stamp.kernel_ns <= rec.rx_ns);
    }
}

#[test]
fn a_run_needs_a_count_or_a_duration() {
    let mut cfg = config(9, 1);
    cfg.count = None;
    let schedule = Schedule::new(None, Arrivals::Constant, Sizes::Fixed(64), 1, 1).unwrap();
    assert!(run(&cfg, schedule, &AtomicBool::new(false)).is_err());
}

#[test]
fn back_to_back_runs_end_after_their_duration() {
    // Without a rate every departure is due at once, so only elapsed time can end the run.
    if !private_netns() {
        return;
    }
    let sink = std::net::UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = sink.local_addr().unwrap().port();
    let mut cfg = config(port, 0);
    cfg.count = None;
    cfg.duration_ns = Some(50_000_000);
    cfg.tx_timestamps = false;
    let schedule = Schedule::new(None, Arrivals::Constant, Sizes::Fixed(64), 1, 1).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let stop = AtomicBool::new(false);
        let _ = tx.send(run(&cfg, schedule, &stop).map(|r| r.sent));
    });
    let sent = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("a back-to-back run with a duration must end")
        .unwrap();
    assert!(sent > 0);
}

/// A receiver on loopback and a function sending `count` frames to it from `first_seq`,
/// which returns once they are all in the receiver's socket.
///
/// Loopback hands a frame to its CPU's backlog, and softirq work moves it to the socket,
/// which a loaded machine can defer past send()'s return. So the calling thread is kept on
/// one CPU, and after the frames it sends a marker datagram to a socket of its own: the
/// backlog is first in, first out, so once the marker is received the frames are queued.
fn queue_target() -> (Receiver, impl Fn(u64, u32)) {
    // SAFETY: sched_getcpu takes no arguments.
    let cpu = unsafe { libc::sched_getcpu() };
    assert!(cpu >= 0, "sched_getcpu failed");
    // SAFETY: a zeroed cpu_set_t is empty; CPU_SET and sched_setaffinity get valid pointers.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        assert_eq!(
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
            0
        );
    }
    let rx = Receiver::open(None, SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0), 4 << 20, 16).unwrap();
    let port = rx.local_port().unwrap();
    let marker = std::net::UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    marker
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let send = move |count: u64, first_seq: u32| {
        let mut cfg = config(port, count);
        cfg.first_seq = first_seq;
        cfg.tx_timestamps = false;
        let schedule =
            Schedule::new(Some(100e6), Arrivals::Constant, Sizes::Fixed(64), 1, 1).unwrap();
        assert_eq!(
            run(&cfg, schedule, &AtomicBool::new(false)).unwrap().sent,
            count
        );
        marker.send_to(b"m", marker.local_addr().unwrap()).unwrap();
        marker
            .recv(&mut [0u8; 8])
            .expect("the marker never arrived");
    };
    (rx, send)
}

fn seqs(records: &[crate::receiver::RxRecord]) -> Vec<u32> {
    records.iter().map(|r| r.seq).collect()
}

#[test]
fn a_run_that_looks_after_its_stop_still_gets_what_arrived_before_it() {
    // A loaded machine can hold the receiving thread back until after stop(): the frames
    // that arrived before the stop are queued, and the run reads them, not those after.
    if !private_netns() {
        return;
    }
    let (rx, send) = queue_target();
    send(20, 100);
    let stop = StopSignal::new();
    stop.request();
    send(5, 200);
    let got = rx.run(&stop, RxLimits::default()).unwrap();
    assert_eq!(seqs(&got.records), (100..120).collect::<Vec<u32>>());
}

#[test]
fn a_run_that_looks_after_its_deadline_still_gets_what_arrived_before_it() {
    if !private_netns() {
        return;
    }
    let (rx, send) = queue_target();
    send(20, 100);
    let limits = RxLimits {
        deadline_mono_ns: Some(monotonic_ns()),
        ..RxLimits::default()
    };
    send(5, 200);
    let got = rx.run(&StopSignal::new(), limits).unwrap();
    assert_eq!(seqs(&got.records), (100..120).collect::<Vec<u32>>());
}

#[test]
fn a_run_held_back_past_its_idle_time_reads_what_is_queued_first() {
    // Queued frames mean the sender was not idle: a zero idle time still reads all of them
    // (and max_frames still caps the run exactly).
    if !private_netns() {
        return;
    }
    let (rx, send) = queue_target();
    send(20, 100);
    let idle = RxLimits {
        idle_timeout_ns: Some(0),
        ..RxLimits::default()
    };
    let got = rx.run(&StopSignal::new(), idle).unwrap();
    assert_eq!(seqs(&got.records), (100..120).collect::<Vec<u32>>());
    send(20, 300);
    let capped = RxLimits {
        max_frames: Some(7),
        idle_timeout_ns: Some(0),
        ..RxLimits::default()
    };
    let got = rx.run(&StopSignal::new(), capped).unwrap();
    assert_eq!(seqs(&got.records), (300..307).collect::<Vec<u32>>());
}
