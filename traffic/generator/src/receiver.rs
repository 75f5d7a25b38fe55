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
use std::sync::atomic::{AtomicU64, Ordering};

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

    /// Receive until `stop` is requested or a limit is reached.
    ///
    /// The run ends when this thread looks, which a loaded machine can put well after the
    /// stop request or the deadline: frames already queued then are read before it ends,
    /// and those the kernel stamped by the end are kept, so what arrived in time is never
    /// lost to a late look. Past the idle time, anything still queued means the sender was
    /// not idle after all, and the run goes on.
    pub fn run(&self, stop: &StopSignal, limits: RxLimits) -> io::Result<RxReport> {
        let mut batch = Batch::new(self.batch);
        let mut report = RxReport::default();
        // Room up front for a typical run (at most 32 MB) so the loop rarely reallocates.
        report
            .records
            .reserve(limits.max_frames.unwrap_or(1 << 16).min(1 << 20) as usize);
        let mut last_activity = monotonic_ns();
        // Kernel stamps are CLOCK_REALTIME: the deadline on that clock.
        let real_minus_mono = realtime_ns().saturating_sub(monotonic_ns());
        let deadline_real_ns = limits.deadline_mono_ns.map(|d| d + real_minus_mono);

        loop {
            let want = self.want(&limits, &report);
            // Never read past max_frames: what stays queued belongs to whoever reads next.
            if want == 0 {
                break;
            }
            let now = monotonic_ns();
            let end_real_ns = match (stop.requested_at(), limits.deadline_mono_ns) {
                (Some(at), _) => Some(at),
                (None, Some(d)) if now >= d => deadline_real_ns,
                _ => None,
            };
            if let Some(end) = end_real_ns {
                self.drain(&mut batch, &limits, &mut report, Some(end))?;
                break;
            }
            if limits
                .idle_timeout_ns
                .is_some_and(|idle| now.saturating_sub(last_activity) >= idle)
            {
                if self.drain(&mut batch, &limits, &mut report, None)? == 0 {
                    break;
                }
                last_activity = monotonic_ns();
                continue;
            }
            let (got, _) = batch.read(&self.fd, want, libc::MSG_WAITFORONE, &mut report, None)?;
            if got > 0 {
                last_activity = monotonic_ns();
            }
        }
        Ok(report)
    }

    /// Datagrams the next read may take: a batch, or fewer where max_frames ends the run.
    fn want(&self, limits: &RxLimits, report: &RxReport) -> usize {
        limits.max_frames.map_or(self.batch, |m| {
            (m.saturating_sub(report.records.len() as u64)).min(self.batch as u64) as usize
        })
    }

    /// Read what is queued now without waiting, up to max_frames; records of frames the
    /// kernel stamped after `until_real_ns` are dropped, and the first of them ends the
    /// reading (the rest came later still). Returns the datagrams read.
    fn drain(
        &self,
        batch: &mut Batch,
        limits: &RxLimits,
        report: &mut RxReport,
        until_real_ns: Option<u64>,
    ) -> io::Result<usize> {
        let mut total = 0;
        loop {
            let want = self.want(limits, report);
            if want == 0 {
                return Ok(total);
            }
            let (got, past_end) =
                batch.read(&self.fd, want, libc::MSG_DONTWAIT, report, until_real_ns)?;
            total += got;
            // A short batch emptied the queue.
            if got < want || past_end {
                return Ok(total);
            }
        }
    }
}

/// A request to end a receive run, with the time it was made.
#[derive(Debug, Default)]
pub struct StopSignal {
    /// CLOCK_REALTIME ns of the request; 0 while none is pending.
    at_real_ns: AtomicU64,
}

impl StopSignal {
    /// No stop requested yet.
    pub fn new() -> StopSignal {
        StopSignal::default()
    }

    /// Ask the run to end: frames the kernel stamps from now on are not part of it.
    pub fn request(&self) {
        self.at_real_ns
            .store(realtime_ns().max(1), Ordering::Relaxed);
    }

    /// Withdraw a request (before a new run starts).
    pub fn clear(&self) {
        self.at_real_ns.store(0, Ordering::Relaxed);
    }

    /// When the stop was requested (CLOCK_REALTIME ns), if it was.
    pub fn requested_at(&self) -> Option<u64> {
        match self.at_real_ns.load(Ordering::Relaxed) {
            0 => None,
            at => Some(at),
        }
    }
}

/// recvmmsg's buffers for one batch of datagrams.
struct Batch {
    slot_len: usize,
    buffers: Vec<u8>,
    controls: Vec<[u64; CONTROL_WORDS]>,
    iovecs: Vec<libc::iovec>,
    msgs: Vec<libc::mmsghdr>,
}

impl Batch {
    /// Room for `size` datagrams of the largest frame.
    fn new(size: usize) -> Batch {
        // One spare byte per slot tells an oversized datagram from a maximal one.
        let slot_len = udp_payload_len(MAX_FRAME) + 1;
        Batch {
            slot_len,
            buffers: vec![0u8; size * slot_len],
            controls: vec![[0u64; CONTROL_WORDS]; size],
            // SAFETY: all-zero iovec/mmsghdr are valid; pointers are set before each call.
            iovecs: vec![unsafe { std::mem::zeroed() }; size],
            msgs: vec![unsafe { std::mem::zeroed() }; size],
        }
    }

    /// One recvmmsg of up to `want` datagrams with `flags`, each data frame recorded unless
    /// the kernel stamped it after `until_real_ns`; the datagrams read (0 if none came) and
    /// whether one was stamped after `until_real_ns`.
    fn read(
        &mut self,
        fd: &OwnedFd,
        want: usize,
        flags: libc::c_int,
        report: &mut RxReport,
        until_real_ns: Option<u64>,
    ) -> io::Result<(usize, bool)> {
        let slot_len = self.slot_len;
        for i in 0..want {
            self.iovecs[i] = libc::iovec {
                iov_base: self.buffers[i * slot_len..].as_mut_ptr().cast(),
                iov_len: slot_len,
            };
            let hdr = &mut self.msgs[i].msg_hdr;
            hdr.msg_name = std::ptr::null_mut();
            hdr.msg_namelen = 0;
            hdr.msg_iov = &mut self.iovecs[i];
            hdr.msg_iovlen = 1;
            hdr.msg_control = self.controls[i].as_mut_ptr().cast();
            hdr.msg_controllen = CONTROL_WORDS * 8;
            hdr.msg_flags = 0;
        }
        // SAFETY: every message points at buffers that live through the call.
        let rc = unsafe {
            libc::recvmmsg(
                fd.as_raw_fd(),
                self.msgs.as_mut_ptr(),
                want as libc::c_uint,
                flags,
                std::ptr::null_mut(),
            )
        };
        if rc < 0 {
            let err = io::Error::last_os_error();
            return match err.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::EINTR) => Ok((0, false)),
                _ => Err(io::Error::new(err.kind(), format!("recvmmsg: {err}"))),
            };
        }
        let mut past_end = false;
        for i in 0..rc as usize {
            let msg = &self.msgs[i];
            let len = msg.msg_len as usize;
            if len == slot_len || msg.msg_hdr.msg_flags & libc::MSG_TRUNC != 0 {
                report.truncated += 1;
                continue;
            }
            let payload = &self.buffers[i * slot_len..i * slot_len + len];
            let Some(header) = DataHeader::parse(payload) else {
                report.foreign += 1;
                continue;
            };
            let mut rx_ns = None;
            let mut tos = 0u8;
            for_each_cmsg(&msg.msg_hdr, |level, kind, data| {
                if level == libc::SOL_SOCKET && kind == libc::SCM_TIMESTAMPING {
                    // SAFETY: SCM_TIMESTAMPING carries three timespecs; [0] is software.
                    let ts: [libc::timespec; 3] = unsafe { std::ptr::read_unaligned(data.cast()) };
                    let ns = timespec_ns(&ts[0]);
                    if ns != 0 {
                        rx_ns = Some(ns);
                    }
                } else if level == libc::IPPROTO_IP && kind == libc::IP_TOS {
                    // SAFETY: IP_TOS carries one byte.
                    tos = unsafe { *data };
                }
            });
            if rx_ns.zip(until_real_ns).is_some_and(|(rx, end)| rx > end) {
                past_end = true;
                continue;
            }
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
        Ok((rc as usize, past_end))
    }
}
