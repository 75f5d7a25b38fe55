//! Building the network: nodes, links, sources, hooks, recording; refused once it has run.

use super::*;

impl Simulator {
    pub(super) fn check_building(&self, what: &str) -> Result<(), SimError> {
        if self.started {
            return config(format!("{what}: the network cannot change once it has run"));
        }
        Ok(())
    }

    pub(super) fn new_name(&self, name: &str) -> Result<(), SimError> {
        if name.is_empty() {
            return config("a node needs a name");
        }
        if self.names.contains_key(name) {
            return config(format!("{name}: a node of that name exists"));
        }
        Ok(())
    }

    /// Adds a switch running `engine`; frames enter its pipeline `latency_ns` after arriving.
    pub fn add_switch(
        &mut self,
        name: &str,
        engine: Arc<Mutex<Engine>>,
        latency_ns: u64,
    ) -> Result<u32, SimError> {
        self.check_building("add_switch")?;
        self.new_name(name)?;
        if self
            .switches
            .iter()
            .any(|s| Arc::ptr_eq(&s.engine, &engine))
        {
            return config(format!(
                "{name}: that engine is already switch of this network"
            ));
        }
        let index = self.switches.len() as u32;
        self.switches
            .push(SwitchNode::new(name.into(), engine, latency_ns));
        self.names.insert(name.into(), NodeRef::Switch(index));
        Ok(index)
    }

    /// Adds a host.
    pub fn add_host(&mut self, name: &str, mac: [u8; 6], ip: [u8; 4]) -> Result<u32, SimError> {
        self.check_building("add_host")?;
        self.new_name(name)?;
        let index = self.hosts.len() as u32;
        self.hosts.push(Host::new(name.into(), mac, ip));
        self.names.insert(name.into(), NodeRef::Host(index));
        Ok(index)
    }

    pub(super) fn node(&self, name: &str) -> Result<NodeRef, SimError> {
        match self.names.get(name) {
            Some(node) => Ok(*node),
            None => config(format!("{name}: no such host or switch")),
        }
    }

    pub(super) fn end_name(end: &End) -> String {
        match end.port {
            Some(p) => format!("{}-p{p}", end.node),
            None => end.node.clone(),
        }
    }

    pub(super) fn check_end(&self, end: &End) -> Result<(NodeRef, u16), SimError> {
        let node = self.node(&end.node)?;
        match (node, end.port) {
            (NodeRef::Switch(s), Some(port)) => {
                if usize::from(port) >= SWITCH_PORTS {
                    return config(format!(
                        "{}: ports are 0..{SWITCH_PORTS}",
                        Self::end_name(end)
                    ));
                }
                if self.switches[s as usize].ports[usize::from(port)].is_some() {
                    return config(format!("{}: port already linked", Self::end_name(end)));
                }
                Ok((node, port))
            }
            (NodeRef::Switch(_), None) => {
                config(format!("{}: a switch end needs a port", end.node))
            }
            (NodeRef::Host(h), None) => {
                if self.hosts[h as usize].nic.is_some() {
                    return config(format!(
                        "{}: a host has one link, this one is linked already",
                        end.node
                    ));
                }
                Ok((node, 0))
            }
            (NodeRef::Host(_), Some(_)) => config(format!("{}: a host end has no port", end.node)),
        }
    }

    /// Links `a` and `b` with `model` both ways.
    pub fn connect(&mut self, a: &End, b: &End, model: LinkModel) -> Result<(), SimError> {
        self.check_building("connect")?;
        if model.rate_bps == 0 {
            return config(format!(
                "link {} - {}: rate_bps must be positive",
                Self::end_name(a),
                Self::end_name(b)
            ));
        }
        let (na, pa) = self.check_end(a)?;
        let (nb, pb) = self.check_end(b)?;
        if na == nb {
            return config(format!(
                "link {} - {}: both ends on one node",
                Self::end_name(a),
                Self::end_name(b)
            ));
        }
        let ab = self.links.len() as u32;
        self.links
            .push(Direction::new(Self::end_name(a), Self::end_name(b), model));
        self.links
            .push(Direction::new(Self::end_name(b), Self::end_name(a), model));
        self.attach(
            na,
            pa,
            Peer {
                node: nb,
                port: pb,
                link: ab,
            },
            model,
        )?;
        self.attach(
            nb,
            pb,
            Peer {
                node: na,
                port: pa,
                link: ab + 1,
            },
            model,
        )?;
        Ok(())
    }

    pub(super) fn attach(
        &mut self,
        node: NodeRef,
        port: u16,
        peer: Peer,
        model: LinkModel,
    ) -> Result<(), SimError> {
        match node {
            NodeRef::Switch(s) => {
                let sw = &mut self.switches[s as usize];
                let mut engine = sw.lock();
                let mut cfg = engine
                    .port_config(port)
                    .map_err(|e| SimError::Config(format!("{}-p{port}: {e:?}", sw.name)))?;
                cfg.rate_bps = model.rate_bps;
                cfg.delay_ns = model.delay_ns;
                cfg.wire_overhead_bytes = model.wire_overhead_bytes;
                engine
                    .configure_port(port, cfg)
                    .and_then(|()| engine.set_honour_pause(port, model.honour_pause))
                    .map_err(|e| SimError::Config(format!("{}-p{port}: {e:?}", sw.name)))?;
                drop(engine);
                sw.ports[usize::from(port)] = Some(peer);
            }
            NodeRef::Host(h) => {
                let pause = PauseTimer::new(model.rate_bps).map_err(SimError::Config)?;
                let pfc = PfcTimers::new(model.rate_bps).map_err(SimError::Config)?;
                self.hosts[h as usize].nic = Some(Nic {
                    peer,
                    model,
                    serialiser: Serialiser::new(model.rate_bps),
                    busy_until_ns: 0,
                    pause,
                    pfc,
                });
            }
        }
        Ok(())
    }

    /// Adds a source; returns its index (also its flow id).
    pub fn add_source(&mut self, cfg: SourceConfig) -> Result<u32, SimError> {
        self.check_building("add_source")?;
        let what = format!("source {}", cfg.name);
        if self.sources.iter().any(|s| s.name == cfg.name) {
            return config(format!("{what}: a source of that name exists"));
        }
        if self.sources.len() > usize::from(u16::MAX) {
            return config(format!(
                "{what}: at most 65,536 sources (flow ids are 16 bits)"
            ));
        }
        let NodeRef::Host(h) = self.node(&cfg.host)? else {
            return config(format!("{what}: {} is not a host", cfg.host));
        };
        let NodeRef::Host(d) = self.node(&cfg.destination)? else {
            return config(format!(
                "{what}: destination {} is not a host",
                cfg.destination
            ));
        };
        let Some(nic) = &self.hosts[h as usize].nic else {
            return config(format!("{what}: host {} has no link", cfg.host));
        };
        let line_rate = nic.model.rate_bps;
        if cfg.dscp > 63 {
            return config(format!("{what}: dscp {} is not 0..=63", cfg.dscp));
        }
        if usize::from(cfg.priority) >= PFC_CLASSES {
            return config(format!("{what}: priority {} is not 0..=7", cfg.priority));
        }
        let mut spec = cfg.spec.clone();
        spec.wire_overhead_bytes = nic.model.wire_overhead_bytes;
        let generator = Source::new(spec, Rng::stream(self.seed, self.sources.len() as u64))
            .map_err(|e| SimError::Config(format!("{what}: {e}")))?;
        let rlq = RateLimiterQueue::new(cfg.rlq_bytes, None, nic.model.wire_overhead_bytes)
            .map_err(|e| SimError::Config(format!("{what}: {e}")))?;
        if !rlq.can_hold(generator.spec().sizes.max_bytes()) {
            return config(format!(
                "{what}: rlq_bytes {} cannot hold a {}-byte frame",
                cfg.rlq_bytes,
                generator.spec().sizes.max_bytes()
            ));
        }
        let reaction = match cfg.reaction {
            ReactionSpec::None => Reaction::None,
            ReactionSpec::Bcn(mut rp) => {
                rp.line_rate_bps = line_rate as f64;
                // BCN(0,0) back-offs: a stream of the run's seed apart from the sources'.
                let seed = Rng::stream(!self.seed, self.sources.len() as u64).next_u64();
                Reaction::Bcn(Box::new(
                    bufferlab_hosts::bcn::ReactionPoint::seeded(rp, seed)
                        .map_err(|e| SimError::Config(format!("{what}: {e}")))?,
                ))
            }
        };
        let (src_host, dst_host) = (&self.hosts[h as usize], &self.hosts[d as usize]);
        let address = FlowAddress {
            src_mac: src_host.mac,
            dst_mac: dst_host.mac,
            src_ip: src_host.ip,
            dst_ip: dst_host.ip,
            dscp: cfg.dscp,
            udp_src: cfg.udp_ports.0,
            udp_dst: cfg.udp_ports.1,
        };
        let index = self.sources.len() as u32;
        self.sources.push(SimSource {
            name: cfg.name,
            host: h,
            flow: index as u16,
            address,
            priority: cfg.priority,
            generator,
            next: None,
            rlq,
            when_full: cfg.when_full,
            blocked: None,
            reaction,
            response_ns: cfg.response_ns,
            rp_timer_ns: None,
            tag: None,
            seq: 0,
            counters: SourceCounters::default(),
        });
        self.hosts[h as usize].sources.push(index);
        Ok(index)
    }

    /// Replaces a source's reaction model with a hook.
    pub fn set_hook(
        &mut self,
        source: u32,
        hook: Box<dyn crate::reaction::ReactionHook>,
    ) -> Result<(), SimError> {
        self.check_building("set_hook")?;
        match self.sources.get_mut(source as usize) {
            Some(s) => {
                s.reaction = Reaction::Hook(hook);
                Ok(())
            }
            None => config(format!("source index {source}: no such source")),
        }
    }

    /// Samples every series each `interval_ns` of virtual time (from 0).
    pub fn record_every(&mut self, interval_ns: u64) -> Result<(), SimError> {
        self.check_building("record_every")?;
        if interval_ns == 0 {
            return config("record interval_ns must be positive");
        }
        self.recorder.interval_ns = interval_ns;
        Ok(())
    }
}
