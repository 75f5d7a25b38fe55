//! TCP hosts in virtual time: a sender and a receiver that exchange real TCP/IPv4
//! frames, with the congestion control, loss recovery and timers of the RFCs named in
//! each module, and profiles that set them as a Linux host of a given era would.
//!
//! Clock-injected like the rest of the crate: every call takes `now_ns`, randomness
//! (initial sequence numbers) comes from the caller's seeded stream, so a simulated
//! run repeats bit for bit. Windows and offsets are bytes; offsets count the stream
//! from its first data byte and map to 32-bit wire numbers only in `segment`s.
//!
//! | module | concern |
//! |---|---|
//! | `seq` | 32-bit sequence space ↔ 64-bit stream offsets |
//! | `segment` | TCP/IPv4 frames: build and parse (options, ECN bits, checksums) |
//! | `ranges` | byte-range sets (SACK scoreboard, out-of-order data) |
//! | `scoreboard` | sent segments, SACK, loss marking, pipe (RFC 6675) |
//! | `rtt` | SRTT, RTTVAR, RTO and backoff (RFC 6298) |
//! | `rack` | RACK's reference segment and reordering window (RFC 8985) |
//! | `cc` | congestion control: NewReno, CUBIC, DCTCP |
//! | `pacing` | spacing segments in time |
//! | `tso` | Linux's GSO buffer sizing and TSO deferral (bursts) |
//! | `sender`, `receiver` | the two ends |
//! | `config` | settings and profiles |

pub mod cc;
pub mod config;
pub mod pacing;
pub mod rack;
pub mod ranges;
pub mod receiver;
pub mod rtt;
pub mod scoreboard;
pub mod segment;
pub mod sender;
pub mod seq;
pub mod tso;

#[cfg(test)]
mod tests;

pub use config::{TcpConfig, PROFILES};
pub use receiver::TcpReceiver;
pub use sender::TcpSender;
