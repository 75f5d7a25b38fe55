//! Optional SCHED_FIFO for the sending thread, restored when the run ends.
//!
//! On a busy machine an ordinary thread can wake from its sleep 10 ms or more late, and
//! its catch-up burst is not the traffic pattern asked for; a real-time thread preempts
//! ordinary ones as soon as its timer fires.

use std::io;

/// While alive, the calling thread runs SCHED_FIFO; dropping it restores the old policy.
#[derive(Debug)]
pub struct RealtimeGuard {
    policy: libc::c_int,
    param: libc::sched_param,
}

impl RealtimeGuard {
    /// Switch the calling thread to SCHED_FIFO at `priority` (1..=99; needs root or
    /// CAP_SYS_NICE).
    pub fn enter(priority: i32) -> io::Result<RealtimeGuard> {
        if !(1..=99).contains(&priority) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("real-time priority {priority} is outside 1..=99"),
            ));
        }
        // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param to fill.
        let mut param: libc::sched_param = unsafe { std::mem::zeroed() };
        let policy = unsafe { libc::sched_getscheduler(0) };
        if policy < 0 || unsafe { libc::sched_getparam(0, &mut param) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let fifo = libc::sched_param {
            sched_priority: priority,
        };
        // SAFETY: as above; `fifo` is a valid sched_param.
        if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &fifo) } != 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("SCHED_FIFO priority {priority}: {e}"),
            ));
        }
        Ok(RealtimeGuard { policy, param })
    }
}

impl Drop for RealtimeGuard {
    fn drop(&mut self) {
        // SAFETY: restores the policy read in enter() for the same thread.
        unsafe { libc::sched_setscheduler(0, self.policy, &self.param) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities_outside_the_fifo_range_are_refused() {
        assert!(RealtimeGuard::enter(0).is_err());
        assert!(RealtimeGuard::enter(100).is_err());
    }

    #[test]
    fn the_old_policy_comes_back() {
        // SAFETY: reading the calling thread's policy.
        let before = unsafe { libc::sched_getscheduler(0) };
        // Unprivileged runs cannot switch; the restore is what is checked here.
        if let Ok(guard) = RealtimeGuard::enter(1) {
            assert_eq!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_FIFO);
            drop(guard);
        }
        assert_eq!(unsafe { libc::sched_getscheduler(0) }, before);
    }
}
