//! The simulator end to end with real switch engines: serialisation on links with and
//! without wire overhead, PAUSE/PFC honouring at a host, one BCN regulator step, PAUSE
//! and a BCN(0,0) back-off holding a source apart, a full rate-limiter queue dropping or
//! holding its source, and seeded determinism.
//!
//! Switches run BMv2 JSON compiled by `bufferlab-p4c` and committed under
//! `tests/fixtures/`: `forward.json` is `p4src/forward.p4` (L2 forwarding by destination
//! MAC); `feedback_maker.json` is `feedback_maker.p4` there, a test switch that turns a
//! UDP frame from port 3 into a PAUSE, PFC or BCN frame for the host on port 1, so a test
//! knows to the ns when feedback reaches a host. Regenerate them with
//! `.venv/bin/bufferlab-p4c p4src/forward.p4 -o sim/tests/fixtures/forward.json` and
//! `.venv/bin/bufferlab-p4c sim/tests/fixtures/feedback_maker.p4 -o sim/tests/fixtures/`.

use std::sync::{Arc, Mutex};

use bufferlab_engine::engine::Engine;
use bufferlab_engine::tables::MatchValue;
use bufferlab_hosts::bcn::{RpConfig, RpFeatures, Severe};
use bufferlab_hosts::pause::pause_duration_ns;
use bufferlab_hosts::source::{Pattern, SizeMix, SourceSpec};
use bufferlab_sim::host::WhenFull;
use bufferlab_sim::link::LinkModel;
use bufferlab_sim::{End, ReactionSpec, Simulator, SourceConfig};
use bufferlab_tm::TmConfig;

const FORWARD_JSON: &str = include_str!("fixtures/forward.json");
const MAKER_JSON: &str = include_str!("fixtures/feedback_maker.json");

const TEN_GBIT: u64 = 10_000_000_000;
/// Feedback kinds of feedback_maker.p4, chosen by the UDP source port of the frame
/// sent into its port 3; the UDP destination port carries the value.
const MAKE_PAUSE: u16 = 1;
const MAKE_BCN: u16 = 2;
const MAKE_PFC: u16 = 3;
const MAKE_BCN_0_0: u16 = 4;
/// The CPID feedback_maker.p4 puts in its BCN frames.
const MAKER_CPID: u64 = 0x0000_0001_0003_0000;

fn mac(n: u8) -> [u8; 6] {
    [8, 0, 0, 0, 1, n]
}

fn engine(json: &str, seed: u64) -> Arc<Mutex<Engine>> {
    let engine = Engine::new(json, TmConfig::default(), seed).expect("fixture loads");
    Arc::new(Mutex::new(engine))
}

/// forward.p4 with host `n` (MAC 08:00:00:00:01:0n) on port `n` for n in 1..=hosts.
fn forward_switch(hosts: u8, seed: u64) -> Arc<Mutex<Engine>> {
    let sw = engine(FORWARD_JSON, seed);
    {
        let mut e = sw.lock().expect("fresh lock");
        for n in 1..=hosts {
            let key = u128::from_be_bytes({
                let mut k = [0u8; 16];
                k[10..].copy_from_slice(&mac(n));
                k
            });
            e.table_add(
                "l2_forward",
                vec![MatchValue::Exact(key)],
                "l2_to_port",
                vec![u128::from(n)],
                0,
            )
            .expect("l2 entry");
        }
    }
    sw
}

fn link(delay_ns: u64, wire_overhead_bytes: u32) -> LinkModel {
    LinkModel {
        rate_bps: TEN_GBIT,
        delay_ns,
        wire_overhead_bytes,
        honour_pause: true,
    }
}

fn host_end(name: &str) -> End {
    End {
        node: name.into(),
        port: None,
    }
}

fn switch_end(name: &str, port: u16) -> End {
    End {
        node: name.into(),
        port: Some(port),
    }
}

/// Adds hosts h1..=hn (MAC 08:00:00:00:01:0n, IP 10.0.1.n).
fn add_hosts(sim: &mut Simulator, n: u8) {
    for i in 1..=n {
        sim.add_host(&format!("h{i}"), mac(i), [10, 0, 1, i])
            .expect("new host");
    }
}

/// Links host hi to port i of `switch` for i in 1..=n.
fn star(sim: &mut Simulator, switch: &str, n: u8, model: LinkModel) {
    for i in 1..=n {
        sim.connect(
            &host_end(&format!("h{i}")),
            &switch_end(switch, u16::from(i)),
            model,
        )
        .expect("link");
    }
}

fn source(name: &str, host: &str, destination: &str, pattern: Pattern, size: u32) -> SourceConfig {
    SourceConfig {
        name: name.into(),
        host: host.into(),
        destination: destination.into(),
        spec: SourceSpec {
            pattern,
            on_off: None,
            sizes: SizeMix::fixed(size).expect("valid size"),
            wire_overhead_bytes: 0,
            start_ns: 0,
            stop_ns: None,
        },
        dscp: 0,
        priority: 0,
        udp_ports: (5000, 5000),
        rlq_bytes: 150_000,
        when_full: WhenFull::Drop,
        reaction: ReactionSpec::None,
        response_ns: 0,
    }
}

/// A source of `frames` back-to-back frames from `start_ns` at the link's rate.
fn burst(name: &str, host: &str, destination: &str, size: u32, start_ns: u64) -> SourceConfig {
    let mut s = source(
        name,
        host,
        destination,
        Pattern::Constant { rate_bps: TEN_GBIT },
        size,
    );
    s.spec.start_ns = start_ns;
    s
}

/// One frame at `at_ns` from h3 into feedback_maker's port 3: feedback of `kind` with
/// `value` for h1.
fn feedback_frame(name: &str, kind: u16, value: u16, at_ns: u64) -> SourceConfig {
    let mut s = burst(name, "h3", "h1", FEEDBACK_TRIGGER_BYTES, at_ns);
    s.spec.stop_ns = Some(at_ns + 1);
    s.udp_ports = (kind, value);
    s
}

fn run(sim: &mut Simulator, until_ns: u64) {
    sim.run_until(until_ns, &mut |_| Ok(()))
        .expect("run succeeds");
}

fn flow(sim: &Simulator, host: usize, flow: usize) -> bufferlab_hosts::sink::FlowAccount {
    sim.hosts[host].flows.get(flow).copied().unwrap_or_default()
}

// ---------------------------------------------------------------------------------------
// Serialisation.

#[test]
fn a_bare_1500_byte_frame_takes_1200_ns_per_10_gbit_hop_plus_the_delay() {
    let mut sim = Simulator::new(1);
    sim.add_switch("s1", forward_switch(2, 1), 1_000)
        .expect("switch");
    add_hosts(&mut sim, 2);
    star(&mut sim, "s1", 2, link(700, 0));
    let mut one = burst("one", "h1", "h2", 1500, 10_000);
    one.spec.stop_ns = Some(10_001);
    sim.add_source(one).expect("source");
    run(&mut sim, 1_000_000);
    let f = flow(&sim, 1, 0);
    assert_eq!(f.frames, 1);
    // h1's link: 12,000 bits at 10 Gbit/s = 1,200 ns, + 700 ns; the switch takes it
    // 1,000 ns after its last bit arrived and its port serialises it again: 1,200 + 700.
    assert_eq!(
        f.first_rx_ns,
        10_000 + (1_200 + 700) + 1_000 + (1_200 + 700)
    );
    assert_eq!(f.latency_min_ns, 4_800);
}

#[test]
fn between_two_switches_each_hop_adds_its_serialisation_delay_and_latency() {
    // h1 - s1 p1; s1 p2 - s2 p1; s2 p2 - h2. Both switches send MAC 1 to port 1 and
    // MAC 2 to port 2, so h1's frame crosses s1 then s2.
    let mut sim = Simulator::new(1);
    sim.add_switch("s1", forward_switch(2, 1), 1_000)
        .expect("switch");
    sim.add_switch("s2", forward_switch(2, 1), 2_000)
        .expect("switch");
    add_hosts(&mut sim, 2);
    let model = link(300, 0);
    sim.connect(&host_end("h1"), &switch_end("s1", 1), model)
        .expect("link");
    sim.connect(&switch_end("s1", 2), &switch_end("s2", 1), model)
        .expect("link");
    sim.connect(&switch_end("s2", 2), &host_end("h2"), model)
        .expect("link");
    let mut one = burst("one", "h1", "h2", 1500, 0);
    one.spec.stop_ns = Some(1);
    sim.add_source(one).expect("source");
    run(&mut sim, 100_000);
    // Three hops of 1,200 + 300 ns, and each switch's latency.
    assert_eq!(flow(&sim, 1, 0).first_rx_ns, 3 * 1_500 + 1_000 + 2_000);
    let arrived: Vec<u64> = sim.links.iter().map(|l| l.frames[0]).collect();
    // Directions h1>s1, s1>h1, s1>s2, s2>s1, s2>h2, h2>s2: one data frame each way forward.
    assert_eq!(arrived, vec![1, 0, 1, 0, 1, 0]);
}

#[test]
fn a_1500_byte_frame_between_two_hosts_arrives_1200_ns_plus_the_delay_after_it_started() {
    let mut sim = Simulator::new(1);
    add_hosts(&mut sim, 2);
    sim.connect(&host_end("h1"), &host_end("h2"), link(333, 0))
        .expect("host-host link");
    let mut one = burst("one", "h1", "h2", 1500, 5_000);
    one.spec.stop_ns = Some(5_001);
    sim.add_source(one).expect("source");
    run(&mut sim, 100_000);
    assert_eq!(flow(&sim, 1, 0).first_rx_ns, 5_000 + 1_200 + 333);
}

#[test]
fn with_24_bytes_of_overhead_frames_take_1219_or_1220_ns_so_their_sum_is_exact() {
    let mut sim = Simulator::new(1);
    add_hosts(&mut sim, 2);
    sim.connect(&host_end("h1"), &host_end("h2"), link(500, 24))
        .expect("host-host link");
    // Five frames back to back: 1,524 bytes = 12,192 bits = 1,219.2 ns each.
    let mut five = burst("five", "h1", "h2", 1500, 0);
    five.spec.stop_ns = Some(5 * 1_219);
    sim.add_source(five).expect("source");
    run(&mut sim, 100_000);
    let f = flow(&sim, 1, 0);
    assert_eq!(f.frames, 5);
    // The first ends after 1,219 ns (the 0.2 ns carried on); the fifth after exactly
    // 5 × 1,219.2 = 6,096 ns (rounding each up would give 6,100, down 6,095).
    assert_eq!(f.first_rx_ns, 1_219 + 500);
    assert_eq!(f.last_rx_ns, 6_096 + 500);
}

#[test]
fn a_switch_port_counts_the_overhead_too() {
    let mut sim = Simulator::new(1);
    sim.add_switch("s1", forward_switch(2, 1), 0)
        .expect("switch");
    add_hosts(&mut sim, 2);
    star(&mut sim, "s1", 2, link(0, 24));
    let mut one = burst("one", "h1", "h2", 1500, 0);
    one.spec.stop_ns = Some(1);
    sim.add_source(one).expect("source");
    run(&mut sim, 100_000);
    // Two hops of 1,219 ns (a frame on an idle link starts a fresh run).
    assert_eq!(flow(&sim, 1, 0).first_rx_ns, 2 * 1_219);
}

// ---------------------------------------------------------------------------------------
// Per-frame capture.

#[test]
fn a_capturing_host_records_each_data_frame_with_its_flow_sequence_and_times() {
    let mut sim = Simulator::new(1);
    sim.add_switch("s1", forward_switch(3, 1), 0)
        .expect("switch");
    add_hosts(&mut sim, 3);
    star(&mut sim, "s1", 3, link(0, 0));
    let mut a = burst("a", "h1", "h3", 1500, 0);
    a.spec.stop_ns = Some(2_401);
    let mut b = burst("b", "h2", "h3", 1500, 0);
    b.spec.stop_ns = Some(1);
    sim.add_source(a).expect("source");
    sim.add_source(b).expect("source");
    assert!(sim.captured("h3").expect("a host").is_empty());
    sim.capture("h3").expect("a host");
    run(&mut sim, 100_000);
    let got: Vec<(u16, u32, u64, u64)> = sim
        .captured("h3")
        .expect("a host")
        .iter()
        .map(|f| (f.flow, f.seq, f.tx_ns, f.rx_ns))
        .collect();
    // Three frames of a at 0, 1,200, 2,400 ns and one of b at 0 reach port 3 at 1,200 ns,
    // 1,200 ns apart; a's first frame goes first (ties in the order scheduled), so the
    // port sends a0, b0, a1, a2, each 1,200 ns after the one before.
    assert_eq!(
        got,
        vec![
            (0, 0, 0, 2_400),
            (1, 0, 0, 3_600),
            (0, 1, 1_200, 4_800),
            (0, 2, 2_400, 6_000),
        ]
    );
    let mut record = [0xAA; bufferlab_sim::host::CapturedFrame::RECORD_BYTES];
    sim.captured("h3").expect("a host")[1].write_le(&mut record);
    assert_eq!(record[..4], [1, 0, 0, 0]);
    assert_eq!(record[16..], 3_600u64.to_le_bytes());
    sim.captured("h3").expect("a host")[2].write_le(&mut record);
    assert_eq!(record[..4], [0, 0, 0, 0]);
    assert_eq!(record[4..8], 1u32.to_le_bytes());
    assert_eq!(record[8..16], 1_200u64.to_le_bytes());
    assert_eq!(record[16..], 4_800u64.to_le_bytes());
    assert!(sim.capture("s1").is_err());
    assert!(sim.captured("nobody").is_err());
}

// ---------------------------------------------------------------------------------------
// PAUSE and PFC at a host.

/// Size of the frame h3 sends to have a feedback frame made: feedback_maker drops its
/// IPv4 and UDP headers (28 bytes) and adds 4 (PAUSE), 20 (PFC) or 24 (BCN).
const FEEDBACK_TRIGGER_BYTES: u32 = 84;
/// Its time from h3 to h1 at 10 Gbit/s, 24 bytes of overhead, 500 ns per link and a
/// switch latency of 1,000 ns: (84 + 24) × 8 / 10 = 86.4 → 86 ns, + 500, + 1,000, then
/// the PAUSE frame's (60 + 24) × 8 / 10 = 67.2 → 67 ns, + 500.
const PAUSE_TRAVEL_NS: u64 = 86 + 500 + 1_000 + 67 + 500;

/// h1 sends 1500-byte frames to h2 back to back at 10 Gbit/s through feedback_maker;
/// h3 triggers feedback for h1.
fn pause_lab() -> Simulator {
    let mut sim = Simulator::new(1);
    sim.add_switch("s1", engine(MAKER_JSON, 1), 1_000)
        .expect("switch");
    add_hosts(&mut sim, 3);
    star(&mut sim, "s1", 3, link(500, 24));
    sim.add_source(burst("data", "h1", "h2", 1500, 0))
        .expect("data source");
    sim
}

fn sent(sim: &Simulator, source: usize) -> u64 {
    sim.sources[source].counters.sent_frames
}

#[test]
fn a_pause_of_q_quanta_stops_the_host_for_q_times_512_bit_times() {
    let mut sim = pause_lab();
    let t = 20_000;
    sim.add_source(feedback_frame("pause", MAKE_PAUSE, 1000, t))
        .expect("trigger");
    let arrive = t + PAUSE_TRAVEL_NS;
    // 1,000 quanta × 512 bits at 10 Gbit/s.
    let pause = 51_200;
    assert_eq!(pause_duration_ns(1000, TEN_GBIT), pause);

    run(&mut sim, arrive - 1);
    assert_eq!(sim.hosts[0].counters.pause_frames, 0);
    run(&mut sim, arrive);
    assert_eq!(sim.hosts[0].counters.pause_frames, 1);
    // Frames start every 1,219.2 ns: 19 started by 22,153 ns (the last at 21,945 ns,
    // still on the wire: PAUSE lets it finish).
    let before = sent(&sim, 0);
    assert_eq!(before, 19);
    run(&mut sim, arrive + pause - 1);
    assert_eq!(sent(&sim, 0), before, "a frame started during the pause");
    run(&mut sim, arrive + pause);
    assert_eq!(sent(&sim, 0), before + 1, "no frame at the pause's end");
}

#[test]
fn xon_lets_the_host_send_again_at_once() {
    let mut sim = pause_lab();
    let (t_pause, t_xon) = (20_000, 120_000);
    sim.add_source(feedback_frame("pause", MAKE_PAUSE, 65_535, t_pause))
        .expect("trigger");
    sim.add_source(feedback_frame("xon", MAKE_PAUSE, 0, t_xon))
        .expect("trigger");
    let xon_arrives = t_xon + PAUSE_TRAVEL_NS;
    run(&mut sim, xon_arrives - 1);
    let paused = sent(&sim, 0);
    assert_eq!(paused, 19);
    assert_eq!(sim.hosts[0].counters.xon_frames, 0);
    run(&mut sim, xon_arrives);
    assert_eq!(sim.hosts[0].counters.xon_frames, 1);
    assert_eq!(sent(&sim, 0), paused + 1);
    // From then on back to back again: 1,219.2 ns per frame.
    run(&mut sim, xon_arrives + 12_192 - 1);
    assert_eq!(sent(&sim, 0), paused + 10);
}

#[test]
fn pfc_stops_only_the_sources_of_the_paused_priority() {
    let mut sim = pause_lab();
    let mut low = burst("prio3", "h1", "h2", 1500, 0);
    low.priority = 3;
    sim.add_source(low).expect("priority-3 source");
    let t = 20_000;
    sim.add_source(feedback_frame("pfc", MAKE_PFC, 1000, t))
        .expect("trigger");
    // The PFC frame is 76 bytes: (76 + 24) × 8 / 10 = 80 ns on the last hop.
    let arrive = t + 86 + 500 + 1_000 + 80 + 500;
    run(&mut sim, arrive);
    assert_eq!(sim.hosts[0].counters.pause_frames, 1);
    let (data, prio3) = (sent(&sim, 0), sent(&sim, 1));
    run(&mut sim, arrive + 51_200 - 1);
    assert_eq!(sent(&sim, 1), prio3, "priority 3 sent while paused");
    // Priority 0 has the link to itself: 42 frames of 1,219.2 ns in 51,199 ns.
    assert_eq!(sent(&sim, 0) - data, 42);
    run(&mut sim, arrive + 51_200 + 1_220);
    assert_eq!(sent(&sim, 1), prio3 + 1);
}

// ---------------------------------------------------------------------------------------
// BCN reaction point.

#[test]
fn one_bcn_step_sets_the_regulated_rate_and_frames_leave_at_it() {
    let mut sim = Simulator::new(1);
    sim.add_switch("s1", engine(MAKER_JSON, 1), 1_000)
        .expect("switch");
    add_hosts(&mut sim, 3);
    star(&mut sim, "s1", 3, link(500, 0));
    let mut data = burst("data", "h1", "h2", 1500, 0);
    data.reaction = ReactionSpec::Bcn(RpConfig::seed_003(0.0, 1e6));
    data.response_ns = 2_000;
    sim.add_source(data).expect("data source");
    let t = 50_000;
    // Fb = −1,000 pages, sent as the UDP port 65,536 − 1,000.
    sim.add_source(feedback_frame("bcn", MAKE_BCN, (-1000i16) as u16, t))
        .expect("trigger");
    // Bare frames: (84) × 8 / 10 = 67.2 → 67 ns, the 80-byte BCN 64 ns.
    let acted = t + 67 + 500 + 1_000 + 64 + 500 + 2_000;
    run(&mut sim, acted - 1);
    assert_eq!(sim.hosts[0].counters.bcn_frames, 1);
    assert_eq!(sim.sources[0].rlq.rate_bps(), None);
    assert_eq!(sim.sources[0].tag, None);
    run(&mut sim, acted);
    let s = &sim.sources[0];
    // R ← R·(1 − Gd·|Fb|) = 10 Gbit/s × (1 − 2.6e-4 × 1,000) = 7.4 Gbit/s, tagged RLT(CP).
    assert_eq!(s.rlq.rate_bps(), Some(7_400_000_000));
    assert_eq!(s.regulated_rate_bps(TEN_GBIT), 7.4e9);
    assert_eq!(s.tag, Some(MAKER_CPID));
    assert_eq!(
        (s.counters.feedback_frames, s.counters.feedback_applied),
        (1, 1)
    );
    // Paced at 7.4 Gbit/s: 12,000 bits every 1,621.6 ns, 740 frames in 1.2 ms (at line
    // rate it would be 1,000).
    let t0 = acted + 100_000;
    run(&mut sim, t0);
    let before = sent(&sim, 0);
    run(&mut sim, t0 + 1_200_000);
    assert_eq!(sent(&sim, 0) - before, 740);
}

// ---------------------------------------------------------------------------------------
// PAUSE and a BCN(0,0) back-off: two holds, the source sends only when neither holds it.

/// The longest PAUSE: 65,535 quanta at 10 Gbit/s.
const LONGEST_PAUSE_NS: u64 = 3_355_392;
/// The rate a source restarts at after a BCN(0,0) back-off in these tests: 1 Gbit/s, so a
/// 1,500-byte frame and its 24 bytes of overhead take 12,192 ns.
const RESTART_BPS: f64 = 1e9;

/// pause_lab's data source with a reaction point whose BCN(0,0) stops it for up to
/// `backoff_max_ns`, then restarts it at `RESTART_BPS`; no response delay.
fn backoff_lab(backoff_max_ns: u64) -> Simulator {
    let mut sim = Simulator::new(1);
    sim.add_switch("s1", engine(MAKER_JSON, 1), 1_000)
        .expect("switch");
    add_hosts(&mut sim, 3);
    star(&mut sim, "s1", 3, link(500, 24));
    let mut data = burst("data", "h1", "h2", 1500, 0);
    let mut rp = RpConfig::seed_003(0.0, 1e6);
    rp.features = RpFeatures {
        severe: Severe::Stop {
            backoff_max_ns,
            restart_rate_bps: RESTART_BPS,
        },
        ..RpFeatures::OFF
    };
    data.reaction = ReactionSpec::Bcn(rp);
    sim.add_source(data).expect("data source");
    sim
}

/// Runs until the data source's reaction point has taken the BCN(0,0) triggered at
/// `at_ns`; returns when its back-off ends.
fn back_off_taken(sim: &mut Simulator, at_ns: u64) -> u64 {
    // The BCN frame reaches h1 within 3 µs of its trigger.
    run(sim, at_ns + 3_000);
    let s = &sim.sources[0];
    assert_eq!(s.counters.feedback_applied, 1, "the BCN(0,0) was not taken");
    assert_eq!(s.rlq.rate_bps(), Some(RESTART_BPS as u64));
    s.rlq.held_until_ns()
}

#[test]
fn an_xon_ends_the_pause_but_not_a_bcn_0_0_back_off() {
    let mut sim = backoff_lab(2_000_000);
    let (t_pause, t_bcn, t_xon) = (20_000, 40_000, 60_000);
    for trigger in [
        feedback_frame("pause", MAKE_PAUSE, 65_535, t_pause),
        feedback_frame("bcn00", MAKE_BCN_0_0, 0, t_bcn),
        feedback_frame("xon", MAKE_PAUSE, 0, t_xon),
    ] {
        sim.add_source(trigger).expect("trigger");
    }
    let resume = back_off_taken(&mut sim, t_bcn);
    let xon_arrives = t_xon + PAUSE_TRAVEL_NS;
    // Seed 1 draws a back-off that outlasts the XON by far (up to 2 ms).
    assert!(
        resume > xon_arrives + 100_000,
        "back-off ends at {resume} ns"
    );
    let paused = sent(&sim, 0);
    assert_eq!(paused, 19);
    run(&mut sim, xon_arrives);
    assert_eq!(sim.hosts[0].counters.xon_frames, 1);
    let nic = sim.hosts[0].nic.as_ref().expect("linked");
    assert!(
        !nic.pause.is_paused(xon_arrives),
        "the XON did not end the PAUSE"
    );
    // The PAUSE is over, the back-off is not: nothing leaves until it ends.
    run(&mut sim, resume - 1);
    assert_eq!(
        sent(&sim, 0),
        paused,
        "the XON restarted a backed-off source"
    );
    run(&mut sim, resume);
    assert_eq!(sent(&sim, 0), paused + 1);
    // Then at the restart rate: one frame per 12,192 ns.
    run(&mut sim, resume + 10 * 12_192 - 1);
    assert_eq!(sent(&sim, 0), paused + 10);
}

#[test]
fn a_bcn_0_0_back_off_that_ends_during_a_pause_does_not_restart_the_source() {
    let mut sim = backoff_lab(100_000);
    let (t_pause, t_bcn) = (20_000, 40_000);
    sim.add_source(feedback_frame("pause", MAKE_PAUSE, 65_535, t_pause))
        .expect("trigger");
    sim.add_source(feedback_frame("bcn00", MAKE_BCN_0_0, 0, t_bcn))
        .expect("trigger");
    let pause_ends = t_pause + PAUSE_TRAVEL_NS + LONGEST_PAUSE_NS;
    assert_eq!(pause_duration_ns(65_535, TEN_GBIT), LONGEST_PAUSE_NS);
    let resume = back_off_taken(&mut sim, t_bcn);
    assert!(resume < pause_ends, "back-off ends at {resume} ns");
    let paused = sent(&sim, 0);
    assert_eq!(paused, 19);
    // The back-off is over, the PAUSE is not: nothing leaves until the PAUSE ends.
    run(&mut sim, pause_ends - 1);
    assert_eq!(
        sent(&sim, 0),
        paused,
        "the back-off's end restarted a paused source"
    );
    run(&mut sim, pause_ends);
    assert_eq!(sent(&sim, 0), paused + 1);
    run(&mut sim, pause_ends + 10 * 12_192 - 1);
    assert_eq!(sent(&sim, 0), paused + 10);
}

// ---------------------------------------------------------------------------------------
// A full rate-limiter queue.

/// h1 offers 1500-byte frames at 10 Gbit/s for 1 ms into a 1 Gbit/s link towards h2
/// with an RLQ of ten frames; returns the simulator at 1 ms and its counters once
/// every accepted frame has arrived.
fn overloaded(when_full: WhenFull) -> (Simulator, bufferlab_sim::host::SourceCounters) {
    let mut sim = Simulator::new(1);
    sim.add_switch("s1", forward_switch(2, 1), 0)
        .expect("switch");
    add_hosts(&mut sim, 2);
    let slow = LinkModel {
        rate_bps: 1_000_000_000,
        ..link(0, 24)
    };
    star(&mut sim, "s1", 2, slow);
    let mut s = source(
        "fast",
        "h1",
        "h2",
        Pattern::Constant { rate_bps: TEN_GBIT },
        1500,
    );
    s.spec.stop_ns = Some(1_000_000);
    s.rlq_bytes = 15_000;
    s.when_full = when_full;
    sim.add_source(s).expect("source");
    run(&mut sim, 1_000_000);
    let at_1ms = sim.sources[0].counters;
    run(&mut sim, 3_000_000);
    (sim, at_1ms)
}

#[test]
fn a_full_rlq_drops_when_told_to_drop() {
    let (sim, c) = overloaded(WhenFull::Drop);
    // Offers every 1,219.2 ns: 821 frames start before 1 ms; the 1 Gbit/s link sends
    // one every 12,192 ns: 83; ten more wait in the queue; the rest were dropped.
    assert_eq!(c.offered_frames, 821);
    assert_eq!(c.sent_frames, 83);
    assert_eq!(c.accepted_frames, 83 + 10);
    assert_eq!(c.dropped_frames, 821 - 93);
    assert_eq!(c.held, 0);
    // Every accepted frame arrives; the receiver sees dropped ones as sequence gaps.
    let f = flow(&sim, 1, 0);
    assert_eq!(f.frames, 93);
    assert!(f.gaps > 0 && f.gaps <= 821 - 93, "{}", f.gaps);
}

#[test]
fn back_pressure_holds_the_source_and_never_drops() {
    let (sim, c) = overloaded(WhenFull::BackPressure);
    assert_eq!(c.dropped_frames, 0);
    assert_eq!(c.sent_frames, 83);
    assert!(c.held > 0);
    // The source offers only what the queue takes, plus the one frame it waits with.
    assert_eq!(c.accepted_frames, 83 + 10);
    assert_eq!(c.offered_frames, c.accepted_frames + 1);
    let f = flow(&sim, 1, 0);
    assert_eq!(sim.sources[0].counters.dropped_frames, 0);
    assert_eq!(f.frames, sim.sources[0].counters.accepted_frames);
    assert_eq!(f.gaps, 0);
}

// ---------------------------------------------------------------------------------------
// Determinism.

/// Everything a run counted, as numbers.
fn fingerprint(seed: u64) -> Vec<u64> {
    let mut sim = Simulator::new(seed);
    sim.add_switch("s1", forward_switch(3, seed), 1_000)
        .expect("switch");
    add_hosts(&mut sim, 3);
    star(&mut sim, "s1", 3, link(500, 24));
    for (name, host) in [("a", "h1"), ("b", "h2")] {
        let s = source(
            name,
            host,
            "h3",
            Pattern::Bernoulli {
                load: 0.6,
                line_rate_bps: TEN_GBIT,
            },
            1500,
        );
        sim.add_source(s).expect("source");
    }
    run(&mut sim, 2_000_000);
    let mut out = Vec::new();
    for s in &sim.sources {
        let c = s.counters;
        out.extend([c.offered_frames, c.sent_frames, c.dropped_frames]);
    }
    for h in &sim.hosts {
        for f in &h.flows {
            out.extend([f.frames, f.bytes, f.last_rx_ns, f.latency_max_ns]);
        }
    }
    for l in &sim.links {
        out.extend(l.frames);
    }
    out.push(sim.events_run);
    out
}

#[test]
fn the_same_seed_gives_the_same_run_and_another_seed_another() {
    let first = fingerprint(7);
    assert_eq!(first, fingerprint(7));
    assert_ne!(first, fingerprint(8));
    // The two sources offered about 60 % of 1,640 slots each in 2 ms.
    assert!((900..1_100).contains(&first[0]), "{}", first[0]);
}
