//! How a host's source reacts to feedback: not at all, with the built-in BCN
//! reaction point, or through a hook (a Python class, called per feedback frame and
//! per timer it sets, never per data frame).

use std::error::Error;

use bufferlab_hosts::bcn::ReactionPoint;

/// What a hook failed with (a Python exception, for the Python hook).
pub type HookError = Box<dyn Error + Send + Sync>;

/// What a hook asks of its source; applied in order once the hook returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// Pace the source's queue at this rate, bit/s; None removes the limiter.
    SetRate(Option<u64>),
    /// Tag frames with RLT(cpid) from now on; None stops tagging.
    SetTag(Option<u64>),
    /// Send nothing before this time, ns.
    HoldUntil(u64),
    /// Call the hook's timer with `token` at `at_ns`.
    Timer {
        /// When, ns (not before now).
        at_ns: u64,
        /// Handed back to the hook.
        token: u64,
    },
}

/// What a hook sees of its source, and the commands it gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookContext {
    /// Now, ns.
    pub now_ns: u64,
    /// The source's pacing rate, bit/s (None: unlimited).
    pub rate_bps: Option<u64>,
    /// The host link's rate, bit/s.
    pub line_rate_bps: u64,
    /// Bytes in the source's rate-limiter queue.
    pub queue_bytes: u64,
    /// The RLT cpid frames carry.
    pub tag: Option<u64>,
    /// The source's name.
    pub source: String,
    /// Commands given so far.
    pub commands: Vec<Command>,
}

/// A reaction model written outside the simulator.
pub trait ReactionHook: Send + Sync {
    /// EtherTypes of the feedback frames it wants.
    fn ethertypes(&self) -> &[u16];
    /// A feedback frame arrived (after the host's response time).
    fn on_feedback(&mut self, ctx: &mut HookContext, frame: &[u8]) -> Result<(), HookError>;
    /// A timer it set has fired.
    fn on_timer(&mut self, ctx: &mut HookContext, token: u64) -> Result<(), HookError>;
}

/// A source's reaction model.
pub enum Reaction {
    /// Ignores feedback.
    None,
    /// The BCN reaction point of `bufferlab_hosts::bcn` (boxed: it is the largest model).
    Bcn(Box<ReactionPoint>),
    /// A hook.
    Hook(Box<dyn ReactionHook>),
}

impl Reaction {
    /// Whether it takes frames of `ethertype`.
    pub fn wants(&self, ethertype: u16) -> bool {
        match self {
            Reaction::None => false,
            Reaction::Bcn(_) => ethertype == bufferlab_hosts::bcn::ETHERTYPE_BCN,
            Reaction::Hook(hook) => hook.ethertypes().contains(&ethertype),
        }
    }
}
