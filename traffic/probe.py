"""Probes: craft, send with precise timestamps, pace, receive and parse into records.

A probe carries its send time (CLOCK_REALTIME, ns, read just before the send
syscall) in its data header. Where the kernel gives software TX timestamps (veth
does), the sender also reads the time the frame left the socket layer from the
socket's error queue; the receiver reads the kernel RX timestamp. Host latency is
RX − TX (kernel TX time when known, else the payload time), all on one machine
clock; switch latency is the telemetry block's egress − ingress global timestamp.
Sockets are AF_PACKET, opened inside a network namespace when one is named.
"""

from __future__ import annotations

import csv
import ctypes
import os
import select
import socket
import struct
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from bufferlab.traffic import layers

# Linux constants Python's socket module does not export (x86-64 / generic values).
SO_RCVBUFFORCE = 33
SO_TIMESTAMPNS = 35
SO_TIMESTAMPING = 37
SO_ATTACH_FILTER = 26
SCM_TIMESTAMPNS = SO_TIMESTAMPNS
SCM_TIMESTAMPING = SO_TIMESTAMPING
SOF_TIMESTAMPING_TX_SOFTWARE = 1 << 1
SOF_TIMESTAMPING_SOFTWARE = 1 << 4
SOL_PACKET = 263
PACKET_STATISTICS = 6
ETH_P_ALL = 0x0003
CLONE_NEWNET = 0x40000000
# Room for ~1800 full-size frames, so a reader descheduled for a while loses nothing.
RECEIVE_BUFFER_BYTES = 4 << 20
# Offsets in an untagged Ethernet/IPv4 (no options)/UDP probe.
_UDP_PAYLOAD = 42
_DATA = struct.Struct("!HHIQ")
_TELEMETRY = struct.Struct("!BBHHHQQIIIIII")
_SPIN_BEFORE_DEADLINE_NS = 200_000  # sleep until this close to a send time, then spin
# Classic BPF (struct sock_filter: code, jt, jf, k) keeping untagged IPv4 UDP frames to the
# probe port (first fragments only), what `tcpdump -dd 'ip and udp dst port 47000'` compiles:
# a receiver beside bulk traffic then wakes up for probes only.
_PROBE_FILTER = (
    (0x28, 0, 0, 12),                    # ldh [12]: EtherType
    (0x15, 0, 8, 0x0800),                # IPv4, else drop
    (0x30, 0, 0, 23),                    # ldb [23]: IP protocol
    (0x15, 0, 6, 17),                    # UDP, else drop
    (0x28, 0, 0, 20),                    # ldh [20]: flags and fragment offset
    (0x45, 4, 0, 0x1FFF),                # a later fragment has no UDP header: drop
    (0xB1, 0, 0, 14),                    # ldxb 4*([14]&0xf): IP header length
    (0x48, 0, 0, 16),                    # ldh [x+16]: UDP destination port
    (0x15, 0, 1, layers.PROBE_UDP_PORT),  # the probe port, else drop
    (0x06, 0, 0, 0x40000),               # keep the whole frame
    (0x06, 0, 0, 0),                     # drop
)

_libc = ctypes.CDLL(None, use_errno=True)


@contextmanager
def in_netns(netns: str | None) -> Iterator[None]:
    """Run the body with this thread inside network namespace ``netns`` (None: stay)."""
    if netns is None:
        yield
        return
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        target = os.open(f"/var/run/netns/{netns}", os.O_RDONLY)
        try:
            if _libc.setns(target, CLONE_NEWNET) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"setns into {netns}: {os.strerror(err)}")
        finally:
            os.close(target)
        try:
            yield
        finally:
            if _libc.setns(home, CLONE_NEWNET) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"setns back from {netns}: {os.strerror(err)}")
    finally:
        os.close(home)


def open_packet_socket(
    dev: str,
    netns: str | None = None,
    receive: bool = True,
    tx_timestamps: bool = False,
    rx_timestamps: bool = False,
    ethertype: int = ETH_P_ALL,
    rcvbuf_bytes: int | None = None,
    probes_only: bool = False,
) -> socket.socket:
    """An AF_PACKET socket bound to ``dev``, created inside ``netns``.

    With ``receive`` it gets the frames of ``ethertype`` (default: all) on ``dev``;
    without, it only sends (so a sender's buffer does not fill with traffic it never
    reads). ``rcvbuf_bytes`` enlarges the receive buffer so a briefly descheduled
    reader loses nothing (SO_RCVBUFFORCE as root, else up to the sysctl limit);
    ``probes_only`` has the kernel pass probe frames only (see `_PROBE_FILTER`).
    """
    with in_netns(netns):
        # Created with protocol 0 the socket receives nothing: every option, the filter
        # above all, is in place before bind() starts reception on ``dev`` alone (a
        # socket opened for ETH_P_ALL would queue any interface's frames until bound).
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        try:
            if rcvbuf_bytes is not None:
                try:
                    sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, rcvbuf_bytes)
                except PermissionError:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf_bytes)
            if tx_timestamps:
                sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPING,
                                SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE)
            if rx_timestamps:
                sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            if probes_only:
                _attach_probe_filter(sock)
            # The address's protocol is in host order: Python applies htons itself.
            sock.bind((dev, ethertype if receive else 0))
        except OSError:
            sock.close()
            raise
    return sock


def _attach_probe_filter(sock: socket.socket) -> None:
    """Let only probe frames (IPv4 UDP to the probe port) reach this packet socket."""
    program = b"".join(struct.pack("HBBI", *insn) for insn in _PROBE_FILTER)
    buffer = ctypes.create_string_buffer(program, len(program))
    # struct sock_fprog: instruction count, then a pointer to the instructions.
    fprog = struct.pack("HL", len(_PROBE_FILTER), ctypes.addressof(buffer))
    sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)


def socket_drops(sock: socket.socket) -> int:
    """Frames the kernel dropped for this packet socket since the last call (buffer full)."""
    _, drops = struct.unpack("II", sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
    return drops


def timespec_ns(data: bytes) -> int:
    """A kernel ``struct timespec`` (control-message payload) as ns."""
    sec, nsec = struct.unpack_from("qq", data)
    return sec * 1_000_000_000 + nsec


def _probe_key(frame: bytes) -> tuple[int, int] | None:
    """(flow, seq) of an untagged probe frame, or None if it is not one."""
    if len(frame) < layers.PROBE_MIN_FRAME_BYTES:
        return None
    if frame[12:14] != b"\x08\x00" or frame[14] != 0x45 or frame[23] != 17:
        return None
    if int.from_bytes(frame[36:38], "big") != layers.PROBE_UDP_PORT:
        return None
    magic, flow, seq, _ = _DATA.unpack_from(frame, _UDP_PAYLOAD)
    if magic != layers.DATA_MAGIC:
        return None
    return flow, seq


@dataclass(frozen=True)
class ProbeSent:
    """One sent probe: payload send time and, when the kernel gave one, the TX timestamp."""

    flow: int
    seq: int
    tx_ns: int
    tx_kernel_ns: int | None = None


@dataclass(frozen=True)
class ProbeRecord:
    """A received probe: host timestamps (ns) and the switch's telemetry (µs, packets, bytes)."""

    flow: int
    seq: int
    frame_bytes: int
    tx_ns: int
    rx_ns: int
    tx_kernel_ns: int | None
    tel_filled: bool
    qid: int
    ingress_port: int
    egress_port: int
    switch_id: int
    ingress_global_ts_us: int
    egress_global_ts_us: int
    enq_timestamp_us: int
    deq_timedelta_us: int
    enq_qdepth_packets: int
    deq_qdepth_packets: int
    pool_occupancy_bytes: int
    port_occupancy_bytes: int

    @property
    def host_latency_ns(self) -> int:
        """RX − TX on the host clock, using the kernel TX timestamp when known."""
        tx = self.tx_kernel_ns if self.tx_kernel_ns is not None else self.tx_ns
        return self.rx_ns - tx

    @property
    def switch_latency_us(self) -> int | None:
        """Egress − ingress global timestamp written by the switch (None if not filled)."""
        if not self.tel_filled:
            return None
        return self.egress_global_ts_us - self.ingress_global_ts_us


def parse_probe(frame: bytes, rx_ns: int) -> ProbeRecord | None:
    """Parse a received frame into a ProbeRecord (an RLT tag is skipped); None if no probe."""
    frame, _ = layers.strip_rlt(frame)
    key = _probe_key(frame)
    if key is None:
        return None
    _, flow, seq, tx_ns = _DATA.unpack_from(frame, _UDP_PAYLOAD)
    (flags, qid, in_port, out_port, switch_id, in_ts, out_ts, enq_ts, deq_td, enq_qd, deq_qd,
     pool, port_occ) = _TELEMETRY.unpack_from(frame, _UDP_PAYLOAD + layers.DATA_HEADER_BYTES)
    return ProbeRecord(
        flow=flow, seq=seq, frame_bytes=len(frame), tx_ns=tx_ns, rx_ns=rx_ns, tx_kernel_ns=None,
        tel_filled=bool(flags & 1), qid=qid, ingress_port=in_port, egress_port=out_port,
        switch_id=switch_id, ingress_global_ts_us=in_ts, egress_global_ts_us=out_ts,
        enq_timestamp_us=enq_ts, deq_timedelta_us=deq_td, enq_qdepth_packets=enq_qd,
        deq_qdepth_packets=deq_qd, pool_occupancy_bytes=pool, port_occupancy_bytes=port_occ,
    )


def attach_tx_timestamps(
    records: Iterable[ProbeRecord], sent: Iterable[ProbeSent]
) -> list[ProbeRecord]:
    """Copy the kernel TX timestamps of ``sent`` into the matching (flow, seq) records."""
    kernel = {(s.flow, s.seq): s.tx_kernel_ns for s in sent}
    return [replace(r, tx_kernel_ns=kernel.get((r.flow, r.seq))) for r in records]


PROBE_CSV_COLUMNS = [f.name for f in fields(ProbeRecord)] + ["host_latency_ns",
                                                             "switch_latency_us"]


def write_records_csv(path: str | Path, records: Iterable[ProbeRecord]) -> int:
    """Write probe records as CSV (columns name their units); returns the row count."""
    n = 0
    with open(path, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=PROBE_CSV_COLUMNS)
        writer.writeheader()
        for r in records:
            row = asdict(r)
            row["host_latency_ns"] = r.host_latency_ns
            row["switch_latency_us"] = r.switch_latency_us
            writer.writerow(row)
            n += 1
    return n


class ProbeSender:
    """Sends probes of one flow from an interface, stamping each just before the syscall."""

    def __init__(
        self,
        dev: str,
        src_mac: str,
        dst_mac: str,
        src_ip: str,
        dst_ip: str,
        flow: int,
        frame_bytes: int = layers.PROBE_MIN_FRAME_BYTES,
        dscp: int = 0,
        netns: str | None = None,
        tx_timestamps: bool = True,
    ) -> None:
        """Open the socket and pre-build the frame (only seq and tx_ns change per probe)."""
        self.flow = flow
        self._template = bytearray(bytes(layers.probe_frame(
            src_mac, dst_mac, src_ip, dst_ip, flow, 0, frame_bytes=frame_bytes, dscp=dscp)))
        self._sock = open_packet_socket(dev, netns, receive=False, tx_timestamps=tx_timestamps)
        self._poll = select.poll()
        self._poll.register(self._sock, select.POLLERR)
        self._tx_timestamps = tx_timestamps
        self._kernel_tx: dict[int, int] = {}

    def close(self) -> None:
        """Close the socket."""
        self._sock.close()

    def __enter__(self) -> ProbeSender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send_frame(self, frame: bytes) -> None:
        """Send arbitrary bytes on the probe socket (e.g. a crafted probe)."""
        self._sock.send(frame)

    def send_one(self, seq: int) -> int:
        """Send probe ``seq``; returns the tx_ns written into it."""
        struct.pack_into("!I", self._template, _UDP_PAYLOAD + 4, seq)
        tx_ns = time.time_ns()
        struct.pack_into("!Q", self._template, _UDP_PAYLOAD + 8, tx_ns)
        self._sock.send(self._template)
        return tx_ns

    def send_paced(
        self,
        count: int,
        interval_ns: int,
        first_seq: int = 0,
        clock_ns: Callable[[], int] = time.monotonic_ns,
        sleep_s: Callable[[float], None] = time.sleep,
    ) -> list[ProbeSent]:
        """Send ``count`` probes one every ``interval_ns`` (schedule from the first send).

        Sends never drift: probe k goes at start + k·interval; if the sender falls
        behind it sends at once rather than skipping a sequence number.
        """
        stamps = []
        start = clock_ns()
        for k in range(count):
            due = start + k * interval_ns
            while True:
                left = due - clock_ns()
                if left <= 0:
                    break
                if left > _SPIN_BEFORE_DEADLINE_NS:
                    sleep_s((left - _SPIN_BEFORE_DEADLINE_NS) / 1e9)
            stamps.append((first_seq + k, self.send_one(first_seq + k)))
            self._drain_tx_timestamps(0.0)
        self._collect_tx_timestamps([seq for seq, _ in stamps])
        return [ProbeSent(self.flow, seq, tx, self._kernel_tx.pop(seq, None))
                for seq, tx in stamps]

    def _collect_tx_timestamps(self, seqs: list[int], timeout_s: float = 0.2) -> None:
        """Wait briefly for TX timestamps still in flight for ``seqs``."""
        if not self._tx_timestamps:
            return
        deadline = time.monotonic() + timeout_s
        while any(s not in self._kernel_tx for s in seqs):
            left = deadline - time.monotonic()
            if left <= 0 or not self._drain_tx_timestamps(left):
                return

    def _drain_tx_timestamps(self, wait_s: float) -> bool:
        """Read TX timestamps from the error queue; False if none arrived within ``wait_s``."""
        if not self._tx_timestamps:
            return False
        # The error queue signals POLLERR, which select() reports in no set of its own.
        if not self._poll.poll(wait_s * 1000):
            return False
        while True:
            try:
                data, ancdata, _, _ = self._sock.recvmsg(
                    2048, 1024, socket.MSG_ERRQUEUE | socket.MSG_DONTWAIT)
            except BlockingIOError:
                return True
            key = _probe_key(data)
            for level, kind, payload in ancdata:
                if key and level == socket.SOL_SOCKET and kind == SCM_TIMESTAMPING:
                    # scm_timestamping: [software, deprecated, hardware]; software is first.
                    self._kernel_tx[key[1]] = timespec_ns(payload)


class ProbeReceiver:
    """Receives frames on an interface with kernel RX timestamps and keeps the probes."""

    def __init__(self, dev: str, netns: str | None = None, probes_only: bool = False) -> None:
        """Open the socket now so frames sent afterwards are not missed; ``probes_only``
        has the kernel pass untagged probe frames only (cheap beside bulk traffic)."""
        self._sock = open_packet_socket(dev, netns, rx_timestamps=True,
                                        rcvbuf_bytes=RECEIVE_BUFFER_BYTES,
                                        probes_only=probes_only)
        self.ignored_frames = 0

    def close(self) -> None:
        """Close the socket."""
        self._sock.close()

    def __enter__(self) -> ProbeReceiver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def receive(self, count: int, timeout_s: float) -> list[ProbeRecord]:
        """Collect up to ``count`` probes, giving up after ``timeout_s`` without any frame."""
        records: list[ProbeRecord] = []
        while len(records) < count:
            ready, _, _ = select.select([self._sock], [], [], timeout_s)
            if not ready:
                break
            data, ancdata, _, addr = self._sock.recvmsg(65536, 1024)
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            rx_ns = next((timespec_ns(p) for lvl, kind, p in ancdata
                          if lvl == socket.SOL_SOCKET and kind == SCM_TIMESTAMPNS),
                         time.time_ns())
            record = parse_probe(data, rx_ns)
            if record is None:
                self.ignored_frames += 1
            else:
                records.append(record)
        return records
