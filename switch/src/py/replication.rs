//! Multicast groups and clone (mirror) sessions from Python.

use pyo3::prelude::*;

use super::errors::rt;
use super::PyEngine;
use crate::engine::CloneSession;

#[pymethods]
impl PyEngine {
    /// Multicast group ids.
    fn mc_groups(&self, py: Python<'_>) -> Vec<u16> {
        self.engine(py).mc_groups()
    }

    /// Clone session ids.
    fn clone_sessions(&self, py: Python<'_>) -> Vec<u32> {
        self.engine(py).clone_sessions()
    }

    /// Creates or replaces a multicast group; replicas are (egress port, replication id).
    fn mc_group_set(&self, py: Python<'_>, group: u16, replicas: Vec<(u16, u16)>) -> PyResult<()> {
        self.engine(py).mc_group_set(group, replicas).map_err(rt)
    }

    /// Deletes a multicast group.
    fn mc_group_delete(&self, py: Python<'_>, group: u16) -> PyResult<()> {
        self.engine(py).mc_group_delete(group).map_err(rt)
    }

    /// A multicast group's replicas as (egress port, replication id).
    fn mc_group_get(&self, py: Python<'_>, group: u16) -> PyResult<Vec<(u16, u16)>> {
        self.engine(py).mc_group_get(group).map_err(rt)
    }

    /// Creates or replaces a clone session.
    #[pyo3(signature = (session, port = None, mcast_grp = None, truncate_bytes = None))]
    fn clone_session_set(
        &self,
        py: Python<'_>,
        session: u32,
        port: Option<u16>,
        mcast_grp: Option<u16>,
        truncate_bytes: Option<u32>,
    ) -> PyResult<()> {
        self.engine(py)
            .clone_session_set(
                session,
                CloneSession {
                    port,
                    mcast_grp,
                    truncate: truncate_bytes,
                },
            )
            .map_err(rt)
    }

    /// Deletes a clone session.
    fn clone_session_delete(&self, py: Python<'_>, session: u32) -> PyResult<()> {
        self.engine(py).clone_session_delete(session).map_err(rt)
    }

    /// A clone session as (port, mcast_grp, truncate_bytes).
    fn clone_session_get(
        &self,
        py: Python<'_>,
        session: u32,
    ) -> PyResult<(Option<u16>, Option<u16>, Option<u32>)> {
        self.engine(py)
            .clone_session_get(session)
            .map(|s| (s.port, s.mcast_grp, s.truncate))
            .map_err(rt)
    }
}
