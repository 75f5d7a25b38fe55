//! One switch port on a Linux interface: a raw AF_PACKET socket with batched receive
//! (recvmmsg into preallocated buffers, kernel timestamps) and batched transmit (sendmmsg).

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};

use crate::error::{last_os, PortError};
use crate::sys;

/// Bytes of an Ethernet header (destination, source, EtherType); Linux frames carry no FCS.
pub const ETH_HLEN: usize = 14;
/// Bytes of one 802.1Q tag.
pub const VLAN_HLEN: usize = 4;
/// Bytes of the two MAC addresses, after which a VLAN tag sits.
const MACS_LEN: usize = 12;
/// Room per frame for the control messages asked for (SCM_TIMESTAMPNS: 32 bytes,
/// PACKET_AUXDATA: 40 bytes on 64-bit), with slack.
const CONTROL_BYTES: usize = 128;
/// The kernel never moves more messages per recvmmsg/sendmmsg call (UIO_MAXIOV).
const MAX_BATCH: usize = 1024;

/// How a live port is opened. `Default` gives 64-frame batches, 8 MiB / 4 MiB buffers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortConfig {
    /// Most frames one receive or transmit system call moves (clamped to 1..=1024).
    pub batch_frames: usize,
    /// Socket receive buffer in bytes: what absorbs a burst while the switch is busy.
    pub rcvbuf_bytes: usize,
    /// Socket send buffer in bytes.
    pub sndbuf_bytes: usize,
}

impl Default for PortConfig {
    fn default() -> Self {
        PortConfig {
            batch_frames: 64,
            rcvbuf_bytes: 8 << 20,
            sndbuf_bytes: 4 << 20,
        }
    }
}

/// What a port has done since it was opened; frames and bytes are Linux frames (no FCS).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortCounters {
    /// Frames received and handed out in a batch.
    pub rx_frames: u64,
    /// Bytes of those frames (VLAN tag included).
    pub rx_bytes: u64,
    /// Received frames longer than the port's maximum frame, skipped.
    pub rx_oversize: u64,
    /// Received frames that came without a kernel timestamp.
    pub rx_no_timestamp: u64,
    /// Times the kernel reported the interface down (ENETDOWN) on receive.
    pub rx_link_down: u64,
    /// Frames the kernel dropped because the socket's receive buffer was full
    /// (updated by [`LivePort::poll_kernel_drops`]).
    pub kernel_drops: u64,
    /// Frames handed to the kernel for transmission.
    pub tx_frames: u64,
    /// Bytes of those frames.
    pub tx_bytes: u64,
    /// Frames to send that were longer than the port's maximum frame, skipped.
    pub tx_oversize: u64,
    /// Frames to send shorter than an Ethernet header, skipped.
    pub tx_runt: u64,
    /// Frames the kernel refused because the interface's queue was full (ENOBUFS)
    /// or the interface was down (ENETDOWN).
    pub tx_dropped: u64,
}

/// A received frame: its bytes and its kernel receive timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RxFrame<'a> {
    /// The whole Ethernet frame, VLAN tag re-inserted where the kernel had stripped it.
    pub bytes: &'a [u8],
    /// CLOCK_REALTIME ns at which the kernel received the frame (SO_TIMESTAMPNS).
    pub kernel_ns: Option<u64>,
}

#[derive(Clone, Copy, Debug)]
struct FrameSlot {
    start: usize,
    len: usize,
    kernel_ns: Option<u64>,
}

/// Preallocated buffers for one batch of received frames, tagged with the switch port
/// number of the port that filled it. Receiving into it allocates nothing.
pub struct RxBatch {
    port: u32,
    max_frame_bytes: usize,
    slot_bytes: usize,
    data: Vec<u8>,
    control: Vec<u64>,
    iovecs: Vec<libc::iovec>,
    headers: Vec<libc::mmsghdr>,
    frames: Vec<FrameSlot>,
}

// SAFETY: the raw pointers inside `iovecs` and `headers` only ever point into this batch's
// own heap buffers and are rewritten before every receive call, so moving the batch to
// another thread cannot leave them pointing at anything another thread owns.
unsafe impl Send for RxBatch {}

impl RxBatch {
    /// Buffers for up to `frames` frames of up to `max_frame_bytes` bytes each.
    pub fn new(frames: usize, max_frame_bytes: usize) -> Self {
        let frames = frames.clamp(1, MAX_BATCH);
        // Each slot starts with VLAN_HLEN bytes of headroom so a stripped tag can be put
        // back by moving only the 12 MAC bytes.
        let slot_bytes = VLAN_HLEN + max_frame_bytes;
        // SAFETY: iovec and mmsghdr are plain old data; all-zero is valid (null pointers
        // are replaced before every use).
        let (iovec, header) = unsafe { (std::mem::zeroed(), std::mem::zeroed()) };
        RxBatch {
            port: 0,
            max_frame_bytes,
            slot_bytes,
            data: vec![0; frames * slot_bytes],
            control: vec![0; frames * CONTROL_BYTES / 8],
            iovecs: vec![iovec; frames],
            headers: vec![header; frames],
            frames: Vec::with_capacity(frames),
        }
    }

    /// Switch port number of the port whose frames the batch holds, as tagged by
    /// [`PortSet::recv_next`](crate::PortSet::recv_next) (0 until a set tags it).
    pub fn port(&self) -> u32 {
        self.port
    }

    /// Most frames one receive call can put in the batch.
    pub fn capacity(&self) -> usize {
        self.headers.len()
    }

    /// Largest frame, bytes, the batch's buffers hold.
    pub fn max_frame_bytes(&self) -> usize {
        self.max_frame_bytes
    }

    /// Number of frames received by the last receive call.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Whether the last receive call brought no frame.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// The `i`-th frame of the batch, in arrival order.
    pub fn get(&self, i: usize) -> Option<RxFrame<'_>> {
        self.frames.get(i).map(|s| self.frame(s))
    }

    /// The frames of the batch, in arrival order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = RxFrame<'_>> + '_ {
        self.frames.iter().map(|s| self.frame(s))
    }

    fn frame(&self, slot: &FrameSlot) -> RxFrame<'_> {
        RxFrame {
            bytes: &self.data[slot.start..slot.start + slot.len],
            kernel_ns: slot.kernel_ns,
        }
    }

    /// Turn the `count` messages the kernel just filled into frames, counting what the
    /// port skips.
    fn port_frames(&mut self, port: &mut LivePort, count: usize) {
        for i in 0..count {
            let hdr = &self.headers[i];
            let wire_len = hdr.msg_len as usize;
            let truncated = hdr.msg_hdr.msg_flags & libc::MSG_TRUNC != 0;
            let anc = ancillary(&hdr.msg_hdr);
            let vlan = anc.vlan.filter(|_| wire_len >= MACS_LEN);
            let len = wire_len + if vlan.is_some() { VLAN_HLEN } else { 0 };
            if truncated || len > port.max_frame_bytes || len > self.max_frame_bytes {
                port.counters.rx_oversize += 1;
                continue;
            }
            let base = i * self.slot_bytes;
            let start = match vlan {
                Some((tpid, tci)) => {
                    self.data
                        .copy_within(base + VLAN_HLEN..base + VLAN_HLEN + MACS_LEN, base);
                    self.data[base + MACS_LEN..base + MACS_LEN + 2]
                        .copy_from_slice(&tpid.to_be_bytes());
                    self.data[base + MACS_LEN + 2..base + MACS_LEN + 4]
                        .copy_from_slice(&tci.to_be_bytes());
                    base
                }
                None => base + VLAN_HLEN,
            };
            if anc.kernel_ns.is_none() {
                port.counters.rx_no_timestamp += 1;
            }
            port.counters.rx_frames += 1;
            port.counters.rx_bytes += len as u64;
            self.frames.push(FrameSlot {
                start,
                len,
                kernel_ns: anc.kernel_ns,
            });
        }
    }

    /// Tag the batch with the switch port number it was received on.
    pub(crate) fn set_port(&mut self, port: u32) {
        self.port = port;
    }

    /// Point every message header at its slot, control buffer and full lengths again
    /// (the kernel overwrote the lengths on the previous call).
    fn arm(&mut self) {
        let data = self.data.as_mut_ptr();
        let control = self.control.as_mut_ptr().cast::<u8>();
        for i in 0..self.headers.len() {
            // SAFETY: slot i and control block i lie inside `data` and `control`, whose
            // sizes are frames * slot_bytes and frames * CONTROL_BYTES.
            unsafe {
                self.iovecs[i] = libc::iovec {
                    iov_base: data.add(i * self.slot_bytes + VLAN_HLEN).cast(),
                    iov_len: self.max_frame_bytes,
                };
                let hdr = &mut self.headers[i];
                hdr.msg_len = 0;
                hdr.msg_hdr.msg_name = std::ptr::null_mut();
                hdr.msg_hdr.msg_namelen = 0;
                hdr.msg_hdr.msg_iov = self.iovecs.as_mut_ptr().add(i);
                hdr.msg_hdr.msg_iovlen = 1;
                hdr.msg_hdr.msg_control = control.add(i * CONTROL_BYTES).cast();
                hdr.msg_hdr.msg_controllen = CONTROL_BYTES as _;
                hdr.msg_hdr.msg_flags = 0;
            }
        }
    }
}

/// What the control messages of one received frame said.
#[derive(Default)]
struct Ancillary {
    kernel_ns: Option<u64>,
    /// TPID and TCI of a tag the kernel stripped from the frame.
    vlan: Option<(u16, u16)>,
}

fn ancillary(msg: &libc::msghdr) -> Ancillary {
    let mut out = Ancillary::default();
    // SAFETY: the kernel filled msg_control/msg_controllen; the CMSG macros stay inside
    // them and the payloads are read unaligned with the type the kernel wrote.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(msg);
        while !cmsg.is_null() {
            let level = (*cmsg).cmsg_level;
            let kind = (*cmsg).cmsg_type;
            let data = libc::CMSG_DATA(cmsg);
            if level == libc::SOL_SOCKET && kind == libc::SCM_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(data.cast::<libc::timespec>());
                out.kernel_ns = Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            } else if level == libc::SOL_PACKET && kind == libc::PACKET_AUXDATA {
                let aux = std::ptr::read_unaligned(data.cast::<libc::tpacket_auxdata>());
                if aux.tp_status & libc::TP_STATUS_VLAN_VALID != 0 {
                    let tpid = if aux.tp_status & libc::TP_STATUS_VLAN_TPID_VALID != 0 {
                        aux.tp_vlan_tpid
                    } else {
                        libc::ETH_P_8021Q as u16
                    };
                    out.vlan = Some((tpid, aux.tp_vlan_tci));
                }
            }
            cmsg = libc::CMSG_NXTHDR(msg, cmsg);
        }
    }
    out
}

/// A switch port on one Linux interface: raw AF_PACKET socket bound to the interface,
/// promiscuous, blind to outgoing frames (its own and the host's), non-blocking.
pub struct LivePort {
    fd: OwnedFd,
    iface: String,
    ifindex: i32,
    mtu: usize,
    max_frame_bytes: usize,
    batch_frames: usize,
    counters: PortCounters,
    tx_iovecs: Vec<libc::iovec>,
    tx_headers: Vec<libc::mmsghdr>,
    /// Position, in the caller's frames, of each frame put in `tx_headers`.
    tx_index: Vec<usize>,
    /// Position of each frame skipped while filling a chunk, and whether it was a runt.
    tx_skips: Vec<(usize, bool)>,
}

// SAFETY: the raw pointers in `tx_iovecs`/`tx_headers` are written and used only inside
// one `send` call (they point at that call's borrowed frames); between calls they are
// stale and never dereferenced, so the port may move to another thread.
unsafe impl Send for LivePort {}

impl LivePort {
    /// Open `iface` (in the calling thread's network namespace) as a live port.
    pub fn open(iface: &str, config: &PortConfig) -> Result<Self, PortError> {
        sys::ifname(iface)?;
        let fd = sys::packet_socket(iface)?;
        // The interface ioctls go through the packet socket, so they resolve the name in
        // the socket's network namespace.
        let req = sys::if_ioctl(&fd, iface, libc::SIOCGIFINDEX, "ioctl(SIOCGIFINDEX)")?;
        // SAFETY: SIOCGIFINDEX wrote the ifindex member of the union.
        let ifindex = unsafe { req.ifr_ifru.ifru_ifindex };
        let req = sys::if_ioctl(&fd, iface, libc::SIOCGIFMTU, "ioctl(SIOCGIFMTU)")?;
        // SAFETY: SIOCGIFMTU wrote the mtu member of the union.
        let mtu = unsafe { req.ifr_ifru.ifru_mtu }.max(0) as usize;

        let one: libc::c_int = 1;
        sys::setsockopt(
            &fd,
            iface,
            libc::SOL_PACKET,
            libc::PACKET_IGNORE_OUTGOING,
            &one,
            "setsockopt(PACKET_IGNORE_OUTGOING)",
        )?;
        sys::setsockopt(
            &fd,
            iface,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            &one,
            "setsockopt(SO_TIMESTAMPNS)",
        )?;
        sys::setsockopt(
            &fd,
            iface,
            libc::SOL_PACKET,
            libc::PACKET_AUXDATA,
            &one,
            "setsockopt(PACKET_AUXDATA)",
        )?;
        sys::set_buffer(
            &fd,
            iface,
            libc::SO_RCVBUFFORCE,
            libc::SO_RCVBUF,
            config.rcvbuf_bytes,
            "setsockopt(SO_RCVBUF)",
        )?;
        sys::set_buffer(
            &fd,
            iface,
            libc::SO_SNDBUFFORCE,
            libc::SO_SNDBUF,
            config.sndbuf_bytes,
            "setsockopt(SO_SNDBUF)",
        )?;

        // SAFETY: sockaddr_ll is plain old data; all-zero is valid.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        addr.sll_ifindex = ifindex;
        // SAFETY: `addr` is a complete sockaddr_ll of the length passed.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(last_os(iface, "bind(AF_PACKET)"));
        }

        // A membership rather than setting IFF_PROMISC: the kernel counts it and undoes
        // it when the socket closes, even if the switch crashes.
        // SAFETY: packet_mreq is plain old data; all-zero is valid.
        let mut mreq: libc::packet_mreq = unsafe { std::mem::zeroed() };
        mreq.mr_ifindex = ifindex;
        mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
        sys::setsockopt(
            &fd,
            iface,
            libc::SOL_PACKET,
            libc::PACKET_ADD_MEMBERSHIP,
            &mreq,
            "setsockopt(PACKET_ADD_MEMBERSHIP, PACKET_MR_PROMISC)",
        )?;

        let batch_frames = config.batch_frames.clamp(1, MAX_BATCH);
        // SAFETY: iovec and mmsghdr are plain old data; all-zero is valid.
        let (iovec, header) = unsafe { (std::mem::zeroed(), std::mem::zeroed()) };
        Ok(LivePort {
            fd,
            iface: iface.to_string(),
            ifindex,
            mtu,
            // One VLAN tag on top of the MTU, as Linux itself allows on Ethernet.
            max_frame_bytes: mtu + ETH_HLEN + VLAN_HLEN,
            batch_frames,
            counters: PortCounters::default(),
            tx_iovecs: vec![iovec; batch_frames],
            tx_headers: vec![header; batch_frames],
            tx_index: vec![0; batch_frames],
            tx_skips: Vec::with_capacity(batch_frames),
        })
    }

    /// The interface name.
    pub fn iface(&self) -> &str {
        &self.iface
    }

    /// The interface index in the socket's network namespace.
    pub fn ifindex(&self) -> i32 {
        self.ifindex
    }

    /// The interface MTU in bytes (IP packet size), read when the port was opened.
    pub fn mtu(&self) -> usize {
        self.mtu
    }

    /// Largest frame in bytes the port receives or sends: MTU + Ethernet header + one
    /// VLAN tag (no FCS).
    pub fn max_frame_bytes(&self) -> usize {
        self.max_frame_bytes
    }

    /// Most frames one receive or transmit call moves.
    pub fn batch_frames(&self) -> usize {
        self.batch_frames
    }

    /// The port's counters.
    pub fn counters(&self) -> PortCounters {
        self.counters
    }

    /// A batch sized for this port: `batch_frames` frames of `max_frame_bytes`.
    pub fn new_batch(&self) -> RxBatch {
        RxBatch::new(self.batch_frames, self.max_frame_bytes)
    }

    /// Receive the frames waiting on the socket, up to the batch's capacity, without
    /// blocking; returns how many the batch now holds (0 when none is waiting).
    pub fn recv(&mut self, batch: &mut RxBatch) -> Result<usize, PortError> {
        batch.frames.clear();
        batch.arm();
        let count = loop {
            // SAFETY: `batch.arm()` pointed every header at buffers the batch owns, sized
            // as the headers say; MSG_TRUNC makes msg_len the frame's full length.
            let rc = unsafe {
                libc::recvmmsg(
                    self.fd.as_raw_fd(),
                    batch.headers.as_mut_ptr(),
                    batch.headers.len() as libc::c_uint,
                    libc::MSG_DONTWAIT | libc::MSG_TRUNC,
                    std::ptr::null_mut(),
                )
            };
            if rc >= 0 {
                break rc as usize;
            }
            let err = std::io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) => break 0,
                // The interface went down: reported once per event, not a port failure.
                Some(libc::ENETDOWN) => {
                    self.counters.rx_link_down += 1;
                    break 0;
                }
                _ => {
                    return Err(PortError::Os {
                        iface: self.iface.clone(),
                        call: "recvmmsg",
                        source: err,
                    })
                }
            }
        };
        batch.port_frames(self, count);
        Ok(batch.frames.len())
    }

    /// Hand frames to the kernel for transmission, in order, in batches of up to
    /// `batch_frames`. Returns how many frames from the front were dealt with: sent, or
    /// skipped and counted (runt, oversize, refused by a full queue or a down link).
    /// Fewer than given means the socket's send buffer is full: offer the rest again.
    pub fn send<'a, I>(&mut self, frames: I) -> Result<usize, PortError>
    where
        I: IntoIterator<Item = &'a [u8]>,
    {
        let mut frames = frames.into_iter();
        let mut consumed = 0;
        loop {
            let chunk_start = consumed;
            let mut examined = 0;
            let mut k = 0;
            self.tx_skips.clear();
            while examined < self.batch_frames {
                let Some(frame) = frames.next() else { break };
                let at = chunk_start + examined;
                examined += 1;
                if frame.len() < ETH_HLEN || frame.len() > self.max_frame_bytes {
                    self.tx_skips.push((at, frame.len() < ETH_HLEN));
                    continue;
                }
                self.tx_iovecs[k] = libc::iovec {
                    iov_base: frame.as_ptr() as *mut libc::c_void,
                    iov_len: frame.len(),
                };
                self.tx_index[k] = at;
                k += 1;
            }
            if examined == 0 {
                return Ok(consumed);
            }
            for i in 0..k {
                let hdr = &mut self.tx_headers[i];
                hdr.msg_len = 0;
                hdr.msg_hdr.msg_name = std::ptr::null_mut();
                hdr.msg_hdr.msg_namelen = 0;
                // SAFETY: i < k <= tx_iovecs.len().
                hdr.msg_hdr.msg_iov = unsafe { self.tx_iovecs.as_mut_ptr().add(i) };
                hdr.msg_hdr.msg_iovlen = 1;
                hdr.msg_hdr.msg_control = std::ptr::null_mut();
                hdr.msg_hdr.msg_controllen = 0;
                hdr.msg_hdr.msg_flags = 0;
            }
            let mut done = 0;
            while done < k {
                // SAFETY: headers done..k point at iovecs of frames borrowed for this call.
                let rc = unsafe {
                    libc::sendmmsg(
                        self.fd.as_raw_fd(),
                        self.tx_headers.as_mut_ptr().add(done),
                        (k - done) as libc::c_uint,
                        libc::MSG_DONTWAIT,
                    )
                };
                if rc > 0 {
                    let sent = rc as usize;
                    self.counters.tx_frames += sent as u64;
                    self.counters.tx_bytes += self.tx_iovecs[done..done + sent]
                        .iter()
                        .map(|v| v.iov_len as u64)
                        .sum::<u64>();
                    done += sent;
                    continue;
                }
                let err = std::io::Error::last_os_error();
                match err.raw_os_error() {
                    Some(libc::EINTR) => {}
                    Some(libc::EAGAIN) => {
                        let boundary = self.tx_index[done];
                        self.count_skips(boundary);
                        return Ok(boundary);
                    }
                    // The queue behind the interface (e.g. a tc qdisc) dropped the frame,
                    // or the link is down: the frame is lost, as on a real port.
                    Some(libc::ENOBUFS) | Some(libc::ENETDOWN) => {
                        self.counters.tx_dropped += 1;
                        done += 1;
                    }
                    // The MTU shrank after the port was opened.
                    Some(libc::EMSGSIZE) => {
                        self.counters.tx_oversize += 1;
                        done += 1;
                    }
                    _ => {
                        return Err(PortError::Os {
                            iface: self.iface.clone(),
                            call: "sendmmsg",
                            source: err,
                        })
                    }
                }
            }
            consumed = chunk_start + examined;
            self.count_skips(consumed);
        }
    }

    /// Count the skipped frames of the current chunk that lie before `boundary`.
    fn count_skips(&mut self, boundary: usize) {
        for &(at, runt) in &self.tx_skips {
            if at < boundary {
                if runt {
                    self.counters.tx_runt += 1;
                } else {
                    self.counters.tx_oversize += 1;
                }
            }
        }
    }

    /// Add the kernel's count of frames dropped for a full receive buffer since the last
    /// call (PACKET_STATISTICS, which resets on read) and return the total so far.
    pub fn poll_kernel_drops(&mut self) -> Result<u64, PortError> {
        // SAFETY: tpacket_stats is plain old data; all-zero is valid.
        let mut stats: libc::tpacket_stats = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
        // SAFETY: `stats` is writable and `len` says its size.
        let rc = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                (&mut stats as *mut libc::tpacket_stats).cast(),
                &mut len,
            )
        };
        if rc != 0 {
            return Err(last_os(&self.iface, "getsockopt(PACKET_STATISTICS)"));
        }
        self.counters.kernel_drops += u64::from(stats.tp_drops);
        Ok(self.counters.kernel_drops)
    }
}

impl AsFd for LivePort {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl AsRawFd for LivePort {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_sizes_are_clamped_and_start_empty() {
        let batch = RxBatch::new(0, 1518);
        assert_eq!(batch.capacity(), 1);
        assert!(batch.is_empty());
        assert_eq!(batch.get(0), None);
        assert_eq!(RxBatch::new(5000, 64).capacity(), MAX_BATCH);
    }

    #[test]
    fn missing_interface_is_a_named_os_error() {
        let err = match LivePort::open("blp-no-such0", &PortConfig::default()) {
            Ok(_) => panic!("opened a missing interface"),
            Err(e) => e,
        };
        assert_eq!(err.iface(), Some("blp-no-such0"));
        // Without CAP_NET_RAW socket() fails first (EPERM); as root the ioctl finds no
        // such device (ENODEV).
        let errno = err.os_error().and_then(std::io::Error::raw_os_error);
        assert!(
            errno == Some(libc::ENODEV) || errno == Some(libc::EPERM),
            "{err}"
        );
    }

    #[test]
    fn bad_names_are_refused_before_opening_a_socket() {
        let err = match LivePort::open("an-interface-name-too-long", &PortConfig::default()) {
            Ok(_) => panic!("opened a bad name"),
            Err(e) => e,
        };
        assert!(matches!(err, PortError::BadName { .. }), "{err}");
    }
}
