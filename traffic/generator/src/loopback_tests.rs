//! Sender and receiver together over the loopback interface of a private network namespace
//! (the test thread unshares one, so no traffic touches the machine's own interfaces).

use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::receiver::{Receiver, RxLimits};
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
            let stop = AtomicBool::new(false);
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
