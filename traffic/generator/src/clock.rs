//! Clocks and the hybrid sleep/spin wait that paces departures.

use std::io;

fn read(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; both clock ids always exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_MONOTONIC in ns: what departures are scheduled on.
pub fn monotonic_ns() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}

/// CLOCK_REALTIME in ns: the clock of data headers and kernel timestamps.
pub fn realtime_ns() -> u64 {
    read(libc::CLOCK_REALTIME)
}

/// Convert a timespec from a control message to ns.
pub fn timespec_ns(ts: &libc::timespec) -> u64 {
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Ask for 1 ns of timer slack so sleeps end when asked rather than up to 50 µs late.
pub fn tighten_timer_slack() -> io::Result<()> {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and only affects this thread.
    let rc = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Wait until CLOCK_MONOTONIC reaches `deadline_ns`: sleep while it is more than `spin_ns`
/// away (cheap but imprecise), then spin on the clock for the last stretch (precise).
pub fn wait_until(deadline_ns: u64, spin_ns: u64) {
    loop {
        let now = monotonic_ns();
        if now >= deadline_ns {
            return;
        }
        let left = deadline_ns - now;
        if left > spin_ns {
            let wake = deadline_ns - spin_ns;
            let ts = libc::timespec {
                tv_sec: (wake / 1_000_000_000) as libc::time_t,
                tv_nsec: (wake % 1_000_000_000) as libc::c_long,
            };
            // SAFETY: absolute sleep on a valid timespec; an EINTR wake-up just loops again.
            unsafe {
                libc::clock_nanosleep(
                    libc::CLOCK_MONOTONIC,
                    libc::TIMER_ABSTIME,
                    &ts,
                    std::ptr::null_mut(),
                )
            };
        } else {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_never_returns_early() {
        let deadline = monotonic_ns() + 200_000;
        wait_until(deadline, 50_000);
        assert!(monotonic_ns() >= deadline);
    }

    #[test]
    fn timespec_converts_to_ns() {
        let ts = libc::timespec {
            tv_sec: 3,
            tv_nsec: 7,
        };
        assert_eq!(timespec_ns(&ts), 3_000_000_007);
    }
}
