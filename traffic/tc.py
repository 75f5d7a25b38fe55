"""Linux tc helpers: HTB classes with filters, TBF, pfifo/bfifo, live rate changes, statistics.

Every rate is in bit/s (``*_bps``), every size in bytes (``*_bytes``) or packets
(``*_packets``). Commands run through the ``tc`` binary, optionally inside a
network namespace (``tc -n <netns>``). A failing command raises :class:`TcError`
carrying the command line and tc's own message.

HTB layout installed by :func:`install_htb` (the one HTB shape bufferlab uses)::

    1:   htb root qdisc, default class 1:<default_minor>
    1:1  parent class at the link rate (leaves borrow from it up to their ceil)
    1:N  one leaf per HtbClass (N >= 2), with filters steering DSCP / UDP ports to it
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

HTB_HANDLE = 1
HTB_PARENT_MINOR = 1
# HTB's quantum (bytes a leaf may send per DRR round when borrowing) defaults to
# rate/r2q and the kernel warns outside [MTU, 200000]; clamping avoids the warning
# while keeping quanta proportional to rates in the usual range.
_QUANTUM_MIN_BYTES = 1514
_QUANTUM_MAX_BYTES = 200_000
_R2Q = 10


class TcError(RuntimeError):
    """A tc command failed; ``command`` is the argv and ``message`` tc's stderr."""

    def __init__(self, command: Sequence[str], message: str) -> None:
        self.command = list(command)
        self.message = message.strip()
        super().__init__(f"{' '.join(self.command)}: {self.message}")


def run_tc(args: Sequence[str], netns: str | None = None) -> str:
    """Run ``tc [-n netns] args`` and return its stdout; raise TcError on failure."""
    command = ["tc"] + (["-n", netns] if netns else []) + [str(a) for a in args]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise TcError(command, done.stderr or done.stdout or f"exit status {done.returncode}")
    return done.stdout


def clear_root(dev: str, netns: str | None = None) -> None:
    """Remove the root qdisc of ``dev`` (back to the kernel default); no error if none is set."""
    try:
        run_tc(["qdisc", "del", "dev", dev, "root"], netns)
    except TcError as err:
        # Deleting the default qdisc is refused with one of these; nothing to remove.
        if "handle of zero" not in err.message and "No such file" not in err.message:
            raise


# ---------------------------------------------------------------------------------------
# HTB


@dataclass(frozen=True)
class HtbClass:
    """One HTB leaf class 1:<minor>: guaranteed ``rate_bps``, may borrow up to ``ceil_bps``."""

    minor: int
    rate_bps: int
    ceil_bps: int | None = None
    burst_bytes: int | None = None
    cburst_bytes: int | None = None
    prio: int | None = None


@dataclass(frozen=True)
class HtbFilter:
    """Steer IPv4 frames to class 1:<minor> by DSCP and/or UDP port (all given fields must match)."""

    minor: int
    dscp: int | None = None
    udp_dport: int | None = None
    udp_sport: int | None = None
    pref: int = 1


def _quantum_bytes(rate_bps: int) -> int:
    return max(_QUANTUM_MIN_BYTES, min(_QUANTUM_MAX_BYTES, rate_bps // 8 // _R2Q))


def _htb_class_args(
    rate_bps: int,
    ceil_bps: int | None,
    burst_bytes: int | None,
    cburst_bytes: int | None,
    prio: int | None,
) -> list[str]:
    if rate_bps <= 0:
        raise ValueError(f"rate_bps must be positive, got {rate_bps}")
    if ceil_bps is not None and ceil_bps < rate_bps:
        raise ValueError(f"ceil_bps {ceil_bps} is below rate_bps {rate_bps}")
    args = ["htb", "rate", f"{rate_bps}bit"]
    if ceil_bps is not None:
        args += ["ceil", f"{ceil_bps}bit"]
    if burst_bytes is not None:
        args += ["burst", str(burst_bytes)]
    if cburst_bytes is not None:
        args += ["cburst", str(cburst_bytes)]
    if prio is not None:
        args += ["prio", str(prio)]
    args += ["quantum", str(_quantum_bytes(max(rate_bps, ceil_bps or 0)))]
    return args


def _classid(minor: int) -> str:
    return f"{HTB_HANDLE}:{minor:x}"


def install_htb(
    dev: str,
    link_rate_bps: int,
    classes: Sequence[HtbClass],
    default_minor: int,
    filters: Sequence[HtbFilter] = (),
    netns: str | None = None,
) -> None:
    """Replace the root qdisc of ``dev`` with the HTB tree described in the module docstring."""
    minors = [c.minor for c in classes]
    if len(set(minors)) != len(minors):
        raise ValueError(f"duplicate HTB class minors: {minors}")
    if any(m <= HTB_PARENT_MINOR for m in minors):
        raise ValueError(f"leaf minors must be >= 2 (1:1 is the parent class): {minors}")
    if default_minor not in minors:
        raise ValueError(f"default_minor {default_minor} is not one of the classes {minors}")
    for f in filters:
        if f.minor not in minors:
            raise ValueError(f"filter targets unknown class minor {f.minor}")
    clear_root(dev, netns)
    run_tc(
        ["qdisc", "add", "dev", dev, "root", "handle", f"{HTB_HANDLE}:", "htb",
         "default", f"{default_minor:x}", "r2q", str(_R2Q)],
        netns,
    )
    run_tc(
        ["class", "add", "dev", dev, "parent", f"{HTB_HANDLE}:", "classid",
         _classid(HTB_PARENT_MINOR)]
        + _htb_class_args(link_rate_bps, link_rate_bps, None, None, None),
        netns,
    )
    for c in classes:
        run_tc(
            ["class", "add", "dev", dev, "parent", _classid(HTB_PARENT_MINOR), "classid",
             _classid(c.minor)]
            + _htb_class_args(c.rate_bps, c.ceil_bps or link_rate_bps, c.burst_bytes,
                              c.cburst_bytes, c.prio),
            netns,
        )
    for f in filters:
        add_htb_filter(dev, f, netns)


def add_htb_filter(dev: str, flt: HtbFilter, netns: str | None = None) -> None:
    """Add one u32 filter on the HTB root steering matching IPv4 frames to class 1:<minor>."""
    matches: list[str] = []
    if flt.dscp is not None:
        if not 0 <= flt.dscp <= 63:
            raise ValueError(f"dscp must be 0..63, got {flt.dscp}")
        matches += ["match", "ip", "dsfield", hex(flt.dscp << 2), "0xfc"]
    if flt.udp_dport is not None or flt.udp_sport is not None:
        # u32's "ip sport/dport" sit at fixed offsets 20/22: IPv4 headers without
        # options, which is what bufferlab's hosts send.
        matches += ["match", "ip", "protocol", "17", "0xff"]
        if flt.udp_dport is not None:
            matches += ["match", "ip", "dport", str(flt.udp_dport), "0xffff"]
        if flt.udp_sport is not None:
            matches += ["match", "ip", "sport", str(flt.udp_sport), "0xffff"]
    if not matches:
        raise ValueError("an HtbFilter needs dscp, udp_dport or udp_sport")
    run_tc(
        ["filter", "add", "dev", dev, "parent", f"{HTB_HANDLE}:", "protocol", "ip",
         "prio", str(flt.pref), "u32"] + matches + ["flowid", _classid(flt.minor)],
        netns,
    )


def change_htb_rate(
    dev: str,
    minor: int,
    rate_bps: int,
    ceil_bps: int | None = None,
    burst_bytes: int | None = None,
    netns: str | None = None,
) -> None:
    """Change a leaf's rate (and ceil, default = rate) live, without touching its queue."""
    run_tc(
        ["class", "change", "dev", dev, "parent", _classid(HTB_PARENT_MINOR), "classid",
         _classid(minor)]
        + _htb_class_args(rate_bps, ceil_bps if ceil_bps is not None else rate_bps,
                          burst_bytes, None, None),
        netns,
    )


# ---------------------------------------------------------------------------------------
# TBF and FIFOs


def _tbf_args(rate_bps: int, burst_bytes: int, limit_bytes: int) -> list[str]:
    if rate_bps <= 0 or burst_bytes <= 0 or limit_bytes <= 0:
        raise ValueError(
            f"TBF needs positive rate_bps, burst_bytes, limit_bytes; got {rate_bps}, "
            f"{burst_bytes}, {limit_bytes}"
        )
    return ["tbf", "rate", f"{rate_bps}bit", "burst", str(burst_bytes), "limit", str(limit_bytes)]


def install_tbf(
    dev: str, rate_bps: int, burst_bytes: int, limit_bytes: int, netns: str | None = None
) -> None:
    """Replace the root qdisc of ``dev`` with a token bucket: rate, bucket size, queue limit."""
    run_tc(["qdisc", "replace", "dev", dev, "root"] + _tbf_args(rate_bps, burst_bytes, limit_bytes),
           netns)


def change_tbf(
    dev: str, rate_bps: int, burst_bytes: int, limit_bytes: int, netns: str | None = None
) -> None:
    """Change the root TBF's parameters live (the qdisc must already be a TBF)."""
    run_tc(["qdisc", "change", "dev", dev, "root"] + _tbf_args(rate_bps, burst_bytes, limit_bytes),
           netns)


def install_pfifo(dev: str, limit_packets: int, netns: str | None = None) -> None:
    """Replace the root qdisc of ``dev`` with a FIFO holding at most ``limit_packets`` frames."""
    if limit_packets <= 0:
        raise ValueError(f"limit_packets must be positive, got {limit_packets}")
    run_tc(["qdisc", "replace", "dev", dev, "root", "pfifo", "limit", str(limit_packets)], netns)


def install_bfifo(dev: str, limit_bytes: int, netns: str | None = None) -> None:
    """Replace the root qdisc of ``dev`` with a FIFO holding at most ``limit_bytes`` bytes."""
    if limit_bytes <= 0:
        raise ValueError(f"limit_bytes must be positive, got {limit_bytes}")
    run_tc(["qdisc", "replace", "dev", dev, "root", "bfifo", "limit", str(limit_bytes)], netns)


# ---------------------------------------------------------------------------------------
# Statistics


@dataclass(frozen=True)
class QdiscStats:
    """A qdisc's configuration and counters as ``tc -s -j qdisc show`` reports them."""

    kind: str
    handle: str
    parent: str | None
    sent_bytes: int
    sent_packets: int
    drops: int
    overlimits: int
    backlog_bytes: int
    backlog_packets: int
    rate_bps: int | None = None
    burst_bytes: int | None = None
    limit_bytes: int | None = None
    limit_packets: int | None = None
    default_class: str | None = None


@dataclass(frozen=True)
class ClassStats:
    """An HTB class's configuration and counters parsed from ``tc -s -d class show``.

    tc prints class rates and sizes rounded to its display units (e.g. ``1234Mbit``,
    ``3Kb``), so values read back are exact only for round figures.
    """

    classid: str
    parent: str | None
    rate_bps: int
    ceil_bps: int
    burst_bytes: int
    cburst_bytes: int
    sent_bytes: int
    sent_packets: int
    drops: int
    overlimits: int
    backlog_bytes: int
    backlog_packets: int
    borrowed: int
    lended: int

    @property
    def minor(self) -> int:
        """The class minor number (the N of 1:N)."""
        return int(self.classid.split(":")[1], 16)


def qdisc_stats(dev: str, netns: str | None = None) -> list[QdiscStats]:
    """Read every qdisc on ``dev`` with its counters (JSON output, raw sizes)."""
    out = run_tc(["-s", "-j", "-raw", "qdisc", "show", "dev", dev], netns)
    result = []
    for q in json.loads(out or "[]"):
        opts = q.get("options", {})
        kind = q["kind"]
        rate = opts.get("rate")
        result.append(
            QdiscStats(
                kind=kind,
                handle=q["handle"],
                parent=None if q.get("root") else q.get("parent"),
                sent_bytes=q.get("bytes", 0),
                sent_packets=q.get("packets", 0),
                drops=q.get("drops", 0),
                overlimits=q.get("overlimits", 0),
                backlog_bytes=q.get("backlog", 0),
                backlog_packets=q.get("qlen", 0),
                # tc's JSON gives rates in bytes/s.
                rate_bps=rate * 8 if isinstance(rate, int) else None,
                burst_bytes=opts.get("burst") if isinstance(opts.get("burst"), int) else None,
                limit_bytes=opts.get("limit") if kind in ("tbf", "bfifo") else None,
                limit_packets=opts.get("limit") if kind == "pfifo" else None,
                default_class=opts.get("default"),
            )
        )
    return result


def root_qdisc_stats(dev: str, netns: str | None = None) -> QdiscStats:
    """The root qdisc's statistics of ``dev``."""
    for q in qdisc_stats(dev, netns):
        if q.parent is None:
            return q
    raise TcError(["tc", "qdisc", "show", "dev", dev], "no root qdisc reported")


_RATE_UNITS = {"bit": 1, "Kbit": 10**3, "Mbit": 10**6, "Gbit": 10**9, "Tbit": 10**12}
_SIZE_UNITS = {"b": 1, "Kb": 1024, "Mb": 1024**2, "Gb": 1024**3}
_RATE_RE = re.compile(r"^([\d.]+)([KMGT]?bit)$")
_SIZE_RE = re.compile(r"^([\d.]+)([KMG]?b)(?:/\d+)?$")


def parse_rate_bps(text: str) -> int:
    """Parse a rate as tc prints it (``10Mbit``, ``500Kbit``, ``64bit``) into bit/s."""
    m = _RATE_RE.match(text)
    if not m:
        raise ValueError(f"not a tc rate: {text!r}")
    return round(float(m.group(1)) * _RATE_UNITS[m.group(2)])


def parse_size_bytes(text: str) -> int:
    """Parse a size as tc prints it (``1600b``, ``3Kb``, ``1388b/1``) into bytes."""
    m = _SIZE_RE.match(text)
    if not m:
        raise ValueError(f"not a tc size: {text!r}")
    return round(float(m.group(1)) * _SIZE_UNITS[m.group(2)])


_CLASS_HEAD_RE = re.compile(r"^class htb (\S+) (?:parent (\S+)|root)")
_SENT_RE = re.compile(
    r"Sent (\d+) bytes (\d+) pkt \(dropped (\d+), overlimits (\d+) requeues \d+\)"
)
_BACKLOG_RE = re.compile(r"backlog (\S+) (\d+)p")
_LEND_RE = re.compile(r"lended: (\d+) borrowed: (\d+)")


def _field(tokens: list[str], name: str) -> str:
    return tokens[tokens.index(name) + 1]


def parse_htb_classes(text: str) -> list[ClassStats]:
    """Parse the text of ``tc -s -d class show`` (HTB classes) into ClassStats."""
    result = []
    blocks = re.split(r"\n(?=class )", text.strip())
    for block in blocks:
        head = _CLASS_HEAD_RE.match(block)
        if not head:
            continue
        tokens = block.split("\n", 1)[0].split()
        sent = _SENT_RE.search(block)
        backlog = _BACKLOG_RE.search(block)
        lend = _LEND_RE.search(block)
        if not (sent and backlog):
            raise ValueError(f"HTB class block without statistics: {block!r}")
        result.append(
            ClassStats(
                classid=head.group(1),
                parent=head.group(2),
                rate_bps=parse_rate_bps(_field(tokens, "rate")),
                ceil_bps=parse_rate_bps(_field(tokens, "ceil")),
                burst_bytes=parse_size_bytes(_field(tokens, "burst")),
                cburst_bytes=parse_size_bytes(_field(tokens, "cburst")),
                sent_bytes=int(sent.group(1)),
                sent_packets=int(sent.group(2)),
                drops=int(sent.group(3)),
                overlimits=int(sent.group(4)),
                backlog_bytes=parse_size_bytes(backlog.group(1)),
                backlog_packets=int(backlog.group(2)),
                lended=int(lend.group(1)) if lend else 0,
                borrowed=int(lend.group(2)) if lend else 0,
            )
        )
    return result


def class_stats(dev: str, netns: str | None = None) -> dict[int, ClassStats]:
    """Read the HTB classes of ``dev`` keyed by minor number (tc 6.1 has no JSON for classes)."""
    out = run_tc(["-s", "-d", "class", "show", "dev", dev], netns)
    return {c.minor: c for c in parse_htb_classes(out)}
