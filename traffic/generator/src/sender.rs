//! Paced UDP sender: departures from a [`Schedule`], batched with sendmmsg, data header in
//! every frame, optional kernel software TX timestamps read back from the error queue.

use std::io;
use std::net::SocketAddrV4;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::clock::{monotonic_ns, realtime_ns, timespec_ns, wait_until};
use crate::header::{udp_payload_len, wire_bits, DataHeader, MAX_FRAME};
use crate::netns::socket_in;
use crate::schedule::{Departure, Schedule};
use crate::sockopt::{bind, for_each_cmsg, set_buffer, set_int, sockaddr};

/// Where and how to send; the schedule says when and how big.
#[derive(Debug, Clone)]
pub struct SendConfig {
    /// Destination address and UDP port.
    pub dst: SocketAddrV4,
    /// Local address and UDP port to bind (port 0 = any).
    pub src: Option<SocketAddrV4>,
    /// IPv4 TOS byte (DSCP << 2 | ECN).
    pub tos: u8,
    /// Flow id written in every data header.
    pub flow: u16,
    /// Sequence number of the first frame.
    pub first_seq: u32,
    /// Network namespace (name or path) to send from.
    pub netns: Option<String>,
    /// Stop after this many frames.
    pub count: Option<u64>,
    /// Stop before the first departure at or after this offset, ns.
    pub duration_ns: Option<u64>,
    /// CLOCK_REALTIME (ns) of the first departure; None = now.
    pub start_realtime_ns: Option<u64>,
    /// Collect kernel software TX timestamps.
    pub tx_timestamps: bool,
    /// Most frames handed to one sendmmsg call.
    pub batch: usize,
    /// Spin (rather than sleep) for the last `spin_ns` before a departure.
    pub spin_ns: u64,
    /// Run the sending thread SCHED_FIFO at this priority for the run.
    pub realtime_priority: Option<i32>,
}

/// Kernel software TX timestamp of one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxStamp {
    /// Sequence number of the frame.
    pub seq: u32,
    /// CLOCK_REALTIME when the driver took the frame, ns.
    pub kernel_ns: u64,
}

/// What a run did.
#[derive(Debug, Clone, Default)]
pub struct SendReport {
    /// Frames the kernel accepted.
    pub sent: u64,
    /// Line bits of the accepted frames (frame incl. FCS + 20 B preamble/gap each).
    pub wire_bits: f64,
    /// CLOCK_REALTIME of the first departure, ns.
    pub start_realtime_ns: u64,
    /// CLOCK_MONOTONIC time from the first to the last sendmmsg call, ns.
    pub span_ns: u64,
    /// Line bit/s achieved between first and last departure (n frames span n-1 gaps).
    pub rate_bps: f64,
    /// sendmmsg calls repeated after ENOBUFS/EAGAIN or a reported ICMP error.
    pub retries: u64,
    /// Largest delay of a batch behind its scheduled departure, ns.
    pub max_late_ns: u64,
    /// Kernel TX timestamps (empty unless asked for).
    pub tx_stamps: Vec<TxStamp>,
    /// How the TX timestamps were matched to frames.
    pub stamp_ids: Option<StampIds>,
}

/// SCM_TS_OPT_ID (asm-generic/socket.h, Linux >= 6.13): a control message that sets the id
/// the kernel reports with the frame's TX timestamp. libc does not define it yet.
const SCM_TS_OPT_ID: libc::c_int = 81;

/// How TX timestamp ids map to sequence numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StampIds {
    /// Each frame carried its sequence number as SCM_TS_OPT_ID: exact.
    Explicit,
    /// Older kernels count datagrams from 0; a datagram the kernel drops after numbering it
    /// (ENOBUFS, then retried) shifts later ids, so stamps after a retry may be misattributed.
    Counter,
}

/// Open the sending socket with every option the run needs.
fn open_socket(cfg: &SendConfig) -> io::Result<OwnedFd> {
    let fd = socket_in(cfg.netns.as_deref(), libc::SOCK_DGRAM)?;
    set_int(
        &fd,
        libc::IPPROTO_IP,
        libc::IP_TOS,
        cfg.tos.into(),
        "IP_TOS",
    )?;
    // The data-header contract says UDP checksum 0; the kernel skips it with SO_NO_CHECK.
    set_int(&fd, libc::SOL_SOCKET, libc::SO_NO_CHECK, 1, "SO_NO_CHECK")?;
    // Oversized frames must fail loudly, not leave as IP fragments.
    set_int(
        &fd,
        libc::IPPROTO_IP,
        libc::IP_MTU_DISCOVER,
        libc::IP_PMTUDISC_DO,
        "IP_MTU_DISCOVER",
    )?;
    // Without IP_RECVERR the kernel reports a local drop (ENOBUFS) as success.
    set_int(&fd, libc::IPPROTO_IP, libc::IP_RECVERR, 1, "IP_RECVERR")?;
    set_buffer(
        &fd,
        libc::SO_SNDBUFFORCE,
        libc::SO_SNDBUF,
        8 << 20,
        "SO_SNDBUF",
    )?;
    if cfg.tx_timestamps {
        // The error queue holds the timestamps until read; make room for bursts of them.
        set_buffer(
            &fd,
            libc::SO_RCVBUFFORCE,
            libc::SO_RCVBUF,
            16 << 20,
            "SO_RCVBUF",
        )?;
        let flags = libc::SOF_TIMESTAMPING_TX_SOFTWARE
            | libc::SOF_TIMESTAMPING_SOFTWARE
            | libc::SOF_TIMESTAMPING_OPT_ID
            | libc::SOF_TIMESTAMPING_OPT_TSONLY;
        set_int(
            &fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPING,
            flags as libc::c_int,
            "SO_TIMESTAMPING",
        )?;
    }
    if let Some(src) = &cfg.src {
        bind(&fd, src)?;
    }
    Ok(fd)
}

/// Move every queued TX timestamp from the error queue into `out`.
///
/// With explicit ids the id is the sequence number; with the kernel's counter the id plus
/// the first sequence number is.
fn drain_tx_stamps(fd: &OwnedFd, ids: StampIds, first_seq: u32, out: &mut Vec<TxStamp>) {
    let mut control = [0u64; 64];
    loop {
        // SAFETY: an all-zero msghdr is valid; only control is set, to a buffer we own.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control);
        // SAFETY: msg points to valid buffers for the duration of the call.
        let rc = unsafe {
            libc::recvmsg(
                fd.as_raw_fd(),
                &mut msg,
                libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT,
            )
        };
        if rc < 0 {
            return;
        }
        let mut stamp = None;
        let mut id = None;
        for_each_cmsg(&msg, |level, kind, data| {
            if level == libc::SOL_SOCKET && kind == libc::SCM_TIMESTAMPING {
                // SAFETY: SCM_TIMESTAMPING carries three timespecs; [0] is the software one.
                let ts: [libc::timespec; 3] = unsafe { std::ptr::read_unaligned(data.cast()) };
                stamp = Some(timespec_ns(&ts[0]));
            } else if level == libc::SOL_IP && kind == libc::IP_RECVERR {
                // SAFETY: IP_RECVERR carries a sock_extended_err.
                let err: libc::sock_extended_err = unsafe { std::ptr::read_unaligned(data.cast()) };
                if err.ee_origin == libc::SO_EE_ORIGIN_TIMESTAMPING {
                    id = Some(err.ee_data);
                }
            }
        });
        if let (Some(kernel_ns), Some(id)) = (stamp, id) {
            out.push(TxStamp {
                seq: match ids {
                    StampIds::Explicit => id,
                    StampIds::Counter => first_seq.wrapping_add(id),
                },
                kernel_ns,
            });
        }
    }
}

/// True for errors after which the same frames may be handed to the kernel again.
fn is_transient(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc::ENOBUFS) | Some(libc::EAGAIN) | Some(libc::EINTR)
    )
}

/// Consecutive ICMP-reported send errors tolerated before the run fails.
const MAX_ICMP_REPORTS_IN_A_ROW: u32 = 3;

/// True for errors an earlier ICMP message left on the socket: reported once, then cleared.
fn is_icmp_report(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc::ECONNREFUSED) | Some(libc::EHOSTUNREACH) | Some(libc::ENETUNREACH)
    )
}

/// Send frames following `schedule` until the count or duration is reached or `stop` is set.
pub fn run(cfg: &SendConfig, mut schedule: Schedule, stop: &AtomicBool) -> io::Result<SendReport> {
    if cfg.count.is_none() && cfg.duration_ns.is_none() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "give a frame count or a duration",
        ));
    }
    let batch = cfg.batch.clamp(1, 1024);
    let fd = open_socket(cfg)?;
    let _realtime = cfg
        .realtime_priority
        .map(crate::realtime::RealtimeGuard::enter)
        .transpose()?;
    // Pacing precision matters more than power here; failure only costs precision.
    let _ = crate::clock::tighten_timer_slack();

    let slot_len = udp_payload_len(MAX_FRAME);
    let mut buffers = vec![0u8; batch * slot_len];
    let dst = sockaddr(&cfg.dst);
    // SAFETY: all-zero iovec/mmsghdr are valid; pointers are filled in before each call.
    let mut iovecs: Vec<libc::iovec> = vec![unsafe { std::mem::zeroed() }; batch];
    let mut msgs: Vec<libc::mmsghdr> = vec![unsafe { std::mem::zeroed() }; batch];
    // One SCM_TS_OPT_ID control message per slot; u64 words keep it aligned for cmsghdr.
    let mut controls = vec![[0u64; 4]; batch];
    // SAFETY: CMSG_SPACE/CMSG_LEN are pure size computations.
    let (control_space, control_len) =
        unsafe { (libc::CMSG_SPACE(4) as usize, libc::CMSG_LEN(4) as usize) };
    let mut stamp_ids = cfg.tx_timestamps.then_some(StampIds::Explicit);
    let mut sizes = vec![0usize; batch];

    let mut report = SendReport::default();
    if cfg.tx_timestamps {
        // Room up front for a typical run (at most 16 MB) so the loop rarely reallocates.
        let expected = cfg.count.unwrap_or(1 << 16).min(1 << 20) as usize;
        report.tx_stamps.reserve(expected);
    }

    let (t0_mono, t0_real) = {
        let (mono, real) = (monotonic_ns(), realtime_ns());
        match cfg.start_realtime_ns {
            Some(start) if start > real => (mono + (start - real), start),
            _ => (mono, real),
        }
    };
    report.start_realtime_ns = t0_real;

    let within_limits = |d: &Departure, planned: u64| {
        cfg.count.is_none_or(|c| planned < c)
            && cfg
                .duration_ns
                .is_none_or(|limit| (d.offset_ns as u64) < limit)
    };
    let mut planned: u64 = 0;
    let mut next = schedule.next().filter(|d| within_limits(d, planned));
    let mut seq = cfg.first_seq;
    let mut first_send_mono = None;
    let mut last_send_mono = 0u64;
    let mut last_frame_bits = 0.0;

    // Back-to-back schedules plan every frame for offset 0, so their duration is measured
    // on the clock: such a run never outlives it. A paced run is bounded by its plan
    // instead: a thread held back near the end catches up on the frames due before the
    // limit, as it does mid-run, so a trial's frame count does not depend on the machine.
    let paced = schedule.is_paced();
    let out_of_time = |now: u64| {
        !paced
            && cfg
                .duration_ns
                .is_some_and(|limit| now.saturating_sub(t0_mono) >= limit)
    };
    while let Some(departure) = next {
        if stop.load(Ordering::Relaxed) || out_of_time(monotonic_ns()) {
            break;
        }
        let deadline = t0_mono + departure.offset_ns as u64;
        wait_until(deadline, cfg.spin_ns);
        let now = monotonic_ns();
        report.max_late_ns = report.max_late_ns.max(now - deadline);

        // Everything already due goes in this batch: catching up keeps the mean rate.
        let mut n = 0;
        let mut pending = Some(departure);
        while let Some(d) = pending {
            if n == batch || t0_mono + d.offset_ns as u64 > now {
                break;
            }
            sizes[n] = d.frame_size;
            n += 1;
            planned += 1;
            pending = schedule.next().filter(|d| within_limits(d, planned));
        }
        next = pending;

        let tx_ns = realtime_ns();
        for i in 0..n {
            let slot = &mut buffers[i * slot_len..(i + 1) * slot_len];
            DataHeader {
                flow: cfg.flow,
                seq: seq.wrapping_add(i as u32),
                tx_ns,
            }
            .write(slot);
            iovecs[i] = libc::iovec {
                iov_base: slot.as_mut_ptr().cast(),
                iov_len: udp_payload_len(sizes[i]),
            };
            let hdr = &mut msgs[i].msg_hdr;
            hdr.msg_name = (&dst as *const libc::sockaddr_in).cast_mut().cast();
            hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            hdr.msg_iov = &mut iovecs[i];
            hdr.msg_iovlen = 1;
            if stamp_ids == Some(StampIds::Explicit) {
                let control = controls[i].as_mut_ptr().cast::<libc::cmsghdr>();
                // SAFETY: `controls[i]` is 32 aligned bytes, room for CMSG_SPACE(4) = 24.
                unsafe {
                    (*control).cmsg_len = control_len as _;
                    (*control).cmsg_level = libc::SOL_SOCKET;
                    (*control).cmsg_type = SCM_TS_OPT_ID;
                    std::ptr::write_unaligned(
                        libc::CMSG_DATA(control).cast::<u32>(),
                        seq.wrapping_add(i as u32),
                    );
                }
                hdr.msg_control = control.cast();
                hdr.msg_controllen = control_space as _;
            }
        }

        let mut done = 0;
        let mut icmp_reports_in_a_row = 0;
        while done < n {
            // SAFETY: msgs[done..n] point at live iovecs, buffers and the destination address.
            let rc = unsafe {
                libc::sendmmsg(
                    fd.as_raw_fd(),
                    msgs[done..].as_mut_ptr(),
                    (n - done) as libc::c_uint,
                    0,
                )
            };
            if rc >= 0 {
                done += rc as usize;
                icmp_reports_in_a_row = 0;
                continue;
            }
            let err = io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EINVAL)
                && stamp_ids == Some(StampIds::Explicit)
                && report.sent == 0
                && done == 0
            {
                // A kernel before 6.13 refuses SCM_TS_OPT_ID: fall back to its counter.
                stamp_ids = Some(StampIds::Counter);
                for m in &mut msgs[..n] {
                    m.msg_hdr.msg_control = std::ptr::null_mut();
                    m.msg_hdr.msg_controllen = 0;
                }
            } else if is_transient(&err) {
                report.retries += 1;
                // Let a local qdisc or backlog drain before offering the frame again.
                std::thread::sleep(std::time::Duration::from_micros(20));
            } else if is_icmp_report(&err) && icmp_reports_in_a_row < MAX_ICMP_REPORTS_IN_A_ROW {
                // Each ICMP error (e.g. port unreachable) fails one send; a few in a row
                // without progress mean the route itself is gone.
                report.retries += 1;
                icmp_reports_in_a_row += 1;
            } else {
                return Err(io::Error::new(
                    err.kind(),
                    format!("sendmmsg to {}: {err}", cfg.dst),
                ));
            }
        }
        let send_mono = monotonic_ns();
        first_send_mono.get_or_insert(send_mono);
        last_send_mono = send_mono;
        for &size in &sizes[..n] {
            report.wire_bits += wire_bits(size);
            last_frame_bits = wire_bits(size);
        }
        report.sent += n as u64;
        seq = seq.wrapping_add(n as u32);
        if let Some(ids) = stamp_ids {
            drain_tx_stamps(&fd, ids, cfg.first_seq, &mut report.tx_stamps);
        }
    }
    if let Some(ids) = stamp_ids {
        drain_tx_stamps(&fd, ids, cfg.first_seq, &mut report.tx_stamps);
    }
    report.stamp_ids = stamp_ids;
    if let Some(first) = first_send_mono {
        report.span_ns = last_send_mono - first;
        if report.span_ns > 0 {
            report.rate_bps = (report.wire_bits - last_frame_bits) * 1e9 / report.span_ns as f64;
        }
    }
    Ok(report)
}
