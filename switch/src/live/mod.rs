//! The live switch: one packet thread moves frames between Linux interfaces (the ports
//! crate) and the engine, on the wall clock.
//!
//! The engine is clock-free and thread-free; here its time is CLOCK_MONOTONIC minus an
//! origin taken at start (so `now` is ns since the switch started, continuing from whatever
//! time the engine had reached). The packet thread loops: wait on the port set until the
//! engine's next event or a frame arrives; hand every received frame to the engine stamped
//! with its kernel receive time; `advance` to now; transmit every frame whose arrival time
//! has come, on its port (and write the pcaps); sleep again.
//!
//! The engine is shared with the control plane (P4Runtime, runtime CLI, Python API) through
//! `Arc<Mutex<Engine>>`. The packet thread never touches Python: packet-ins and digests go
//! into [`Events`], which a control thread drains with [`LiveSwitch::wait_events`].

pub mod py;

use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use bufferlab_ports::{
    clock, ClockOffset, LivePort, PortConfig, PortCounters, PortError, PortSet, RxBatch, Waker,
};

use crate::engine::{Digest, Engine, Output};

/// Highest switch port number plus one (v1model ports are 9 bits).
const NUM_PORTS: usize = 512;
/// The kernel/monotonic clock offset is measured again this often (NTP moves it), ns.
const REMEASURE_OFFSET_NS: u64 = 1_000_000_000;
/// Longest the packet thread sleeps with nothing to do, ns: it then re-measures the clock
/// offset and polls the ports' kernel drop counters.
const IDLE_WAIT_NS: u64 = 1_000_000_000;

/// Locks the engine; a panic on another thread that held it leaves the engine as the
/// panicking call left it, which is still the best state there is, so keep going.
pub fn lock(engine: &Mutex<Engine>) -> MutexGuard<'_, Engine> {
    engine
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What the data plane produced for the control plane since the last drain.
#[derive(Default)]
pub struct Events {
    /// Frames that left egress on the CPU port.
    pub packet_in: VecDeque<Output>,
    /// Digest messages.
    pub digests: VecDeque<Digest>,
    /// The switch stopped: no more events will come.
    pub closed: bool,
}

/// Counters of the live wrapper (the engine and the ports keep their own).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveStats {
    /// Frames received on the ports and handed to the engine.
    pub rx_frames: u64,
    /// Frames the engine refused (never expected: times are clamped to the engine's).
    pub rx_refused: u64,
    /// Frames injected by the control plane (PacketOut).
    pub injected: u64,
    /// Frames handed to a port for transmission.
    pub tx_frames: u64,
    /// Frames for a port number that has no interface: dropped, as BMv2 does.
    pub tx_no_interface: u64,
    /// Frames still waiting for room in a port's send buffer.
    pub tx_waiting: u64,
    /// Times a frame's kernel timestamp was earlier than the engine's time (the engine had
    /// already advanced past it): the frame entered at the engine's time instead.
    pub rx_late: u64,
}

#[derive(Default)]
struct AtomicStats {
    rx_frames: AtomicU64,
    rx_refused: AtomicU64,
    injected: AtomicU64,
    tx_frames: AtomicU64,
    tx_no_interface: AtomicU64,
    tx_waiting: AtomicU64,
    rx_late: AtomicU64,
}

impl AtomicStats {
    fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    fn snapshot(&self) -> LiveStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        LiveStats {
            rx_frames: get(&self.rx_frames),
            rx_refused: get(&self.rx_refused),
            injected: get(&self.injected),
            tx_frames: get(&self.tx_frames),
            tx_no_interface: get(&self.tx_no_interface),
            tx_waiting: get(&self.tx_waiting),
            rx_late: get(&self.rx_late),
        }
    }
}

/// State shared by the packet thread and the control side.
struct Shared {
    stop: AtomicBool,
    events: Mutex<Events>,
    events_ready: Condvar,
    stats: AtomicStats,
    /// Port counters as last published by the packet thread, by switch port number.
    ports: Mutex<Vec<(u32, String, PortCounters)>>,
    /// Why the packet thread stopped on its own, if it did.
    failure: Mutex<Option<String>>,
}

/// The engine's clock on the wall: engine time = CLOCK_MONOTONIC − origin.
#[derive(Clone, Copy, Debug)]
pub struct LiveClock {
    origin_mono_ns: u64,
}

impl LiveClock {
    /// A clock that reads `engine_now_ns` at this instant.
    pub fn continuing_from(engine_now_ns: u64) -> Self {
        LiveClock {
            origin_mono_ns: clock::monotonic_ns().saturating_sub(engine_now_ns),
        }
    }

    /// The engine's time now, ns.
    pub fn now_ns(&self) -> u64 {
        clock::monotonic_ns().saturating_sub(self.origin_mono_ns)
    }

    /// The engine time of a kernel (CLOCK_REALTIME) timestamp.
    pub fn from_kernel(&self, offset: &ClockOffset, realtime_ns: u64) -> u64 {
        offset
            .to_monotonic(realtime_ns)
            .saturating_sub(self.origin_mono_ns)
    }

    /// The CLOCK_REALTIME instant of an engine time (pcap timestamps).
    pub fn to_realtime(&self, offset: &ClockOffset, engine_ns: u64) -> u64 {
        offset.to_realtime(engine_ns + self.origin_mono_ns)
    }
}

/// The packet thread, or its state until it starts.
#[derive(Default)]
struct Runner {
    thread: Option<JoinHandle<()>>,
    idle: Option<PacketLoop>,
}

/// The live switch: ports opened, a packet thread once started. Every method takes `&self`,
/// so control threads may share it.
pub struct LiveSwitch {
    engine: Arc<Mutex<Engine>>,
    shared: Arc<Shared>,
    clock: LiveClock,
    waker: Waker,
    runner: Mutex<Runner>,
}

impl LiveSwitch {
    /// Opens every `(port number, interface)` in the calling thread's network namespace,
    /// with captures in `pcap_dir` when given. Nothing runs until [`LiveSwitch::start`].
    pub fn open(
        engine: Arc<Mutex<Engine>>,
        interfaces: &[(u16, String)],
        pcap_dir: Option<&Path>,
    ) -> Result<Self, String> {
        let mut set = PortSet::new().map_err(|e| e.to_string())?;
        let mut captures: Vec<Option<bufferlab_ports::PortCapture>> = Vec::new();
        captures.resize_with(NUM_PORTS, || None);
        for (port, iface) in interfaces {
            if usize::from(*port) >= NUM_PORTS {
                return Err(format!("port {port} ({iface}): ports are 0..=511"));
            }
            let live = LivePort::open(iface, &PortConfig::default()).map_err(|e| e.to_string())?;
            set.add(u32::from(*port), live).map_err(|e| e.to_string())?;
            if let Some(dir) = pcap_dir {
                let capture = bufferlab_ports::PortCapture::create(dir, iface)
                    .map_err(|e| format!("pcap for {iface} in {}: {e}", dir.display()))?;
                captures[usize::from(*port)] = Some(capture);
            }
        }
        let clock = LiveClock::continuing_from(lock(&engine).now());
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            events: Mutex::new(Events::default()),
            events_ready: Condvar::new(),
            stats: AtomicStats::default(),
            ports: Mutex::new(Vec::new()),
            failure: Mutex::new(None),
        });
        let waker = set.waker();
        let batch = set.new_batch();
        let port_batches = interfaces.iter().map(|_| set.new_batch()).collect();
        let mut pending = Vec::new();
        pending.resize_with(NUM_PORTS, VecDeque::new);
        let idle = PacketLoop {
            engine: Arc::clone(&engine),
            shared: Arc::clone(&shared),
            clock,
            offset: ClockOffset::measure(),
            offset_measured_ns: clock::monotonic_ns(),
            set,
            batch,
            captures,
            pending,
            spent: Vec::new(),
            numbers: interfaces.iter().map(|(p, _)| u32::from(*p)).collect(),
            writable: Vec::with_capacity(interfaces.len()),
            port_batches,
            cursors: vec![0; interfaces.len()],
            delivered: Vec::new(),
        };
        idle.publish_ports();
        Ok(LiveSwitch {
            engine,
            shared,
            clock,
            waker,
            runner: Mutex::new(Runner {
                thread: None,
                idle: Some(idle),
            }),
        })
    }

    /// Starts the packet thread (once).
    pub fn start(&self) -> Result<(), String> {
        let mut runner = self.runner.lock().unwrap_or_else(|p| p.into_inner());
        let Some(mut packet_loop) = runner.idle.take() else {
            return Err("the live switch was already started".into());
        };
        let shared = Arc::clone(&self.shared);
        let thread = std::thread::Builder::new()
            .name("packets".into())
            .spawn(move || {
                if let Err(e) = packet_loop.run() {
                    *shared.failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                }
                packet_loop.finish();
            })
            .map_err(|e| format!("cannot start the packet thread: {e}"))?;
        runner.thread = Some(thread);
        Ok(())
    }

    /// The shared engine.
    pub fn engine(&self) -> &Arc<Mutex<Engine>> {
        &self.engine
    }

    /// The engine's time now (ns since the switch started).
    pub fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    /// Receives `frame` on `port` now, as if it came from a wire (PacketOut on the CPU port).
    pub fn inject(&self, port: u16, frame: &[u8]) -> Result<(), crate::error::RuntimeError> {
        {
            let mut engine = lock(&self.engine);
            let t = self.clock.now_ns().max(engine.now());
            engine.send(port, frame, t)?;
        }
        AtomicStats::add(&self.shared.stats.injected, 1);
        self.waker.wake();
        Ok(())
    }

    /// Waits up to `timeout` for packet-ins or digests, then takes them all; the flag says
    /// the switch has stopped (no more will come).
    pub fn wait_events(&self, timeout: Duration) -> (Vec<Output>, Vec<Digest>, bool) {
        let mut events = self.shared.events.lock().unwrap_or_else(|p| p.into_inner());
        if events.packet_in.is_empty() && events.digests.is_empty() && !events.closed {
            events = self
                .shared
                .events_ready
                .wait_timeout(events, timeout)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        (
            events.packet_in.drain(..).collect(),
            events.digests.drain(..).collect(),
            events.closed,
        )
    }

    /// Counters of the live wrapper.
    pub fn stats(&self) -> LiveStats {
        self.shared.stats.snapshot()
    }

    /// Every port's number, interface and counters (as of the packet thread's last look).
    pub fn port_counters(&self) -> Vec<(u32, String, PortCounters)> {
        self.shared
            .ports
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Why the packet thread stopped on its own (a port failed), if it did.
    pub fn failure(&self) -> Option<String> {
        self.shared
            .failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Whether the packet thread is running.
    pub fn running(&self) -> bool {
        let runner = self.runner.lock().unwrap_or_else(|p| p.into_inner());
        runner.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Stops the packet thread: frames already due are sent, pcaps flushed, ports closed.
    pub fn stop(&self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.waker.wake();
        let (thread, idle) = {
            let mut runner = self.runner.lock().unwrap_or_else(|p| p.into_inner());
            (runner.thread.take(), runner.idle.take())
        };
        if let Some(thread) = thread {
            // The loop catches its own errors; a panic has already been reported on stderr.
            let _ = thread.join();
        }
        if let Some(idle) = idle {
            idle.finish();
        }
        let mut events = self.shared.events.lock().unwrap_or_else(|p| p.into_inner());
        events.closed = true;
        self.shared.events_ready.notify_all();
    }
}

impl Drop for LiveSwitch {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The packet thread's state.
struct PacketLoop {
    engine: Arc<Mutex<Engine>>,
    shared: Arc<Shared>,
    clock: LiveClock,
    offset: ClockOffset,
    offset_measured_ns: u64,
    set: PortSet,
    batch: RxBatch,
    /// Captures by switch port number.
    captures: Vec<Option<bufferlab_ports::PortCapture>>,
    /// Frames due on each port that its send buffer has not taken yet, by port number.
    pending: Vec<VecDeque<Output>>,
    /// Buffers of sent frames, given back to the engine at the next lock.
    spent: Vec<Vec<u8>>,
    /// Switch port numbers of the set, in the order they were added.
    numbers: Vec<u32>,
    /// Ports found writable by the last wait.
    writable: Vec<u32>,
    /// One received batch per port (same order as `numbers`), merged in time order.
    port_batches: Vec<RxBatch>,
    /// Next frame to hand over in each port's batch.
    cursors: Vec<usize>,
    /// Frames the engine delivered in this pass, not yet queued on their ports.
    delivered: Vec<Output>,
}

impl PacketLoop {
    fn run(&mut self) -> Result<(), String> {
        while !self.shared.stop.load(Ordering::SeqCst) {
            self.pass()?;
        }
        // Stopping: what is already due still goes out.
        self.advance(self.clock.now_ns());
        self.queue_delivered();
        self.writable.clear();
        self.transmit_all()
    }

    /// One pass of the loop: wait, receive, advance, transmit. Allocates nothing once the
    /// buffers it reuses have grown to the traffic's size.
    fn pass(&mut self) -> Result<(), String> {
        let timeout = self.timeout_ns();
        let outcome = self.set.wait(Some(timeout)).map_err(|e| e.to_string())?;
        let received_until = self.receive()?;
        self.advance(received_until);
        self.queue_delivered();
        self.writable.clear();
        if outcome.writable_ports > 0 {
            self.writable.extend_from_slice(self.set.writable());
        }
        self.transmit_all()?;
        self.housekeeping()
    }

    /// Moves the frames `advance` collected into their ports' transmit queues.
    fn queue_delivered(&mut self) {
        // Taken out and put back so `queue` can borrow self; the buffer keeps its capacity.
        let mut delivered = std::mem::take(&mut self.delivered);
        for o in delivered.drain(..) {
            self.queue(o);
        }
        self.delivered = delivered;
    }

    /// How long to sleep: until the engine's next event (or a while when idle).
    fn timeout_ns(&self) -> u64 {
        let next = lock(&self.engine).next_event_ns();
        let now = self.clock.now_ns();
        match next {
            Some(t) => t.saturating_sub(now).min(IDLE_WAIT_NS),
            None => IDLE_WAIT_NS,
        }
    }

    /// Hands every received frame to the engine, all ports' frames merged in time order
    /// under one lock. Returns the engine time up to which every frame has been received
    /// (so advancing further cannot make a frame still in a socket late): the time the
    /// sockets were read, or earlier when a full batch may have left frames behind.
    fn receive(&mut self) -> Result<u64, String> {
        let mut received_until = self.clock.now_ns();
        let mut any = false;
        for cursor in &mut self.cursors {
            *cursor = usize::MAX;
        }
        while let Some(port) = self
            .set
            .recv_next(&mut self.batch)
            .map_err(|e| e.to_string())?
        {
            let Some(i) = self.numbers.iter().position(|&n| n == port) else {
                continue;
            };
            // Swapping moves buffers, not frames: nothing is allocated.
            std::mem::swap(&mut self.batch, &mut self.port_batches[i]);
            self.cursors[i] = 0;
            any = true;
            let batch = &self.port_batches[i];
            if batch.len() == batch.capacity() {
                if let Some(last) = batch.get(batch.len() - 1).and_then(|f| f.kernel_ns) {
                    received_until = received_until.min(self.clock.from_kernel(&self.offset, last));
                }
            }
        }
        if !any {
            return Ok(received_until);
        }
        let mut engine = lock(&self.engine);
        for spent in self.spent.drain(..) {
            engine.recycle(spent);
        }
        let now = self.clock.now_ns();
        let (mut count, mut late, mut refused) = (0u64, 0u64, 0u64);
        loop {
            // The port whose next frame arrived first.
            let mut next: Option<(usize, u64)> = None;
            for (i, batch) in self.port_batches.iter().enumerate() {
                let Some(frame) = batch.get(self.cursors[i]) else {
                    continue;
                };
                let stamped = frame
                    .kernel_ns
                    .map_or(now, |k| self.clock.from_kernel(&self.offset, k));
                if next.is_none_or(|(_, t)| stamped < t) {
                    next = Some((i, stamped));
                }
            }
            let Some((i, stamped)) = next else { break };
            let port = self.numbers[i];
            let Some(frame) = self.port_batches[i].get(self.cursors[i]) else {
                break;
            };
            self.cursors[i] += 1;
            count += 1;
            let t = if stamped < engine.now() {
                late += 1;
                engine.now()
            } else {
                stamped
            };
            if let Some(capture) = self.captures[port as usize].as_mut() {
                let real = frame
                    .kernel_ns
                    .unwrap_or_else(|| self.clock.to_realtime(&self.offset, t));
                capture
                    .input
                    .write_frame(real, frame.bytes)
                    .map_err(|e| format!("pcap: {e}"))?;
            }
            // The port number fits (ports are added as u16), so only an engine refusal
            // can fail here; it is counted, the frame is lost as on a wire.
            if engine.send(port as u16, frame.bytes, t).is_err() {
                refused += 1;
            }
        }
        let stats = &self.shared.stats;
        AtomicStats::add(&stats.rx_frames, count);
        AtomicStats::add(&stats.rx_late, late);
        AtomicStats::add(&stats.rx_refused, refused);
        Ok(received_until)
    }

    /// Advances the engine to `until` (engine time); collects delivered frames (into
    /// `self.delivered`), packet-ins and digests.
    fn advance(&mut self, until: u64) {
        let (packet_in, digests) = {
            let mut engine = lock(&self.engine);
            for spent in self.spent.drain(..) {
                engine.recycle(spent);
            }
            let until = until.max(engine.now());
            engine.advance(until);
            engine.drain_received_into(&mut self.delivered);
            (engine.take_packet_in(), engine.take_digests())
        };
        if packet_in.is_empty() && digests.is_empty() {
            return;
        }
        let mut events = self.shared.events.lock().unwrap_or_else(|p| p.into_inner());
        events.packet_in.extend(packet_in);
        events.digests.extend(digests);
        self.shared.events_ready.notify_all();
    }

    /// Puts a delivered frame in its port's transmit queue (or drops it: no interface).
    fn queue(&mut self, o: Output) {
        let port = usize::from(o.port);
        if port < NUM_PORTS && self.set.port(u32::from(o.port)).is_some() {
            self.pending[port].push_back(o);
        } else {
            AtomicStats::add(&self.shared.stats.tx_no_interface, 1);
            self.spent.push(o.frame);
        }
    }

    /// Offers every port's due frames to its socket, in arrival order.
    fn transmit_all(&mut self) -> Result<(), String> {
        let mut waiting = 0;
        for &port in &self.numbers {
            let queue = &mut self.pending[port as usize];
            if queue.is_empty() {
                if self.writable.contains(&port) {
                    self.set.set_tx_pending(port, false);
                }
                continue;
            }
            let Some(live) = self.set.port_mut(port) else {
                continue;
            };
            let sent = live
                .send(queue.iter().map(|o| o.frame.as_slice()))
                .map_err(|e| e.to_string())?;
            let capture = self.captures[port as usize].as_mut();
            let real_now = self.clock.to_realtime(&self.offset, self.clock.now_ns());
            if let Some(capture) = capture {
                for o in queue.iter().take(sent) {
                    capture
                        .output
                        .write_frame(real_now, &o.frame)
                        .map_err(|e| format!("pcap: {e}"))?;
                }
            }
            for o in queue.drain(..sent) {
                self.spent.push(o.frame);
            }
            AtomicStats::add(&self.shared.stats.tx_frames, sent as u64);
            let left = queue.len();
            waiting += left as u64;
            self.set.set_tx_pending(port, left > 0);
        }
        self.shared
            .stats
            .tx_waiting
            .store(waiting, Ordering::Relaxed);
        Ok(())
    }

    /// Re-measures the clock offset and publishes port counters now and then.
    fn housekeeping(&mut self) -> Result<(), String> {
        let mono = clock::monotonic_ns();
        if mono.saturating_sub(self.offset_measured_ns) < REMEASURE_OFFSET_NS {
            return Ok(());
        }
        self.offset = ClockOffset::measure();
        self.offset_measured_ns = mono;
        self.publish_ports_polled().map_err(|e| e.to_string())
    }

    fn publish_ports_polled(&mut self) -> Result<(), PortError> {
        for &port in &self.numbers {
            if let Some(live) = self.set.port_mut(port) {
                live.poll_kernel_drops()?;
            }
        }
        self.publish_ports();
        Ok(())
    }

    fn publish_ports(&self) {
        let counters = self
            .set
            .ports()
            .map(|(p, live)| (p, live.iface().to_string(), live.counters()))
            .collect();
        *self.shared.ports.lock().unwrap_or_else(|p| p.into_inner()) = counters;
    }

    /// Flushes captures and publishes the final counters; the ports close when dropped.
    fn finish(mut self) {
        // Best effort: kernel drops can only be read while the sockets are open.
        let _ = self.publish_ports_polled();
        for capture in self.captures.iter_mut().flatten() {
            if let Err(e) = capture.flush() {
                eprintln!("bufferlab-switch: pcap: {e}");
            }
        }
        let mut events = self.shared.events.lock().unwrap_or_else(|p| p.into_inner());
        events.closed = true;
        self.shared.events_ready.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::MatchValue;
    use bufferlab_tm::TmConfig;

    const L3: &str = include_str!("../../../tests/engine/fixtures/l3.json");

    fn ipv4_frame(dst: [u8; 4]) -> Vec<u8> {
        let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00];
        let mut ip = vec![0x45, 0, 0, 20, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1];
        ip.extend_from_slice(&dst);
        let c = crate::hash::csum16(&ip) as u16;
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        f.extend_from_slice(&ip);
        f
    }

    fn assert_shareable<T: Send + Sync>() {}

    #[test]
    fn the_live_switch_can_be_shared_between_threads() {
        assert_shareable::<LiveSwitch>();
    }

    /// No interfaces (no root needed): the packet thread still runs the engine on the wall
    /// clock, turns CPU-port frames into events and counts frames for absent interfaces.
    #[test]
    fn injected_frames_become_packet_ins_or_are_dropped_without_an_interface() {
        let mut engine = Engine::new(L3, TmConfig::default(), 1).unwrap();
        for (net, port) in [(0x0a00_0200, 3), (0x0a00_0300, 4)] {
            engine
                .table_add(
                    "MyIngress.ipv4_lpm",
                    vec![MatchValue::Lpm(net, 24)],
                    "MyIngress.ipv4_forward",
                    vec![0xabc, port],
                    0,
                )
                .unwrap();
        }
        engine.cpu_port = Some(3);
        let engine = Arc::new(Mutex::new(engine));
        let live = LiveSwitch::open(Arc::clone(&engine), &[], None).unwrap();
        live.start().unwrap();
        assert!(live.start().is_err(), "a second start is refused");
        live.inject(1, &ipv4_frame([10, 0, 2, 7])).unwrap();
        live.inject(1, &ipv4_frame([10, 0, 3, 7])).unwrap();
        // Bounded waits so a broken loop fails the test instead of hanging it.
        let (packet_in, digests, closed) = live.wait_events(Duration::from_secs(10));
        assert_eq!(packet_in.len(), 1);
        assert_eq!(packet_in[0].port, 3);
        assert_eq!(packet_in[0].frame[22], 63, "routed: TTL decremented");
        assert!(digests.is_empty() && !closed);
        for _ in 0..1000 {
            if live.stats().tx_no_interface == 1 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        live.stop();
        let stats = live.stats();
        assert_eq!((stats.injected, stats.tx_no_interface), (2, 1));
        assert!(!live.running());
        assert!(
            live.wait_events(Duration::ZERO).2,
            "stopped: events are closed"
        );
        assert_eq!(lock(&engine).stats.received, 2);
    }

    thread_local! {
        static ALLOCATIONS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    /// The system allocator, counting allocations made by the current thread (per thread,
    /// so tests running in parallel do not disturb each other's counts).
    struct Counting;

    unsafe impl std::alloc::GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
            ALLOCATIONS.with(|n| n.set(n.get() + 1));
            unsafe { std::alloc::System.alloc(layout) }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
            unsafe { std::alloc::System.dealloc(ptr, layout) }
        }

        unsafe fn realloc(
            &self,
            ptr: *mut u8,
            layout: std::alloc::Layout,
            new_size: usize,
        ) -> *mut u8 {
            ALLOCATIONS.with(|n| n.set(n.get() + 1));
            unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
        }
    }

    #[global_allocator]
    static GLOBAL: Counting = Counting;

    /// Once warm, the packet loop's passes (advance, collect the delivered frames, queue
    /// them, give their buffers back) allocate nothing, whatever the traffic.
    #[test]
    fn a_warm_packet_loop_pass_allocates_nothing() {
        let mut engine = Engine::new(L3, TmConfig::default(), 1).unwrap();
        engine
            .table_add(
                "MyIngress.ipv4_lpm",
                vec![MatchValue::Lpm(0x0a00_0200, 24)],
                "MyIngress.ipv4_forward",
                vec![0xabc, 2],
                0,
            )
            .unwrap();
        let engine = Arc::new(Mutex::new(engine));
        let live = LiveSwitch::open(Arc::clone(&engine), &[], None).unwrap();
        let mut packet_loop = live
            .runner
            .lock()
            .unwrap()
            .idle
            .take()
            .expect("not started");
        // Housekeeping publishes the port counters once a second, which allocates; it is
        // not part of a packet pass, so keep it out of the count.
        packet_loop.offset_measured_ns = u64::MAX;
        let frame = ipv4_frame([10, 0, 2, 7]);
        let (mut loop_allocations, mut passes) = (0u64, 0u64);
        for round in 0..200u64 {
            {
                let mut engine = lock(&engine);
                let t = live.now_ns().max(engine.now());
                // Bursts of varying size, so the buffers meet their largest early.
                for _ in 0..1 + round % 16 {
                    engine.send(1, &frame, t).unwrap();
                }
            }
            while lock(&engine).next_event_ns().is_some() {
                let before = ALLOCATIONS.with(|n| n.get());
                packet_loop.pass().unwrap();
                if round >= 50 {
                    loop_allocations += ALLOCATIONS.with(|n| n.get()) - before;
                    passes += 1;
                }
            }
        }
        assert!(passes >= 150, "the counted rounds ran passes ({passes})");
        assert_eq!(loop_allocations, 0, "allocations in {passes} warm passes");
        let sent: u64 = (0..200u64).map(|r| 1 + r % 16).sum();
        assert_eq!(live.stats().tx_no_interface, sent);
    }

    #[test]
    fn a_missing_interface_is_named() {
        let engine = Arc::new(Mutex::new(Engine::new(L3, TmConfig::default(), 1).unwrap()));
        let err = match LiveSwitch::open(engine, &[(1, "blsw-nosuch0".to_string())], None) {
            Ok(_) => panic!("opened a missing interface"),
            Err(e) => e,
        };
        assert!(err.contains("blsw-nosuch0"), "{err}");
    }

    #[test]
    fn the_live_clock_continues_from_the_engine_time() {
        let clock = LiveClock::continuing_from(5_000_000_000);
        let now = clock.now_ns();
        assert!(now >= 5_000_000_000);
        let offset = ClockOffset {
            realtime_minus_monotonic_ns: 1_000,
            uncertainty_ns: 0,
        };
        // A kernel timestamp maps to engine time and back.
        let real = clock.to_realtime(&offset, now);
        assert_eq!(clock.from_kernel(&offset, real), now);
        // A timestamp from before the origin clamps to 0.
        assert_eq!(clock.from_kernel(&offset, 0), 0);
    }
}
