"""The last packets a port saw, from the switch's per-packet trace (`logs/s1.log`).

bufferlab-switch at `-L debug` (or `trace`) writes BMv2's per-packet lines,
`[time] [bmv2] [D] [thread T] [id.copy] [cxt 0] text`, where a line may continue on
lines of its own (a table key). `PacketTraces` follows the file as it grows, groups the
lines by packet id, and keeps the most recent packets of each port: a packet is on a port
when it was received there, sent to it (`Egress port is N`) or transmitted out of it.
"""

from __future__ import annotations

import re
from collections import OrderedDict, deque
from pathlib import Path
from typing import Any

#: BMv2's per-packet line (the text may continue on following lines).
LINE = re.compile(r"^\[(?P<stamp>[^\]]*)\] \[bmv2\] \[(?P<level>\w)\] \[thread \d+\] "
                  r"\[(?P<packet>\d+)\.(?P<copy>\d+)\] \[cxt \d+\] (?P<text>.*)$")
#: Lines that put a packet on a port.
PORT_EVENTS = (re.compile(r"^Processing packet received on port (\d+)$"),
               re.compile(r"^Egress port is (\d+)"),
               re.compile(r"^Transmitting packet of size \d+ out of port (\d+)$"))
#: Packets whose lines are kept at once (the oldest are forgotten first).
MAX_PACKETS = 2000
#: Bytes read from the log per poll at most (a first poll of a large log starts near its end).
MAX_READ_BYTES = 4 << 20


class PacketTraces:
    """Per-packet traces of a log file, kept per port (the last `per_port` packets)."""

    def __init__(self, path: str | Path | None = None, per_port: int = 10) -> None:
        """Follow `path` (None: lines are given to `feed`); keep `per_port` packets a port."""
        self.path = Path(path) if path is not None else None
        self.per_port = per_port
        self._offset = 0
        self._partial = ""
        self._packets: OrderedDict[int, list[str]] = OrderedDict()
        self._ports: dict[int, deque[int]] = {}
        self._last: int | None = None

    def poll(self) -> None:
        """Read what the log gained since the last poll (from the start again if it shrank)."""
        if self.path is None or not self.path.exists():
            return
        size = self.path.stat().st_size
        if size < self._offset:
            self._offset, self._partial = 0, ""
        start = max(self._offset, size - MAX_READ_BYTES)
        with self.path.open("rb") as f:
            f.seek(start)
            data = f.read(size - start)
        self._offset = start + len(data)
        self.feed(data.decode("utf-8", errors="replace"))

    def feed(self, text: str) -> None:
        """Take log text (whole lines; a line cut at the end waits for the rest)."""
        text = self._partial + text
        lines = text.split("\n")
        self._partial = lines.pop()
        for line in lines:
            self._line(line)

    def _line(self, line: str) -> None:
        m = LINE.match(line)
        if m is None:
            # A continuation of the previous packet line (a table key's fields), or another
            # logger's line: kept only in the first case.
            if self._last is not None and line and not line.startswith("["):
                self._packets[self._last].append(line)
            else:
                self._last = None
            return
        packet = int(m["packet"])
        lines = self._packets.get(packet)
        if lines is None:
            lines = self._packets[packet] = []
            while len(self._packets) > MAX_PACKETS:
                self._packets.popitem(last=False)
        lines.append(f"[{m['packet']}.{m['copy']}] {m['text']}")
        self._last = packet
        for event in PORT_EVENTS:
            port = event.match(m["text"])
            if port is not None:
                self._seen_on(int(port[1]), packet)

    def _seen_on(self, port: int, packet: int) -> None:
        recent = self._ports.setdefault(port, deque(maxlen=self.per_port))
        if packet in recent:
            recent.remove(packet)
        recent.append(packet)

    def ports(self) -> list[int]:
        """Ports some packet was seen on, ascending."""
        return sorted(self._ports)

    def last(self, port: int, n: int | None = None) -> list[dict[str, Any]]:
        """The last `n` (all kept: None) packets seen on `port`, oldest first, each with
        its id and lines."""
        recent = [p for p in self._ports.get(port, ()) if p in self._packets]
        if n is not None:
            recent = recent[-n:] if n > 0 else []
        return [{"packet": p, "lines": list(self._packets[p])} for p in recent]
