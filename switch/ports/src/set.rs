//! All live ports of a switch behind one wait: frames come out as batches tagged with the
//! switch port number (`-i N@iface`), and a wake-up handle lets another thread (or a
//! signal handler) end the wait early.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;

use crate::error::PortError;
use crate::live::{LivePort, RxBatch};

/// Interrupts a [`PortSet::wait`] from any thread; cheap to clone.
///
/// `wake` is one write(2) to an eventfd, which is async-signal-safe, so a SIGINT/SIGTERM
/// handler may call it.
#[derive(Clone, Debug)]
pub struct Waker {
    fd: Arc<OwnedFd>,
}

impl Waker {
    /// End the current (or the next) wait of the port set early.
    pub fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a valid u64 to an eventfd. The only possible failure
        // is EAGAIN when the counter is saturated, which means a wake-up is already
        // pending, so the result needs no handling.
        unsafe {
            libc::write(
                self.fd.as_raw_fd(),
                (&one as *const u64).cast(),
                std::mem::size_of::<u64>(),
            )
        };
    }
}

/// What ended a wait. All fields zero means the timeout passed (or a signal arrived);
/// the caller rechecks its own state either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaitOutcome {
    /// The wake-up handle was used since the previous wait.
    pub woken: bool,
    /// Number of ports with frames (or an error) waiting; drain them with
    /// [`PortSet::recv_next`].
    pub ready_ports: usize,
    /// Number of ports marked with [`PortSet::set_tx_pending`] whose send buffer has
    /// room again; list them with [`PortSet::writable`].
    pub writable_ports: usize,
}

struct Member {
    port: u32,
    live: LivePort,
}

/// The live ports of one switch, waited on together with poll(2).
pub struct PortSet {
    members: Vec<Member>,
    wake_fd: Arc<OwnedFd>,
    /// Entry 0 is the wake-up eventfd, entry i + 1 is member i.
    pollfds: Vec<libc::pollfd>,
    /// Member indices that were readable at the last wait, served in order.
    ready: Vec<usize>,
    next_ready: usize,
    /// Switch port numbers that were writable (and wanted to be) at the last wait.
    writable: Vec<u32>,
}

impl PortSet {
    /// An empty port set with its wake-up eventfd.
    pub fn new() -> Result<Self, PortError> {
        // SAFETY: plain eventfd(2) call; the result is checked before being wrapped.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(PortError::Wait {
                call: "eventfd",
                source: std::io::Error::last_os_error(),
            });
        }
        // SAFETY: `fd` was just returned by eventfd(2) and nobody else owns it.
        let wake_fd = Arc::new(unsafe { OwnedFd::from_raw_fd(fd) });
        let pollfds = vec![libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        }];
        Ok(PortSet {
            members: Vec::new(),
            wake_fd,
            pollfds,
            ready: Vec::new(),
            next_ready: 0,
            writable: Vec::new(),
        })
    }

    /// Add `live` as switch port number `port`.
    pub fn add(&mut self, port: u32, live: LivePort) -> Result<(), PortError> {
        if self.members.iter().any(|m| m.port == port) {
            return Err(PortError::DuplicatePort {
                port,
                iface: live.iface().to_string(),
            });
        }
        self.pollfds.push(libc::pollfd {
            fd: live.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        });
        self.members.push(Member { port, live });
        self.ready.reserve(self.members.len() - self.ready.len());
        self.writable
            .reserve(self.members.len() - self.writable.len());
        Ok(())
    }

    /// Mark whether port `port` has frames that `send` could not take (its socket's send
    /// buffer was full): while marked, waits also end when the buffer has room again.
    /// Returns false if the set has no such port.
    pub fn set_tx_pending(&mut self, port: u32, pending: bool) -> bool {
        let Some(i) = self.members.iter().position(|m| m.port == port) else {
            return false;
        };
        let pfd = &mut self.pollfds[i + 1];
        if pending {
            pfd.events |= libc::POLLOUT;
        } else {
            pfd.events &= !libc::POLLOUT;
        }
        true
    }

    /// Switch port numbers of the marked ports found writable by the last wait.
    pub fn writable(&self) -> &[u32] {
        &self.writable
    }

    /// A handle that interrupts this set's waits from another thread.
    pub fn waker(&self) -> Waker {
        Waker {
            fd: Arc::clone(&self.wake_fd),
        }
    }

    /// Number of ports in the set.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether the set has no port.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The port with switch port number `port`.
    pub fn port(&self, port: u32) -> Option<&LivePort> {
        self.members
            .iter()
            .find(|m| m.port == port)
            .map(|m| &m.live)
    }

    /// The port with switch port number `port`, to send through or read counters of.
    pub fn port_mut(&mut self, port: u32) -> Option<&mut LivePort> {
        self.members
            .iter_mut()
            .find(|m| m.port == port)
            .map(|m| &mut m.live)
    }

    /// The switch port numbers and ports, in the order they were added.
    pub fn ports(&self) -> impl Iterator<Item = (u32, &LivePort)> + '_ {
        self.members.iter().map(|m| (m.port, &m.live))
    }

    /// A batch that fits any port of the set (largest frame, largest batch).
    pub fn new_batch(&self) -> RxBatch {
        let frames = self.members.iter().map(|m| m.live.batch_frames()).max();
        let bytes = self.members.iter().map(|m| m.live.max_frame_bytes()).max();
        RxBatch::new(frames.unwrap_or(1), bytes.unwrap_or(0))
    }

    /// Wait until a port has frames, the waker is used, or `timeout_ns` passes (None:
    /// no timeout; Some(0): just look).
    pub fn wait(&mut self, timeout_ns: Option<u64>) -> Result<WaitOutcome, PortError> {
        self.ready.clear();
        self.writable.clear();
        self.next_ready = 0;
        let ts = timeout_ns.map(|ns| libc::timespec {
            tv_sec: (ns / 1_000_000_000).min(libc::time_t::MAX as u64) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        });
        let ts_ptr = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: `pollfds` is a valid array of the length passed; `ts_ptr` is null or
        // points at `ts`, alive for the call; no signal mask is changed.
        let rc = unsafe {
            libc::ppoll(
                self.pollfds.as_mut_ptr(),
                self.pollfds.len() as libc::nfds_t,
                ts_ptr,
                std::ptr::null(),
            )
        };
        if rc < 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EINTR) {
                return Ok(WaitOutcome::default());
            }
            return Err(PortError::Wait {
                call: "ppoll",
                source: err,
            });
        }
        let mut outcome = WaitOutcome::default();
        if rc == 0 {
            return Ok(outcome);
        }
        if self.pollfds[0].revents & libc::POLLIN != 0 {
            outcome.woken = true;
            let mut count: u64 = 0;
            // SAFETY: reads the eventfd's 8-byte counter into a valid u64, resetting it;
            // EAGAIN (another reader got it first) needs no handling.
            unsafe {
                libc::read(
                    self.wake_fd.as_raw_fd(),
                    (&mut count as *mut u64).cast(),
                    std::mem::size_of::<u64>(),
                )
            };
        }
        for (i, pfd) in self.pollfds[1..].iter().enumerate() {
            // POLLERR is served too: receiving reports (and counts) what went wrong.
            if pfd.revents & (libc::POLLIN | libc::POLLERR) != 0 {
                self.ready.push(i);
            }
            if pfd.events & pfd.revents & libc::POLLOUT != 0 {
                self.writable.push(self.members[i].port);
            }
        }
        outcome.ready_ports = self.ready.len();
        outcome.writable_ports = self.writable.len();
        Ok(outcome)
    }

    /// Receive one batch from the next port found ready by the last wait; returns its
    /// switch port number, or None once every ready port has been served. A port with
    /// more frames than one batch is served again after the next wait, so one busy port
    /// cannot starve the others.
    pub fn recv_next(&mut self, batch: &mut RxBatch) -> Result<Option<u32>, PortError> {
        while let Some(&i) = self.ready.get(self.next_ready) {
            self.next_ready += 1;
            let member = &mut self.members[i];
            batch.set_port(member.port);
            if member.live.recv(batch)? > 0 {
                return Ok(Some(member.port));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_set_times_out() {
        let mut set = PortSet::new().unwrap();
        assert!(set.is_empty());
        assert_eq!(set.wait(Some(0)).unwrap(), WaitOutcome::default());
        let mut batch = set.new_batch();
        assert_eq!(set.recv_next(&mut batch).unwrap(), None);
    }

    #[test]
    fn a_wake_before_the_wait_ends_it_once() {
        let mut set = PortSet::new().unwrap();
        let waker = set.waker();
        waker.wake();
        waker.wake();
        let outcome = set.wait(None).unwrap();
        assert!(outcome.woken);
        assert_eq!(outcome.ready_ports, 0);
        // Both wake-ups were folded into one: the next look finds nothing.
        assert!(!set.wait(Some(0)).unwrap().woken);
    }

    #[test]
    fn a_wake_from_another_thread_ends_an_endless_wait() {
        let mut set = PortSet::new().unwrap();
        let waker = set.waker();
        let t = std::thread::spawn(move || waker.wake());
        assert!(set.wait(None).unwrap().woken);
        t.join().unwrap();
    }
}
