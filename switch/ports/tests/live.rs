//! Live ports on a real veth pair in a fresh network namespace (needs root; skipped with a
//! printed reason otherwise).

mod common;

use bufferlab_ports::{clock, PortConfig, PortError, PortSet};
use common::{frame, receive, root_or_skip, VethPair};

/// A set holding just `port` as switch port `number`.
fn set_of(number: u32, port: bufferlab_ports::LivePort) -> PortSet {
    let mut set = PortSet::new().unwrap();
    set.add(number, port).unwrap();
    set
}

#[test]
fn frames_sent_on_one_end_arrive_intact_on_the_other() {
    if !root_or_skip("frames_sent_on_one_end_arrive_intact_on_the_other") {
        return;
    }
    let veth = VethPair::create();
    let mut tx = veth.open(&veth.a);
    let mut rx = set_of(7, veth.open(&veth.b));
    let sent = [frame(1, 0, 60), frame(1, 1, 1000), frame(1, 2, 1514)];
    assert_eq!(tx.send(sent.iter().map(Vec::as_slice)).unwrap(), 3);
    let got = receive(&mut rx, 3);
    assert_eq!(got.len(), 3);
    for (g, s) in got.iter().zip(&sent) {
        assert_eq!(g.port, 7);
        assert_eq!(&g.bytes, s);
    }
    let txc = tx.counters();
    assert_eq!((txc.tx_frames, txc.tx_bytes), (3, 60 + 1000 + 1514));
    let rxc = rx.port(7).unwrap().counters();
    assert_eq!((rxc.rx_frames, rxc.rx_bytes), (3, 60 + 1000 + 1514));
    assert_eq!(rxc.rx_oversize, 0);
}

#[test]
fn many_frames_come_in_full_batches_in_order_without_loss() {
    if !root_or_skip("many_frames_come_in_full_batches_in_order_without_loss") {
        return;
    }
    let veth = VethPair::create();
    let config = PortConfig {
        batch_frames: 32,
        ..PortConfig::default()
    };
    let mut tx = veth.open_with(&veth.a, &config);
    let mut rx = set_of(2, veth.open_with(&veth.b, &config));
    let sent: Vec<Vec<u8>> = (0..1000u32)
        .map(|seq| frame(1, seq, 60 + (seq as usize * 37) % 1455))
        .collect();
    // All 1000 are queued on the receiving socket before the first receive, so receive
    // batches are full.
    assert_eq!(tx.send(sent.iter().map(Vec::as_slice)).unwrap(), 1000);
    let got = receive(&mut rx, 1000);
    assert_eq!(got.len(), 1000);
    assert!(got.iter().zip(&sent).all(|(g, s)| &g.bytes == s));
    assert_eq!(got.iter().map(|g| g.batch_len).max(), Some(32));
    assert_eq!(rx.port_mut(2).unwrap().poll_kernel_drops().unwrap(), 0);
}

#[test]
fn kernel_timestamps_are_present_monotonic_and_realtime() {
    if !root_or_skip("kernel_timestamps_are_present_monotonic_and_realtime") {
        return;
    }
    let veth = VethPair::create();
    let mut tx = veth.open(&veth.a);
    let mut rx = set_of(1, veth.open(&veth.b));
    let before = clock::realtime_ns();
    for seq in 0..50u32 {
        // One frame per call, so the frames get distinct arrival times.
        assert_eq!(tx.send([frame(1, seq, 100).as_slice()]).unwrap(), 1);
    }
    let got = receive(&mut rx, 50);
    let after = clock::realtime_ns();
    assert_eq!(got.len(), 50);
    let stamps: Vec<u64> = got.iter().map(|g| g.kernel_ns.unwrap()).collect();
    assert!(stamps.windows(2).all(|w| w[0] <= w[1]), "{stamps:?}");
    assert!(stamps[0] >= before && stamps[49] <= after);
    assert_eq!(rx.port(1).unwrap().counters().rx_no_timestamp, 0);
}

#[test]
fn outgoing_frames_are_not_received_back() {
    if !root_or_skip("outgoing_frames_are_not_received_back") {
        return;
    }
    let veth = VethPair::create();
    // Two ports on end a: neither may see what is sent through a, by itself or by the other.
    let mut set = PortSet::new().unwrap();
    set.add(1, veth.open(&veth.a)).unwrap();
    set.add(2, veth.open(&veth.a)).unwrap();
    set.add(3, veth.open(&veth.b)).unwrap();
    let sent: Vec<Vec<u8>> = (0..5).map(|seq| frame(1, seq, 80)).collect();
    let port1 = set.port_mut(1).unwrap();
    assert_eq!(port1.send(sent.iter().map(Vec::as_slice)).unwrap(), 5);
    let got = receive(&mut set, 5);
    assert_eq!(got.iter().map(|g| g.port).collect::<Vec<_>>(), [3; 5]);
    // Frames coming in on a reach both of its ports, so they do listen.
    let back = frame(2, 99, 80);
    assert_eq!(set.port_mut(3).unwrap().send([back.as_slice()]).unwrap(), 1);
    let mut got = receive(&mut set, 2);
    got.sort_by_key(|g| g.port);
    assert_eq!(got.iter().map(|g| g.port).collect::<Vec<_>>(), [1, 2]);
    assert!(got.iter().all(|g| g.bytes == back));
    // And nothing else arrived at a: its counters hold only that one frame each.
    assert_eq!(set.port(1).unwrap().counters().rx_frames, 1);
    assert_eq!(set.port(2).unwrap().counters().rx_frames, 1);
}

#[test]
fn oversize_and_runt_frames_are_counted_and_skipped() {
    if !root_or_skip("oversize_and_runt_frames_are_counted_and_skipped") {
        return;
    }
    let veth = VethPair::create();
    let mut old_tx = veth.open(&veth.a);
    let mut rx = set_of(1, veth.open(&veth.b));
    assert_eq!(rx.port(1).unwrap().max_frame_bytes(), 1500 + 14 + 4);
    // The MTU grows after the ports were opened: a port opened now sends 2000-byte frames,
    // the receiving port (still sized for 1500) must count and skip them.
    veth.set_mtu(3000);
    let mut new_tx = veth.open(&veth.a);
    assert_eq!(new_tx.max_frame_bytes(), 3018);
    let big = frame(1, 0, 2000);
    let small = frame(1, 1, 100);
    assert_eq!(new_tx.send([big.as_slice(), small.as_slice()]).unwrap(), 2);
    let got = receive(&mut rx, 1);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].bytes, small);
    let rxc = rx.port(1).unwrap().counters();
    assert_eq!((rxc.rx_frames, rxc.rx_oversize), (1, 1));
    // The old port refuses frames over its own maximum and frames under a header.
    let runt = [0u8; 10];
    let after = frame(1, 2, 64);
    let frames = [big.as_slice(), runt.as_slice(), after.as_slice()];
    assert_eq!(old_tx.send(frames).unwrap(), 3);
    let txc = old_tx.counters();
    assert_eq!((txc.tx_frames, txc.tx_oversize, txc.tx_runt), (1, 1, 1));
    let got = receive(&mut rx, 1);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].bytes, after);
}

#[test]
fn vlan_tags_stripped_by_the_kernel_are_put_back() {
    if !root_or_skip("vlan_tags_stripped_by_the_kernel_are_put_back") {
        return;
    }
    let veth = VethPair::create();
    let mut tx = veth.open(&veth.a);
    let mut rx = set_of(1, veth.open(&veth.b));
    let plain = frame(1, 5, 200);
    // Same frame with an 802.1Q tag (PCP 3, VID 42) and a QinQ-style 802.1ad outer tag.
    let mut tagged = plain[..12].to_vec();
    tagged.extend_from_slice(&[0x81, 0x00, 0x60, 0x2a]);
    tagged.extend_from_slice(&plain[12..]);
    let mut outer = plain[..12].to_vec();
    outer.extend_from_slice(&[0x88, 0xa8, 0x00, 0x07]);
    outer.extend_from_slice(&plain[12..]);
    let sent = [tagged, outer];
    assert_eq!(tx.send(sent.iter().map(Vec::as_slice)).unwrap(), 2);
    let got = receive(&mut rx, 2);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].bytes, sent[0]);
    assert_eq!(got[1].bytes, sent[1]);
}

#[test]
fn a_port_set_tags_batches_with_switch_port_numbers() {
    if !root_or_skip("a_port_set_tags_batches_with_switch_port_numbers") {
        return;
    }
    let veth = VethPair::create();
    let mut set = PortSet::new().unwrap();
    set.add(4, veth.open(&veth.a)).unwrap();
    set.add(9, veth.open(&veth.b)).unwrap();
    let err = set.add(4, veth.open(&veth.b)).unwrap_err();
    assert!(
        matches!(err, PortError::DuplicatePort { port: 4, .. }),
        "{err}"
    );
    assert_eq!(set.len(), 2);
    let to_b = frame(1, 1, 64);
    let to_a = frame(2, 2, 64);
    assert_eq!(set.port_mut(4).unwrap().send([to_b.as_slice()]).unwrap(), 1);
    assert_eq!(set.port_mut(9).unwrap().send([to_a.as_slice()]).unwrap(), 1);
    let mut got = receive(&mut set, 2);
    got.sort_by_key(|g| g.port);
    assert_eq!(got.len(), 2);
    assert_eq!((got[0].port, &got[0].bytes), (4, &to_a));
    assert_eq!((got[1].port, &got[1].bytes), (9, &to_b));
}

#[test]
fn the_waker_interrupts_a_wait_on_quiet_ports() {
    if !root_or_skip("the_waker_interrupts_a_wait_on_quiet_ports") {
        return;
    }
    let veth = VethPair::create();
    let mut set = PortSet::new().unwrap();
    set.add(1, veth.open(&veth.a)).unwrap();
    set.add(2, veth.open(&veth.b)).unwrap();
    let waker = set.waker();
    let t = std::thread::spawn(move || waker.wake());
    // No timeout: only the waker can end this wait.
    let outcome = set.wait(None).unwrap();
    t.join().unwrap();
    assert!(outcome.woken);
    assert_eq!(outcome.ready_ports, 0);
}

#[test]
fn an_open_port_makes_its_interface_promiscuous_until_closed() {
    if !root_or_skip("an_open_port_makes_its_interface_promiscuous_until_closed") {
        return;
    }
    let veth = VethPair::create();
    assert_eq!(veth.promiscuity(&veth.a), 0);
    let port = veth.open(&veth.a);
    assert_eq!(veth.promiscuity(&veth.a), 1);
    assert!(port.ifindex() > 0);
    assert_eq!(port.mtu(), 1500);
    drop(port);
    assert_eq!(veth.promiscuity(&veth.a), 0);
}

#[test]
fn frames_a_full_qdisc_refuses_are_counted_as_dropped() {
    if !root_or_skip("frames_a_full_qdisc_refuses_are_counted_as_dropped") {
        return;
    }
    let veth = VethPair::create();
    // A shaper that holds about two frames: a burst of 100 overflows it.
    veth.tc(&[
        "qdisc", "add", "dev", &veth.a, "root", "tbf", "rate", "1mbit", "burst", "1600", "limit",
        "3000",
    ]);
    let mut tx = veth.open(&veth.a);
    let sent: Vec<Vec<u8>> = (0..100).map(|seq| frame(1, seq, 1400)).collect();
    assert_eq!(tx.send(sent.iter().map(Vec::as_slice)).unwrap(), 100);
    let c = tx.counters();
    assert!(c.tx_dropped > 0, "{c:?}");
    assert_eq!(c.tx_frames + c.tx_dropped, 100, "{c:?}");
    assert_eq!(c.tx_bytes, c.tx_frames * 1400);
}

#[test]
fn a_port_counts_a_link_down_and_works_again_once_it_is_up() {
    if !root_or_skip("a_port_counts_a_link_down_and_works_again_once_it_is_up") {
        return;
    }
    let veth = VethPair::create();
    let mut tx = veth.open(&veth.a);
    let mut rx = set_of(1, veth.open(&veth.b));
    veth.set_up(&veth.b, false);
    // The kernel reports the link going down as a socket error: the wait wakes for it and
    // receiving counts it instead of failing.
    let outcome = rx.wait(Some(1_000_000_000)).unwrap();
    assert_eq!(outcome.ready_ports, 1);
    let mut batch = rx.new_batch();
    assert_eq!(rx.recv_next(&mut batch).unwrap(), None);
    assert_eq!(rx.port(1).unwrap().counters().rx_link_down, 1);
    veth.set_up(&veth.b, true);
    let after = frame(1, 7, 90);
    assert_eq!(tx.send([after.as_slice()]).unwrap(), 1);
    let got = receive(&mut rx, 1);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].bytes, after);
}

#[test]
fn a_full_send_buffer_takes_part_of_a_batch_and_the_wait_says_when_to_go_on() {
    if !root_or_skip("a_full_send_buffer_takes_part_of_a_batch_and_the_wait_says_when_to_go_on") {
        return;
    }
    let veth = VethPair::create();
    // A slow shaper with a long queue: frames wait in it while holding the small send
    // buffer, so sendmmsg runs out of buffer (EAGAIN) before the qdisc drops anything.
    veth.tc(&[
        "qdisc", "add", "dev", &veth.a, "root", "tbf", "rate", "10mbit", "burst", "1600", "limit",
        "10000000",
    ]);
    let config = PortConfig {
        sndbuf_bytes: 16 << 10,
        ..PortConfig::default()
    };
    let mut set = set_of(1, veth.open_with(&veth.a, &config));
    let mut sent: Vec<Vec<u8>> = (0..100).map(|seq| frame(1, seq, 1400)).collect();
    // One frame over the maximum, late in the list: counted once however often the
    // frames after a partial send are offered again.
    sent[80] = frame(1, 80, 1600);
    let mut consumed = set
        .port_mut(1)
        .unwrap()
        .send(sent.iter().map(Vec::as_slice))
        .unwrap();
    assert!(consumed > 0 && consumed < 80, "{consumed}");
    assert!(set.set_tx_pending(1, true));
    assert!(!set.set_tx_pending(5, true));
    let mut writable_wakes = 0;
    let give_up = clock::monotonic_ns() + 10_000_000_000;
    while consumed < sent.len() && clock::monotonic_ns() < give_up {
        let outcome = set.wait(Some(100_000_000)).unwrap();
        if outcome.writable_ports == 1 {
            assert_eq!(set.writable(), [1]);
            writable_wakes += 1;
            let port = set.port_mut(1).unwrap();
            consumed += port
                .send(sent.iter().skip(consumed).map(Vec::as_slice))
                .unwrap();
        }
    }
    assert_eq!(consumed, 100);
    assert!(writable_wakes > 0);
    let c = set.port(1).unwrap().counters();
    assert_eq!(
        (c.tx_frames, c.tx_oversize, c.tx_dropped),
        (99, 1, 0),
        "{c:?}"
    );
    set.set_tx_pending(1, false);
    assert_eq!(set.wait(Some(0)).unwrap().writable_ports, 0);
}
