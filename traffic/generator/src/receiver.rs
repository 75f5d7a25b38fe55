//! UDP receiver: recvmmsg in batches, kernel software RX timestamps (SO_TIMESTAMPING) and
//! the TOS byte of every frame, one record per frame that carries a data header.
//!
//! SO_TIMESTAMPING rather than SO_TIMESTAMPNS: when the kernel took no stamp on arrival
//! (it turns RX stamping on in deferred work after the first timestamping socket opens),
//! SO_TIMESTAMPNS silently substitutes the time of the read; SO_TIMESTAMPING says nothing,
//! so such frames are flagged instead of passing a late stamp off as a kernel one.

use std::io;
use std::net::SocketAddrV4;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::clock::{monotonic_ns, realtime_ns, timespec_ns};
use crate::header::{frame_size_of_payload, udp_payload_len, DataHeader, MAX_FRAME};
use crate::netns::socket_in;
use crate::sockopt::{bind, for_each_cmsg, set_buffer, set_int};

/// One received frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxRecord {
    /// Sender's CLOCK_REALTIME from the data header, ns.
    pub tx_ns: u64,
    /// RX time (CLOCK_REALTIME), ns: the kernel's stamp if `rx_kernel`, else read time.
    pub rx_ns: u64,
    /// Sequence number from the data header.
    pub seq: u32,
    /// Flow id from the data header.
    pub flow: u16,
    /// Frame size incl. FCS, bytes.
    pub size: u16,
    /// IPv4 TOS byte as received.
    pub tos: u8,
    /// True if `rx_ns` is the kernel's software RX timestamp.
    pub rx_kernel: bool,
}

/// When a receive run ends (besides the stop flag).
#[derive(Debug, Clone, Copy, Default)]
pub struct RxLimits {
    /// Stop after exactly this many data frames.
    pub max_frames: Option<u64>,
    /// Stop when no frame arrived for this long, ns.
    pub idle_timeout_ns: Option<u64>,
    /// Stop when CLOCK_MONOTONIC reaches this, ns.
    pub deadline_mono_ns: Option<u64>,
}

/// What a receive run collected.
#[derive(Debug, Clone, Default)]
pub struct RxReport {
    /// Data frames in arrival order.
    pub records: Vec<RxRecord>,
    /// Datagrams without a data header (counted, not recorded).
    pub foreign: u64,
    /// Datagrams longer than the largest frame (cut, counted, not recorded).
    pub truncated: u64,
    /// Frames that came without a kernel timestamp (their rx_ns is the read time).
    pub no_kernel_timestamp: u64,
}

/// A bound UDP socket that timestamps what it receives.
#[derive(Debug)]
pub struct Receiver {
    fd: OwnedFd,
    batch: usize,
}

const CONTROL_WORDS: usize = 16;
const POLL_TIMEOUT_US: libc::suseconds_t = 20_000;
const STAMPING_SETTLE_MS: u64 = 50;

impl Receiver {
    /// Bind a UDP socket to `bind_addr` inside `netns` with a `rcvbuf_bytes` receive buffer.
    pub fn open(
        netns: Option<&str>,
        bind_addr: SocketAddrV4,
        rcvbuf_bytes: usize,
        batch: usize,
    ) -> io::Result<Receiver> {
        let fd = socket_in(netns, libc::SOCK_DGRAM)?;
        set_buffer(
            &fd,
            libc::SO_RCVBUFFORCE,
            libc::SO_RCVBUF,
            rcvbuf_bytes,
            "SO_RCVBUF",
        )?;
        let flags = libc::SOF_TIMESTAMPING_RX_SOFTWARE | libc::SOF_TIMESTAMPING_SOFTWARE;
        set_int(
            &fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPING,
            flags as libc::c_int,
            "SO_TIMESTAMPING",
        )?;
        set_int(&fd, libc::IPPROTO_IP, libc::IP_RECVTOS, 1, "IP_RECVTOS")?;
        // A bounded wait lets the loop notice the stop flag and its limits.
        let tv = libc::timeval {
            tv_sec: 0,
            tv_usec: POLL_TIMEOUT_US,
        };
        // SAFETY: SO_RCVTIMEO takes a timeval of the size passed.
        let rc = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&tv as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        bind(&fd, &bind_addr)?;
        // The kernel switches RX stamping on in deferred work when the first socket asks;
        // waiting here means frames sent once open() returns get kernel stamps.
        std::thread::sleep(std::time::Duration::from_millis(STAMPING_SETTLE_MS));
        Ok(Receiver {
            fd,
            batch: batch.clamp(1, 1024),
        })
    }

    /// The UDP port the socket is bound to (useful after binding port 0).
    pub fn local_port(&self) -> io::Result<u16> {
        // SAFETY: all-zero sockaddr_in is valid; getsockname fills at most `len` bytes.
        let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let rc = unsafe {
            libc::getsockname(
                self.fd.as_raw_fd(),
                (&mut sa as *mut libc::sockaddr_in).cast(),
                &mut len,
            )
        };
        if rc == 0 {
            Ok(u16::from_be(sa.sin_port))
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// Receive until `stop` is set or a limit is reached.
    pub fn run(&self, stop: &AtomicBool, limits: RxLimits) -> io::Result<RxReport> {
        // One spare byte per slot tells an oversized datagram from a maximal one.
        let slot_len = udp_payload_len(MAX_FRAME) + 1;
        let mut buffers = vec![0u8; self.batch * slot_len];
        let mut controls = vec![[0u64; CONTROL_WORDS]; self.batch];
        // SAFETY: all-zero iovec/mmsghdr are valid; pointers are set before each call.
        let mut iovecs: Vec<libc::iovec> = vec![unsafe { std::mem::zeroed() }; self.batch];
        let mut msgs: Vec<libc::mmsghdr> = vec![unsafe { std::mem::zeroed() }; self.batch];
        let mut report = RxReport::default();
        // Room up front for a typical run (at most 32 MB) so the loop rarely reallocates.
        report
            .records
            .reserve(limits.max_frames.unwrap_or(1 << 16).min(1 << 20) as usize);
        let mut last_activity = monotonic_ns();

        loop {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let now = monotonic_ns();
            if limits.deadline_mono_ns.is_some_and(|d| now >= d)
                || limits
                    .idle_timeout_ns
                    .is_some_and(|idle| now.saturating_sub(last_activity) >= idle)
                || limits
                    .max_frames
                    .is_some_and(|m| report.records.len() as u64 >= m)
            {
                break;
            }
            for i in 0..self.batch {
                iovecs[i] = libc::iovec {
                    iov_base: buffers[i * slot_len..].as_mut_ptr().cast(),
                    iov_len: slot_len,
                };
                let hdr = &mut msgs[i].msg_hdr;
                hdr.msg_name = std::ptr::null_mut();
                hdr.msg_namelen = 0;
                hdr.msg_iov = &mut iovecs[i];
                hdr.msg_iovlen = 1;
                hdr.msg_control = controls[i].as_mut_ptr().cast();
                hdr.msg_controllen = CONTROL_WORDS * 8;
                hdr.msg_flags = 0;
            }
            // Never read past max_frames: what stays queued belongs to whoever reads next.
            let want = limits.max_frames.map_or(self.batch, |m| {
                (m - report.records.len() as u64).min(self.batch as u64) as usize
            });
            // SAFETY: every message points at buffers that live through the call.
            let rc = unsafe {
                libc::recvmmsg(
                    self.fd.as_raw_fd(),
                    msgs.as_mut_ptr(),
                    want as libc::c_uint,
                    libc::MSG_WAITFORONE,
                    std::ptr::null_mut(),
                )
            };
            if rc < 0 {
                let err = io::Error::last_os_error();
                match err.raw_os_error() {
                    Some(libc::EAGAIN) | Some(libc::EINTR) => continue,
                    _ => return Err(io::Error::new(err.kind(), format!("recvmmsg: {err}"))),
                }
            }
            last_activity = monotonic_ns();
            for i in 0..rc as usize {
                let msg = &msgs[i];
                let len = msg.msg_len as usize;
                if len == slot_len || msg.msg_hdr.msg_flags & libc::MSG_TRUNC != 0 {
                    report.truncated += 1;
                    continue;
                }
                let payload = &buffers[i * slot_len..i * slot_len + len];
                let Some(header) = DataHeader::parse(payload) else {
                    report.foreign += 1;
                    continue;
                };
                let mut rx_ns = None;
                let mut tos = 0u8;
                for_each_cmsg(&msg.msg_hdr, |level, kind, data| {
                    if level == libc::SOL_SOCKET && kind == libc::SCM_TIMESTAMPING {
                        // SAFETY: SCM_TIMESTAMPING carries three timespecs; [0] is software.
                        let ts: [libc::timespec; 3] =
                            unsafe { std::ptr::read_unaligned(data.cast()) };
                        let ns = timespec_ns(&ts[0]);
                        if ns != 0 {
                            rx_ns = Some(ns);
                        }
                    } else if level == libc::IPPROTO_IP && kind == libc::IP_TOS {
                        // SAFETY: IP_TOS carries one byte.
                        tos = unsafe { *data };
                    }
                });
                let rx_kernel = rx_ns.is_some();
                let rx_ns = rx_ns.unwrap_or_else(|| {
                    report.no_kernel_timestamp += 1;
                    realtime_ns()
                });
                report.records.push(RxRecord {
                    tx_ns: header.tx_ns,
                    rx_ns,
                    seq: header.seq,
                    flow: header.flow,
                    size: frame_size_of_payload(len) as u16,
                    tos,
                    rx_kernel,
                });
            }
        }
        Ok(report)
    }
}
