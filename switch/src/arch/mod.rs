//! Architectures: how a packet walks a program's blocks on each target, what the target
//! tells each block and what it acts on afterwards. The engine core (loading, tables,
//! externs' state, the traffic manager, ports and clocks) is shared; a module here says
//! what differs.

pub(crate) mod tna;
mod v1model;
