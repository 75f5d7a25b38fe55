//! What a run records: time series (which series a network has, and one sample of
//! each) and per-frame captures at hosts.

use super::*;

impl Simulator {
    /// Makes `host` keep a record of every data frame it receives from now on (flow,
    /// sequence number, send and arrival time), for per-frame latency and loss.
    pub fn capture(&mut self, host: &str) -> Result<(), SimError> {
        let h = self.host_named(host)?;
        self.hosts[h as usize].capture.get_or_insert_with(Vec::new);
        Ok(())
    }

    /// The data frames `host` captured, in arrival order (empty without [`Simulator::capture`]).
    pub fn captured(&self, host: &str) -> Result<&[CapturedFrame], SimError> {
        let h = self.host_named(host)?;
        Ok(self.hosts[h as usize].capture.as_deref().unwrap_or(&[]))
    }

    fn host_named(&self, name: &str) -> Result<u32, SimError> {
        match self.node(name)? {
            NodeRef::Host(h) => Ok(h),
            NodeRef::Switch(_) => config(format!("{name}: a switch, not a host")),
        }
    }

    pub(super) fn build_series(&mut self) {
        let mut series = Vec::new();
        let mut add = |name: String, probe: Probe| {
            series.push(Series {
                name,
                probe,
                values: Vec::new(),
            })
        };
        for (i, s) in self.sources.iter().enumerate() {
            let i = i as u32;
            let n = &s.name;
            add(format!("source/{n}/offered_bytes"), Probe::SourceOffered(i));
            add(
                format!("source/{n}/offered_frames"),
                Probe::SourceOfferedFrames(i),
            );
            add(
                format!("source/{n}/accepted_bytes"),
                Probe::SourceAccepted(i),
            );
            add(format!("source/{n}/sent_bytes"), Probe::SourceSent(i));
            add(
                format!("source/{n}/dropped_frames"),
                Probe::SourceDropped(i),
            );
            add(format!("source/{n}/rate_bps"), Probe::SourceRate(i));
            add(format!("source/{n}/rlq_bytes"), Probe::SourceQueue(i));
            add(format!("flow/{n}/received_bytes"), Probe::FlowReceived(i));
            add(
                format!("flow/{n}/received_frames"),
                Probe::FlowReceivedFrames(i),
            );
        }
        for (i, sw) in self.switches.iter().enumerate() {
            for (port, peer) in sw.ports.iter().enumerate() {
                if peer.is_some() {
                    add(
                        format!("switch/{}/port/{port}/queue_bytes", sw.name),
                        Probe::PortQueue(i as u32, port as u16),
                    );
                }
            }
            add(
                format!("switch/{}/pool_bytes", sw.name),
                Probe::SwitchPool(i as u32),
            );
        }
        for (i, l) in self.links.iter().enumerate() {
            add(
                format!("link/{}>{}/bytes", l.from, l.to),
                Probe::LinkBytes(i as u32),
            );
        }
        series.extend(self.tcp_series());
        self.recorder.series = series;
    }

    pub(super) fn record(&mut self, t: u64) {
        // Bring every engine to now so its queues show this instant.
        for i in 0..self.switches.len() {
            if self.switches[i].next_ns.is_some_and(|n| n <= t) {
                // Recording must not fail the run; an engine error shows on the next step.
                let _ = self.step_switch(i, t);
            }
        }
        self.recorder.times_ns.push(t);
        let mut series = std::mem::take(&mut self.recorder.series);
        for s in &mut series {
            let value = self.probe(s.probe);
            s.values.push(value);
        }
        self.recorder.series = series;
    }

    pub(super) fn probe(&self, probe: Probe) -> f64 {
        let src = |i: u32| &self.sources[i as usize];
        let flow = |i: u32| {
            let s = src(i);
            self.hosts
                .iter()
                .filter_map(|h| h.flows.get(usize::from(s.flow)))
                .fold((0u64, 0u64), |(b, f), a| (b + a.bytes, f + a.frames))
        };
        match probe {
            Probe::SourceOffered(i) => src(i).counters.offered_bytes as f64,
            Probe::SourceOfferedFrames(i) => src(i).counters.offered_frames as f64,
            Probe::SourceAccepted(i) => src(i).counters.accepted_bytes as f64,
            Probe::SourceSent(i) => src(i).counters.sent_bytes as f64,
            Probe::SourceDropped(i) => src(i).counters.dropped_frames as f64,
            Probe::SourceRate(i) => {
                let s = src(i);
                let line = self.hosts[s.host as usize]
                    .nic
                    .as_ref()
                    .map_or(0, |n| n.model.rate_bps);
                s.regulated_rate_bps(line)
            }
            Probe::SourceQueue(i) => src(i).rlq.occupancy_bytes() as f64,
            Probe::FlowReceived(i) => flow(i).0 as f64,
            Probe::FlowReceivedFrames(i) => flow(i).1 as f64,
            Probe::PortQueue(s, port) => {
                self.switches[s as usize].lock().port_occupancy_bytes(port) as f64
            }
            Probe::SwitchPool(s) => self.switches[s as usize].lock().pool_used_bytes() as f64,
            Probe::LinkBytes(l) => self.links[l as usize].total_bytes() as f64,
            Probe::Tcp(f, p) => self.tcp_probe(f, p),
        }
    }
}
