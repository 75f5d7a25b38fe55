//! Port shaper, wire overhead, propagation delay and runtime reconfiguration.

mod common;

use bufferlab_tm::PortConfig;
use common::{drain, tm_with, GBPS};

#[test]
fn burst_leaves_at_the_port_rate() {
    let mut tm = tm_with(
        10_000_000,
        3,
        PortConfig {
            rate_bps: GBPS,
            ..PortConfig::default()
        },
    );
    for i in 0..10 {
        tm.enqueue(1_000, 3, 0, 1000, i).expect("admitted");
    }
    let out = drain(&mut tm);
    assert_eq!(out.len(), 10);
    for (k, d) in out.iter().enumerate() {
        let k = k as u64;
        // (1000 + 24) * 8 bits at 1 Gb/s = 8192 ns per frame.
        assert_eq!(u64::from(d.item), k);
        assert_eq!(d.port, 3);
        assert_eq!(d.tx_start, 1_000 + k * 8192);
        assert_eq!(d.tx_end, 1_000 + (k + 1) * 8192);
        assert_eq!(d.arrival, d.tx_end);
    }
}

#[test]
fn long_burst_at_an_odd_rate_does_not_drift() {
    // 64 + 24 bytes = 704 bits at 7 Mb/s = 100_571.428.. ns per frame.
    let rate = 7_000_000;
    let mut tm = tm_with(
        10_000_000,
        0,
        PortConfig {
            rate_bps: rate,
            ..PortConfig::default()
        },
    );
    let n = 20_000u64;
    for i in 0..n {
        tm.enqueue(0, 0, 0, 64, i as u32).expect("admitted");
    }
    let out = drain(&mut tm);
    assert_eq!(out.len() as u64, n);
    for (k, d) in out.iter().enumerate() {
        let k = k as u64 + 1;
        assert_eq!(d.tx_end, k * 704 * 1_000_000_000 / rate);
    }
    // Spacing is the truncated or the rounded-up period, never anything else.
    for w in out.windows(2) {
        let gap = w[1].tx_start - w[0].tx_start;
        assert!(gap == 100_571 || gap == 100_572, "gap {gap}");
    }
}

#[test]
fn wire_overhead_zero_counts_bare_frames() {
    for (overhead, per_frame) in [(0u32, 12_000u64), (24, 12_192)] {
        let mut tm = tm_with(
            10_000_000,
            1,
            PortConfig {
                rate_bps: GBPS,
                wire_overhead_bytes: overhead,
                ..PortConfig::default()
            },
        );
        tm.enqueue(0, 1, 0, 1500, 0).expect("admitted");
        tm.enqueue(0, 1, 0, 1500, 1).expect("admitted");
        let out = drain(&mut tm);
        assert_eq!(out[0].tx_end, per_frame);
        assert_eq!(out[1].tx_start, per_frame);
        assert_eq!(out[1].tx_end, 2 * per_frame);
    }
}

#[test]
fn propagation_delay_adds_exactly_delay_ns() {
    let mut tm = tm_with(
        10_000_000,
        2,
        PortConfig {
            rate_bps: 100_000_000,
            delay_ns: 25_000_000,
            ..PortConfig::default()
        },
    );
    tm.enqueue(500, 2, 0, 100, 7).expect("admitted");
    let out = drain(&mut tm);
    // (100 + 24) * 8 bits at 100 Mb/s = 9920 ns.
    assert_eq!(out[0].tx_start, 500);
    assert_eq!(out[0].tx_end, 500 + 9_920);
    assert_eq!(out[0].arrival, 500 + 9_920 + 25_000_000);
}

#[test]
fn unlimited_rate_sends_at_once_one_at_a_time() {
    let mut tm = tm_with(10_000_000, 0, PortConfig::default());
    for i in 0..3 {
        tm.enqueue(40, 0, 0, 1500, i).expect("admitted");
    }
    assert_eq!(tm.next_event_time(), Some(40));
    let out: Vec<_> = std::iter::from_fn(|| tm.dequeue(40)).collect();
    assert_eq!(out.iter().map(|d| d.item).collect::<Vec<_>>(), [0, 1, 2]);
    assert!(out.iter().all(|d| d.tx_start == 40 && d.tx_end == 40));
}

#[test]
fn idle_port_starts_a_frame_when_it_arrives() {
    let mut tm = tm_with(
        10_000_000,
        0,
        PortConfig {
            rate_bps: GBPS,
            ..PortConfig::default()
        },
    );
    tm.enqueue(0, 0, 0, 1000, 0).expect("admitted");
    assert_eq!(drain(&mut tm)[0].tx_end, 8192);
    tm.enqueue(100_000, 0, 0, 1000, 1).expect("admitted");
    let d = drain(&mut tm);
    assert_eq!((d[0].tx_start, d[0].tx_end), (100_000, 108_192));
}

#[test]
fn nothing_leaves_before_its_time() {
    let mut tm = tm_with(
        10_000_000,
        0,
        PortConfig {
            rate_bps: GBPS,
            ..PortConfig::default()
        },
    );
    tm.enqueue(0, 0, 0, 1000, 0).expect("admitted");
    tm.enqueue(0, 0, 0, 1000, 1).expect("admitted");
    assert!(tm.dequeue(0).is_some());
    assert_eq!(tm.next_event_time(), Some(8192));
    assert!(tm.dequeue(8191).is_none());
    assert_eq!(tm.dequeue(8192).map(|d| d.item), Some(1));
    assert_eq!(tm.next_event_time(), None);
}

#[test]
fn late_polling_keeps_the_scheduled_start() {
    let mut tm = tm_with(
        10_000_000,
        0,
        PortConfig {
            rate_bps: GBPS,
            ..PortConfig::default()
        },
    );
    for i in 0..3 {
        tm.enqueue(0, 0, 0, 1000, i).expect("admitted");
    }
    // One poll long after all three could have left still spaces them at the rate.
    let out: Vec<_> = std::iter::from_fn(|| tm.dequeue(1_000_000)).collect();
    let starts: Vec<u64> = out.iter().map(|d| d.tx_start).collect();
    assert_eq!(starts, [0, 8192, 16384]);
}

#[test]
fn rate_change_applies_to_frames_not_yet_started() {
    let mut tm = tm_with(
        10_000_000,
        0,
        PortConfig {
            rate_bps: GBPS,
            ..PortConfig::default()
        },
    );
    for i in 0..3 {
        tm.enqueue(0, 0, 0, 1000, i).expect("admitted");
    }
    let first = tm.dequeue(0).expect("first frame starts at once");
    assert_eq!(first.tx_end, 8192);
    let mut cfg = *tm.port_config(0).expect("port 0 exists");
    cfg.rate_bps = GBPS / 2;
    tm.configure_port(0, cfg).expect("valid");
    let rest = drain(&mut tm);
    // The frame in flight keeps its end; the next two go at 500 Mb/s.
    assert_eq!(rest[0].tx_start, 8192);
    assert_eq!(rest[0].tx_end, 8192 + 16_384);
    assert_eq!(rest[1].tx_end, 8192 + 2 * 16_384);
}

#[test]
fn delay_change_applies_to_frames_not_yet_started() {
    let mut tm = tm_with(
        10_000_000,
        0,
        PortConfig {
            rate_bps: GBPS,
            delay_ns: 1_000,
            ..PortConfig::default()
        },
    );
    tm.enqueue(0, 0, 0, 1000, 0).expect("admitted");
    tm.enqueue(0, 0, 0, 1000, 1).expect("admitted");
    let first = tm.dequeue(0).expect("starts at once");
    let mut cfg = *tm.port_config(0).expect("port 0 exists");
    cfg.delay_ns = 5_000;
    tm.configure_port(0, cfg).expect("valid");
    let second = drain(&mut tm);
    assert_eq!(first.arrival, 8192 + 1_000);
    assert_eq!(second[0].arrival, 2 * 8192 + 5_000);
}

#[test]
fn delay_line_delivers_at_arrival_time() {
    let mut tm = tm_with(
        10_000_000,
        0,
        PortConfig {
            rate_bps: GBPS,
            delay_ns: 100_000,
            ..PortConfig::default()
        },
    );
    tm.configure_port(
        1,
        PortConfig {
            rate_bps: GBPS,
            delay_ns: 1_000,
            ..PortConfig::default()
        },
    )
    .expect("valid");
    let mut line = bufferlab_tm::DelayLine::new();
    tm.enqueue(0, 0, 0, 1000, 0).expect("admitted");
    tm.enqueue(0, 1, 0, 1000, 1).expect("admitted");
    tm.enqueue(0, 1, 0, 1000, 2).expect("admitted");
    for d in drain(&mut tm) {
        line.send(d.port, d.arrival, d.item).expect("port exists");
    }
    let got: Vec<_> = std::iter::from_fn(|| line.receive(u64::MAX)).collect();
    // Port 1's short link delivers both its frames before port 0's long one.
    assert_eq!(got, [(1, 9_192, 1), (1, 17_384, 2), (0, 108_192, 0)]);
}

#[test]
fn a_frame_is_on_the_wire_for_the_bytes_egress_sent() {
    // 1,015 buffered bytes (a 15-byte bridged header in front of 1,000), 1,000 sent:
    // (1000 + 24) * 8 bits at 1 Gb/s = 8192 ns each, not (1015 + 24) * 8 = 8312.
    let mut tm = tm_with(
        10_000_000,
        3,
        PortConfig {
            rate_bps: GBPS,
            delay_ns: 500,
            ..PortConfig::default()
        },
    );
    for i in 0..4 {
        tm.enqueue(0, 3, 0, 1015, i).expect("admitted");
    }
    let mut starts = vec![];
    while let Some(t) = tm.next_event_time() {
        let Some(d) = tm.dequeue(t) else { continue };
        assert_eq!(
            d.tx_end - d.tx_start,
            8312,
            "timed as buffered until retimed"
        );
        starts.push(d.tx_start);
        // Egress drops the third frame: the wire stays idle for it.
        let sent = (d.item != 2).then_some(1000);
        let (tx_end, arrival) = tm.retime_last(3, sent).expect("a frame was started");
        assert_eq!(tx_end, d.tx_start + if d.item == 2 { 0 } else { 8192 });
        assert_eq!(arrival, tx_end + 500);
    }
    assert_eq!(starts, vec![0, 8192, 16384, 16384]);
    assert_eq!(
        tm.retime_last(3, Some(1000)),
        None,
        "retimed once per start"
    );
}
