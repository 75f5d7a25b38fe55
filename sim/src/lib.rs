//! bufferlab's network simulator: switches running BMv2 JSON on the switch engine,
//! hosts running `bufferlab_hosts`'s models, and links, in virtual time (integer ns,
//! one thread, seeded). Exposed to Python as `bufferlab.sim._sim`.

pub mod event;
pub mod frames;
pub mod host;
pub mod link;
pub mod network;
mod py;
pub mod reaction;
pub mod record;
pub mod switch_node;

pub use network::{End, ReactionSpec, SimError, Simulator, SourceConfig, TcpFlowConfig};
