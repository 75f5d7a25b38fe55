//! A veth pair in a fresh network namespace for the live-port tests, removed on drop even
//! when the test fails, and frames that say who sent them.

// Each test file uses a different subset of these helpers.
#![allow(dead_code)]

use std::fs::File;
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use bufferlab_ports::{clock, LivePort, PortConfig, PortSet};

/// EtherType of the test frames (IEEE 802 local experimental).
pub const TEST_ETHERTYPE: u16 = 0x88b5;
/// First four bytes of every test frame's source MAC (locally administered).
pub const TEST_SRC_PREFIX: [u8; 4] = [0x02, 0xb1, 0xab, 0x00];

static NEXT: AtomicU32 = AtomicU32::new(0);

/// Whether the tests may create namespaces; prints why a test is skipped when not.
pub fn root_or_skip(test: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        eprintln!("skipped {test}: needs root to create network namespaces and veth pairs");
    }
    root
}

fn run(args: &[&str]) -> Result<(), String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| format!("{}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Output of a command, for inspecting interface state.
pub fn output(args: &[&str]) -> String {
    let out = Command::new(args[0]).args(&args[1..]).output().unwrap();
    assert!(out.status.success(), "{}", args.join(" "));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Interfaces `a` and `b`, the two ends of one veth pair, up, in namespace `ns`.
pub struct VethPair {
    pub ns: String,
    pub a: String,
    pub b: String,
}

impl VethPair {
    /// Create the namespace and the pair; IPv6 is off so the kernel sends nothing by itself.
    pub fn create() -> Self {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let ns = format!("blports-{pid}-{n}");
        run(&["ip", "netns", "add", &ns]).unwrap();
        let pair = VethPair {
            a: format!("bp{}x{n}a", pid % 100_000),
            b: format!("bp{}x{n}b", pid % 100_000),
            ns,
        };
        // From here on `pair` owns the namespace: a failed step still removes it.
        pair.setup().unwrap();
        pair
    }

    fn setup(&self) -> Result<(), String> {
        let ns = self.ns.as_str();
        for key in ["all", "default"] {
            let sysctl = format!("net.ipv6.conf.{key}.disable_ipv6=1");
            run(&["ip", "netns", "exec", ns, "sysctl", "-qw", &sysctl])?;
        }
        run(&[
            "ip", "-n", ns, "link", "add", &self.a, "type", "veth", "peer", "name", &self.b,
        ])?;
        run(&["ip", "-n", ns, "link", "set", &self.a, "up"])?;
        run(&["ip", "-n", ns, "link", "set", &self.b, "up"])?;
        self.wait_active(&self.a)?;
        self.wait_active(&self.b)
    }

    /// Wait until `iface` carries frames. Linux attaches a device's qdisc only when its
    /// link watcher sees the carrier, a moment after `link set up`; until then the `noop`
    /// qdisc drops whatever a test sends (CI lost both frames of a test so).
    fn wait_active(&self, iface: &str) -> Result<(), String> {
        let give_up = clock::monotonic_ns() + 5_000_000_000;
        loop {
            let text = output(&["ip", "-n", &self.ns, "link", "show", iface]);
            if text.contains("state UP") && !text.contains("qdisc noop") {
                return Ok(());
            }
            if clock::monotonic_ns() > give_up {
                return Err(format!("{iface} not active after 5 s: {text}"));
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    /// Set the MTU (bytes) of both ends.
    pub fn set_mtu(&self, mtu: usize) {
        let mtu = mtu.to_string();
        for iface in [&self.a, &self.b] {
            run(&["ip", "-n", &self.ns, "link", "set", iface, "mtu", &mtu]).unwrap();
        }
    }

    /// Bring `iface` up or down.
    pub fn set_up(&self, iface: &str, up: bool) {
        let state = if up { "up" } else { "down" };
        run(&["ip", "-n", &self.ns, "link", "set", iface, state]).unwrap();
    }

    /// Run `tc ARGS...` inside the namespace.
    pub fn tc(&self, args: &[&str]) {
        let mut cmd = vec!["ip", "netns", "exec", &self.ns, "tc"];
        cmd.extend_from_slice(args);
        run(&cmd).unwrap();
    }

    /// The `promiscuity` count the kernel reports for `iface`.
    pub fn promiscuity(&self, iface: &str) -> u32 {
        let text = output(&["ip", "-n", &self.ns, "-d", "link", "show", iface]);
        let mut words = text.split_whitespace();
        while let Some(w) = words.next() {
            if w == "promiscuity" {
                return words.next().unwrap().parse().unwrap();
            }
        }
        panic!("no promiscuity in: {text}");
    }

    /// Open `iface` of this namespace as a live port with the default configuration.
    pub fn open(&self, iface: &str) -> LivePort {
        self.open_with(iface, &PortConfig::default())
    }

    /// Open `iface` of this namespace as a live port.
    pub fn open_with(&self, iface: &str, config: &PortConfig) -> LivePort {
        // A socket belongs to the namespace it is created in: enter it on this thread only,
        // open, and come back.
        let target = File::open(format!("/run/netns/{}", self.ns)).unwrap();
        let home = File::open("/proc/thread-self/ns/net").unwrap();
        // SAFETY: setns on a namespace fd changes only the calling thread's namespace.
        assert_eq!(
            unsafe { libc::setns(target.as_raw_fd(), libc::CLONE_NEWNET) },
            0
        );
        let opened = LivePort::open(iface, config);
        // SAFETY: as above, back to the thread's original namespace.
        assert_eq!(
            unsafe { libc::setns(home.as_raw_fd(), libc::CLONE_NEWNET) },
            0
        );
        opened.unwrap()
    }
}

impl Drop for VethPair {
    fn drop(&mut self) {
        // Deleting the namespace deletes the veth pair inside it.
        if let Err(e) = run(&["ip", "netns", "del", &self.ns]) {
            eprintln!("cleanup: {e}");
        }
    }
}

/// A test frame of `len` bytes from sender `from`: its sequence number after the
/// EtherType, then a pattern that depends on both.
pub fn frame(from: u8, seq: u32, len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[0..6].copy_from_slice(&[0x02, 0xb1, 0xab, 0xff, 0xff, 0xff]);
    f[6..10].copy_from_slice(&TEST_SRC_PREFIX);
    f[11] = from;
    f[12..14].copy_from_slice(&TEST_ETHERTYPE.to_be_bytes());
    f[14..18].copy_from_slice(&seq.to_be_bytes());
    for (i, byte) in f.iter_mut().enumerate().skip(18) {
        *byte = (i as u32).wrapping_mul(31).wrapping_add(seq) as u8;
    }
    f
}

/// A frame received by a test: the switch port number, its bytes and kernel timestamp.
#[derive(Debug)]
pub struct Got {
    pub port: u32,
    pub bytes: Vec<u8>,
    pub kernel_ns: Option<u64>,
    /// Frames in the batch it came in.
    pub batch_len: usize,
}

/// Receive test frames through `set` until `want` have come or 5 s have passed (a bound
/// so a broken port fails the test instead of hanging it; never a speed assertion).
pub fn receive(set: &mut PortSet, want: usize) -> Vec<Got> {
    let give_up = clock::monotonic_ns() + 5_000_000_000;
    let mut batch = set.new_batch();
    let mut got = Vec::new();
    while got.len() < want && clock::monotonic_ns() < give_up {
        set.wait(Some(100_000_000)).unwrap();
        while let Some(port) = set.recv_next(&mut batch).unwrap() {
            assert_eq!(batch.port(), port);
            for f in batch.iter() {
                if f.bytes.len() >= 12 && f.bytes[6..10] == TEST_SRC_PREFIX {
                    got.push(Got {
                        port,
                        bytes: f.bytes.to_vec(),
                        kernel_ns: f.kernel_ns,
                        batch_len: batch.len(),
                    });
                }
            }
        }
    }
    got
}
