//! Time series: every recorded quantity sampled at a fixed interval of virtual time.

/// What one series samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// A source's cumulative offered bytes.
    SourceOffered(u32),
    /// A source's cumulative bytes its queue took.
    SourceAccepted(u32),
    /// A source's cumulative bytes put on its link.
    SourceSent(u32),
    /// A source's cumulative frames dropped at its full queue.
    SourceDropped(u32),
    /// A source's cumulative frames offered.
    SourceOfferedFrames(u32),
    /// A source's regulated rate, bit/s.
    SourceRate(u32),
    /// Bytes in a source's rate-limiter queue.
    SourceQueue(u32),
    /// Cumulative bytes of a flow received at its destination (flow = source index).
    FlowReceived(u32),
    /// Cumulative frames of a flow received.
    FlowReceivedFrames(u32),
    /// Bytes queued on a switch port.
    PortQueue(u32, u16),
    /// Bytes a switch's shared pool holds.
    SwitchPool(u32),
    /// Cumulative bytes that arrived over a link direction.
    LinkBytes(u32),
    /// A TCP flow's quantity.
    Tcp(u32, crate::network::TcpProbe),
}

/// One named series.
#[derive(Debug, Clone)]
pub struct Series {
    /// Name with its unit (`source/h1/offered_bytes`).
    pub name: String,
    /// What it samples.
    pub probe: Probe,
    /// One value per sample.
    pub values: Vec<f64>,
}

/// The samples of a run.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    /// Sampling interval, ns (0: nothing is recorded).
    pub interval_ns: u64,
    /// Sample times, ns.
    pub times_ns: Vec<u64>,
    /// The series.
    pub series: Vec<Series>,
}
