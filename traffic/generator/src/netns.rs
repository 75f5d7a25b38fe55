//! Open sockets inside another network namespace without moving the whole process.
//!
//! A socket belongs to the namespace it was created in, so the calling thread switches
//! to the target namespace, creates the socket, and switches back.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Path of a namespace given by name (`ip netns` names) or by path (`/proc/<pid>/ns/net`).
pub fn netns_path(netns: &str) -> String {
    if netns.contains('/') {
        netns.to_string()
    } else {
        format!("/run/netns/{netns}")
    }
}

fn enter(fd: &impl AsRawFd) -> io::Result<()> {
    // SAFETY: setns on a namespace file descriptor; only the calling thread changes namespace.
    if unsafe { libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Create a socket of `kind` (e.g. SOCK_DGRAM) in `netns`, or in the current namespace if None.
pub fn socket_in(netns: Option<&str>, kind: libc::c_int) -> io::Result<OwnedFd> {
    let make = || {
        // SAFETY: plain socket(2) call; the result is checked before being wrapped.
        let fd = unsafe { libc::socket(libc::AF_INET, kind | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            Err(io::Error::last_os_error())
        } else {
            // SAFETY: `fd` was just returned by socket(2) and is owned by nobody else.
            Ok(unsafe { OwnedFd::from_raw_fd(fd) })
        }
    };
    let Some(name) = netns else {
        return make();
    };
    let path = netns_path(name);
    let target = File::open(&path)
        .map_err(|e| io::Error::new(e.kind(), format!("network namespace {path}: {e}")))?;
    let home = File::open("/proc/thread-self/ns/net")?;
    enter(&target).map_err(|e| io::Error::new(e.kind(), format!("setns({path}): {e}")))?;
    let made = make();
    enter(&home)?;
    made
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_ip_netns_paths() {
        assert_eq!(netns_path("blt1"), "/run/netns/blt1");
        assert_eq!(netns_path("/proc/42/ns/net"), "/proc/42/ns/net");
    }

    #[test]
    fn missing_namespace_is_a_clear_error() {
        let err = socket_in(Some("bufferlab-no-such-ns"), libc::SOCK_DGRAM).unwrap_err();
        assert!(err.to_string().contains("/run/netns/bufferlab-no-such-ns"));
    }
}
