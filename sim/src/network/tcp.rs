//! TCP flows in the run: a `bufferlab_hosts::tcp` sender on one host and its receiver
//! on another, exchanging real TCP/IPv4 frames through the switches. A host's NIC
//! serves its TCP ends and its UDP sources in turn; each flow has one timer event
//! (the earliest its ends want) and records cwnd, RTT, retransmissions and timeouts.

use bufferlab_hosts::tcp::segment::{parse_frame, write_frame, Endpoints};
use bufferlab_hosts::tcp::{TcpConfig, TcpReceiver, TcpSender};

use super::*;

/// TCP port every receiver listens on (iperf3's).
pub const RECEIVER_PORT: u16 = 5201;
/// A flow's sender port is this plus its index.
pub const SENDER_PORT_BASE: u16 = 32_768;
/// At most this many TCP flows (one sender port each).
pub const MAX_TCP_FLOWS: usize = 32_767;

/// Everything that describes one TCP flow.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpFlowConfig {
    /// Name, for results.
    pub name: String,
    /// The host that sends the data.
    pub sender: String,
    /// The host that receives it.
    pub receiver: String,
    /// Settings of both ends.
    pub tcp: TcpConfig,
    /// Profile name, for results.
    pub profile: String,
    /// When the sender opens the connection, ns.
    pub start_ns: u64,
    /// Bytes to send (None: a bulk flow that sends for ever).
    pub bytes: Option<u64>,
    /// DSCP of its frames (both directions).
    pub dscp: u8,
}

/// One TCP flow and its two ends.
pub struct TcpFlow {
    /// What it was built from.
    pub config: TcpFlowConfig,
    /// The sender's host.
    pub sender_host: u32,
    /// The receiver's host.
    pub receiver_host: u32,
    /// The sending end.
    pub tx: TcpSender,
    /// The receiving end.
    pub rx: TcpReceiver,
    /// Addresses of the data direction.
    pub ends: Endpoints,
    /// When its timer event is scheduled, ns.
    timer_ns: Option<u64>,
}

/// What one recorded TCP series samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpProbe {
    /// Congestion window, bytes.
    Cwnd,
    /// Smoothed RTT, ns (0 before the first sample).
    Srtt,
    /// Bytes in flight (pipe).
    Pipe,
    /// Cumulative segments retransmitted.
    Retransmits,
    /// Cumulative retransmission timeouts.
    Timeouts,
    /// Cumulative bytes delivered in order at the receiver.
    Delivered,
    /// DCTCP's α.
    Alpha,
}

/// The TCP side of a network: flows and which host serves which ends.
#[derive(Default)]
pub struct TcpFlows {
    /// The flows, by index.
    pub flows: Vec<TcpFlow>,
    /// Per host: its ends as (flow, is the sender).
    ends: Vec<Vec<(u32, bool)>>,
    /// Per host: where the round robin over its ends goes on.
    next: Vec<usize>,
    /// Per host: TCP sent last, so UDP goes next if it has a frame.
    yielded: Vec<bool>,
}

impl Simulator {
    /// Adds a TCP flow; returns its index.
    pub fn add_tcp_flow(&mut self, cfg: TcpFlowConfig) -> Result<u32, SimError> {
        self.check_building("add_tcp_flow")?;
        let what = format!("tcp flow {}", cfg.name);
        if self.tcp.flows.iter().any(|f| f.config.name == cfg.name) {
            return config(format!("{what}: a TCP flow of that name exists"));
        }
        if self.tcp.flows.len() >= MAX_TCP_FLOWS {
            return config(format!("{what}: at most {MAX_TCP_FLOWS} TCP flows"));
        }
        cfg.tcp
            .check()
            .map_err(|e| SimError::Config(format!("{what}: {e}")))?;
        if cfg.dscp > 63 {
            return config(format!("{what}: dscp {} is not 0..=63", cfg.dscp));
        }
        let host = |name: &str, role: &str| -> Result<u32, SimError> {
            match self.node(name)? {
                NodeRef::Host(h) if self.hosts[h as usize].nic.is_some() => Ok(h),
                NodeRef::Host(_) => config(format!("{what}: {role} {name} has no link")),
                NodeRef::Switch(_) => config(format!("{what}: {role} {name} is not a host")),
            }
        };
        let s = host(&cfg.sender, "sender")?;
        let r = host(&cfg.receiver, "receiver")?;
        if s == r {
            return config(format!("{what}: sender and receiver are the same host"));
        }
        let index = self.tcp.flows.len() as u32;
        // Initial sequence numbers from a stream of their own (the run's seed, the flow).
        let mut rng = Rng::stream(self.seed ^ 0x7c9_7c9, u64::from(index));
        let (isn_tx, isn_rx) = (rng.next_u64() as u32, rng.next_u64() as u32);
        let (sh, rh) = (&self.hosts[s as usize], &self.hosts[r as usize]);
        let ends = Endpoints {
            src_mac: sh.mac,
            dst_mac: rh.mac,
            src_ip: sh.ip,
            dst_ip: rh.ip,
            src_port: SENDER_PORT_BASE + index as u16,
            dst_port: RECEIVER_PORT,
            dscp: cfg.dscp,
        };
        let flow = TcpFlow {
            sender_host: s,
            receiver_host: r,
            tx: TcpSender::new(&cfg.tcp, cfg.start_ns, cfg.bytes, isn_tx),
            rx: TcpReceiver::new(&cfg.tcp, cfg.bytes, isn_rx),
            ends,
            timer_ns: None,
            config: cfg,
        };
        self.tcp.flows.push(flow);
        let hosts = self.hosts.len();
        self.tcp.ends.resize(hosts, Vec::new());
        self.tcp.next.resize(hosts, 0);
        self.tcp.yielded.resize(hosts, false);
        self.tcp.ends[s as usize].push((index, true));
        self.tcp.ends[r as usize].push((index, false));
        Ok(index)
    }

    /// Schedules every flow's first timer (its start).
    pub(super) fn start_tcp(&mut self) {
        for f in 0..self.tcp.flows.len() {
            let at = self.tcp.flows[f].config.start_ns;
            self.tcp.flows[f].timer_ns = Some(at);
            self.events.push(at, Event::TcpTimer { flow: f as u32 });
        }
    }

    fn schedule_tcp_timer(&mut self, flow: u32) {
        let now = self.now;
        let f = &mut self.tcp.flows[flow as usize];
        let want = [f.tx.next_timer_ns(), f.rx.next_timer_ns()]
            .into_iter()
            .flatten()
            .min();
        if let Some(at) = want {
            // Something due now that did not go waits for its NIC, whose wake-up is
            // scheduled (a start, a delayed ACK): a timer now would fire again and again.
            if at <= now {
                return;
            }
            if f.timer_ns.is_none_or(|pending| at < pending) {
                f.timer_ns = Some(at);
                self.events.push(at, Event::TcpTimer { flow });
            }
        }
    }

    /// A flow's timer event at `t`.
    pub(super) fn tcp_timer(&mut self, flow: u32, t: u64) {
        let f = &mut self.tcp.flows[flow as usize];
        if f.timer_ns != Some(t) {
            return;
        }
        f.timer_ns = None;
        f.tx.on_timer(t);
        let (s, r) = (f.sender_host, f.receiver_host);
        self.nic_try_send(s, t);
        self.nic_try_send(r, t);
        self.schedule_tcp_timer(flow);
    }

    /// Gives the NIC of `host` a TCP frame if it is TCP's turn and one is ready; true if
    /// a frame went. The caller has checked the link is idle and not paused.
    pub(super) fn tcp_nic_turn(&mut self, host: u32, t: u64) -> bool {
        let h = host as usize;
        let n = self.tcp.ends.get(h).map_or(0, Vec::len);
        if n == 0 {
            return false;
        }
        let udp_ready = self.hosts[h].sources.iter().any(|&i| {
            self.sources[i as usize]
                .rlq
                .head_ready_ns()
                .is_some_and(|r| r <= t)
        });
        if udp_ready && self.tcp.yielded[h] {
            self.tcp.yielded[h] = false;
            return false;
        }
        let mut earliest: Option<u64> = None;
        for k in 0..n {
            let slot = (self.tcp.next[h] + k) % n;
            let (flow, is_sender) = self.tcp.ends[h][slot];
            let f = &mut self.tcp.flows[flow as usize];
            let seg = if is_sender {
                let seg = f.tx.poll_transmit(t);
                if seg.is_none() {
                    if let Some(ready) = f.tx.ready_ns(t).filter(|&r| r > t) {
                        earliest = Some(earliest.map_or(ready, |e| e.min(ready)));
                    }
                }
                seg
            } else {
                f.rx.poll_ack(t)
            };
            let Some(seg) = seg else { continue };
            let ends = if is_sender { f.ends } else { f.ends.reversed() };
            let id = self.frames.take();
            write_frame(self.frames.get_mut(id), &ends, &seg);
            self.tcp.next[h] = (slot + 1) % n;
            self.tcp.yielded[h] = true;
            self.tcp_put_on_wire(host, id, t);
            self.schedule_tcp_timer(flow);
            return true;
        }
        if let Some(at) = earliest {
            self.schedule_wake(host, at);
        }
        false
    }

    /// Serialises frame `id` on the idle link of `host` from `t`.
    fn tcp_put_on_wire(&mut self, host: u32, id: FrameId, t: u64) {
        let bytes = self.frames.get(id).len() as u64;
        let Some(nic) = self.hosts[host as usize].nic.as_mut() else {
            self.frames.release(id);
            return;
        };
        if nic.busy_until_ns != t {
            nic.serialiser.restart();
        }
        let duration = nic
            .serialiser
            .next_ns(bytes + u64::from(nic.model.wire_overhead_bytes));
        nic.busy_until_ns = t + duration;
        let arrival = t + duration + nic.model.delay_ns;
        let (peer, busy_until) = (nic.peer, nic.busy_until_ns);
        self.schedule_arrival(peer, arrival, id);
        self.schedule_wake(host, busy_until);
    }

    /// Takes a TCP frame that arrived at `host`; false if it is not one of a flow's.
    pub(super) fn tcp_receive(&mut self, host: u32, frame: FrameId, t: u64) -> bool {
        if self.tcp.flows.is_empty() {
            return false;
        }
        let Some(rx) = parse_frame(self.frames.get(frame)) else {
            return false;
        };
        let (flow, to_sender) = if rx.dst_port == RECEIVER_PORT {
            (rx.src_port.wrapping_sub(SENDER_PORT_BASE), false)
        } else if rx.src_port == RECEIVER_PORT {
            (rx.dst_port.wrapping_sub(SENDER_PORT_BASE), true)
        } else {
            return false;
        };
        let Some(f) = self.tcp.flows.get_mut(usize::from(flow)) else {
            return false;
        };
        let owner = if to_sender {
            f.sender_host
        } else {
            f.receiver_host
        };
        if owner != host {
            return false;
        }
        if to_sender {
            f.tx.on_segment(t, &rx.segment);
        } else {
            f.rx.on_segment(t, &rx.segment);
        }
        self.frames.release(frame);
        self.nic_try_send(host, t);
        self.schedule_tcp_timer(u32::from(flow));
        true
    }

    /// The TCP series of a run, for the recorder.
    pub(super) fn tcp_series(&self) -> Vec<Series> {
        let mut out = Vec::new();
        for (i, f) in self.tcp.flows.iter().enumerate() {
            let n = &f.config.name;
            let mut add = |suffix: &str, p: TcpProbe| {
                out.push(Series {
                    name: format!("tcp/{n}/{suffix}"),
                    probe: Probe::Tcp(i as u32, p),
                    values: Vec::new(),
                })
            };
            add("cwnd_bytes", TcpProbe::Cwnd);
            add("srtt_ns", TcpProbe::Srtt);
            add("pipe_bytes", TcpProbe::Pipe);
            add("retransmitted_segments", TcpProbe::Retransmits);
            add("timeouts", TcpProbe::Timeouts);
            add("delivered_bytes", TcpProbe::Delivered);
            if f.tx.alpha().is_some() {
                add("dctcp_alpha", TcpProbe::Alpha);
            }
        }
        out
    }

    /// One sample of a TCP series.
    pub(super) fn tcp_probe(&self, flow: u32, p: TcpProbe) -> f64 {
        let f = &self.tcp.flows[flow as usize];
        match p {
            TcpProbe::Cwnd => f.tx.cwnd_bytes() as f64,
            TcpProbe::Srtt => f.tx.rtt().srtt_ns().unwrap_or(0) as f64,
            TcpProbe::Pipe => f.tx.pipe_bytes() as f64,
            TcpProbe::Retransmits => f.tx.stats().retransmitted_segments as f64,
            TcpProbe::Timeouts => f.tx.stats().timeouts as f64,
            TcpProbe::Delivered => f.rx.delivered_bytes() as f64,
            TcpProbe::Alpha => f.tx.alpha().unwrap_or(0.0),
        }
    }
}
