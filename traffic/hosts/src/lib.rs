//! bufferlab's host models, written once for the live agents and the simulator.
//!
//! Everything here is pure and clock-injected: time comes in as `now` in ns and
//! nothing reads a clock or touches a socket, so the same code regulates a live
//! sender (through the Python bindings in `bufferlab.traffic._hosts`) and a host
//! of `bufferlab-sim` in virtual time.
//!
//! Sizes are frame bytes as a switch receives them (Ethernet header to end of
//! payload, no FCS) unless a name says otherwise; a link adds its wire overhead
//! (preamble, gap, FCS) on top. Rates are bit/s on the wire.

pub mod bcn;
pub mod frame;
pub mod header;
pub mod pause;
#[cfg(feature = "python")]
mod py;
pub mod rlq;
pub mod rng;
pub mod sink;
pub mod source;
pub mod tcp;
pub mod wire;
