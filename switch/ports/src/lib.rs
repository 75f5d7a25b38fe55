//! bufferlab's live switch ports.
//!
//! The switch engine is clock-free and thread-free; the live wrapper feeds it frames from
//! the ports of this crate and sends what it emits through them:
//!
//! - [`LivePort`]: a raw AF_PACKET socket on one Linux interface, promiscuous, blind to
//!   outgoing frames, non-blocking; batched receive (recvmmsg into a preallocated
//!   [`RxBatch`], each frame with its kernel receive timestamp) and batched transmit
//!   (sendmmsg); frames larger than the MTU allows are counted and skipped.
//! - [`PortSet`]: all ports of a switch behind one wait with a timeout in ns, batches
//!   tagged with the switch port number, and a [`Waker`] that ends a wait from another
//!   thread or a signal handler.
//! - [`PcapWriter`] / [`PortCapture`]: `<iface>_in.pcap` and `<iface>_out.pcap` in the
//!   nanosecond pcap format, as BMv2's `--pcap DIR` writes them.
//! - [`clock`]: CLOCK_MONOTONIC / CLOCK_REALTIME in ns and the offset between them.
//!
//! Units: times in ns, sizes in bytes of Linux frames (Ethernet header included, FCS
//! excluded).

pub mod clock;
mod error;
mod live;
pub mod pcap;
mod set;
mod sys;

pub use clock::ClockOffset;
pub use error::PortError;
pub use live::{LivePort, PortConfig, PortCounters, RxBatch, RxFrame, ETH_HLEN, VLAN_HLEN};
pub use pcap::{PcapWriter, PortCapture};
pub use set::{PortSet, WaitOutcome, Waker};
