"""What the live view reads from a TNA switch's traffic manager, over its runtime CLI.

On Tofino the buffer is the TM's, which P4Runtime does not reach (BF Runtime's `tf1.tm.*`
tables do); bufferlab-switch serves the same counters on its runtime CLI port
(`--thrift-port`): `tm_counter_eg_port` and `tm_counter_queue` (cells in use, TM drops,
frames and frame bytes queued) and `tm_show` (the cell size, the application pools in
cells, the XOFF and XON frames the TM asked the MACs for). The wire protocol is the runtime
CLI's own (switch/python/runtime_cli/transport.py): one command line out, `ok N` or
`error N` and N bytes of answer back. It is spoken here rather than imported, since the
controller never imports the switch.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import BinaryIO

#: Seconds to wait for one answer.
TIMEOUT_S = 5.0
#: Longest answer header line, bytes (`error 123456`).
HEADER_BYTES = 64


class TmError(RuntimeError):
    """The switch refused a TM command or its runtime CLI could not be reached."""


@dataclass
class TmSnapshot:
    """The TM at one instant: per port and per (port, queue) cells in use, drops (packets)
    and the frames and frame bytes queued; the egress pools' cells; XOFF/XON asked for."""

    cell_bytes: int
    ports: dict[int, dict[str, int]] = field(default_factory=dict)
    queues: dict[tuple[int, int], dict[str, int]] = field(default_factory=dict)
    pool_used_cells: int = 0
    xoff: int = 0
    xon: int = 0


def fields(line: str) -> dict[str, int]:
    """The `name=value` fields of one counter line (`port 3 queue 0: usage_cells=12 ...`)."""
    return {k: int(v) for k, _, v in (w.partition("=") for w in line.split() if "=" in w)}


def parse_tm_show(text: str) -> tuple[int | None, int, int, int]:
    """tm_show's answer: cell size (None when the TM counts bytes), cells used in the
    egress application pools, and the XOFF and XON frames asked for."""
    cell, used, xoff, xon = None, 0, 0, 0
    for line in text.splitlines():
        words = line.replace(",", "").split()
        if line.startswith("cell size: ") and words[2].isdigit():
            cell = int(words[2])
        elif line.startswith("EG_APP_POOL_"):
            used += int(words[words.index("used") + 1])
        elif line.startswith("PAUSE/PFC frames"):
            xoff, xon = int(words[words.index("XOFF") + 1]), int(words[words.index("XON") + 1])
    return cell, used, xoff, xon


class TmReader:
    """A connection to a switch's runtime CLI for its TM counters."""

    def __init__(self, host: str = "127.0.0.1", port: int = 9090,
                 timeout_s: float = TIMEOUT_S) -> None:
        """Nothing connects before the first read."""
        self.address = (host, port)
        self.timeout_s = timeout_s
        self._sock: socket.socket | None = None
        self._stream: BinaryIO | None = None

    def run(self, line: str) -> str:
        """One command's answer; TmError if refused or unreachable (reconnects next time)."""
        try:
            if self._sock is None:
                self._sock = socket.create_connection(self.address, timeout=self.timeout_s)
                self._stream = self._sock.makefile("rwb")
            assert self._stream is not None
            self._stream.write(line.encode() + b"\n")
            self._stream.flush()
            status, _, size = self._stream.readline(HEADER_BYTES).decode(errors="replace") \
                .strip().partition(" ")
            if status not in ("ok", "error") or not size.isdigit():
                raise OSError("the switch's runtime CLI answered something else")
            body = self._stream.read(int(size)).decode(errors="replace")
        except OSError as err:
            self.close()
            host, port = self.address
            raise TmError(f"runtime CLI at {host}:{port}: {err}") from None
        if status != "ok":
            raise TmError(f"{line}: {body}")
        return body

    def snapshot(self, ports: Iterable[int], queues: int) -> TmSnapshot:
        """The TM counters of `ports` and their first `queues` queues."""
        ports = list(ports)
        cell, used, xoff, xon = parse_tm_show(self.run("tm_show"))
        snap = TmSnapshot(cell or 0, pool_used_cells=used, xoff=xoff, xon=xon)
        for line in self.run("tm_counter_eg_port " + " ".join(map(str, ports))).splitlines():
            snap.ports[int(line.split()[1].rstrip(":"))] = fields(line)
        for port in ports:
            answer = self.run(f"tm_counter_queue {port} " + " ".join(map(str, range(queues))))
            for q, line in enumerate(answer.splitlines()):
                snap.queues[(port, q)] = fields(line)
        return snap

    def close(self) -> None:
        """Close the connection (safe twice)."""
        if self._sock is not None:
            self._sock.close()
        self._sock, self._stream = None, None
