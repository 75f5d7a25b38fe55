"""The buffer program's config file (JSON): schema, defaults and validation.

One file describes one switch running `p4src/buffer_switch.p4`: its id, the shared pool,
the ports and their thresholds, BCN and PAUSE/PFC parameters, the DSCP class map, the
traffic manager's scheduler and the forwarding entries. Switch-wide sections
(`threshold`/`alpha`, `queue_cap_bytes`, `ecn_k_bytes`, `bcn`, `pause`, `scheduler`) apply to every port; a port's own section overrides them key by key. Every
problem is reported with its key path (`ports.3.threshold: 150% is above 100%`), all of
them at once, including the ranges the program itself does not check (p4src/README.md).
The reference with every key, unit and default is controller/README.md.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from bufferlab.controller.values import MAC

PAGE_BYTES = 64  # BCN counts 64-byte pages (p4src/README.md "Units")
QUANTUM_BITS = 512  # one PAUSE quantum is 512 bit times of the link
MAX_PORT = 510  # bit<9> ports; 511 is v1model's drop port
MAX_SESSION = 511  # BMv2's P4Runtime clone session ids are 1..511
MAX_GROUP = 32767  # BMv2 keeps multicast groups from 32768 for clone sessions
MAX_ALPHA_SHIFT = 16  # the program shifts a 64-bit byte count by alpha_shift
U32 = (1 << 32) - 1
NO_CAP = U32  # queue_cap's "no cap"

# Seed 001/003 values (congestion.md §9), used where a section leaves a key out.
BCN_DEFAULTS = {"qeq_bytes": 24000, "w": 2, "qsc_bytes": 0, "sample_bytes": 150000,
                "jitter_bytes": 20000}
PAUSE_DEFAULTS = {"xoff_bytes": 140800, "xon_bytes": 128000, "quanta": 0xFFFF}

TOP_KEYS = {"switch_id", "pool_bytes", "priority_queues", "port_session_base",
            "all_ports_session", "flood_group", "threshold", "alpha", "queue_cap_bytes", "ecn_k_bytes",
            "bcn", "pause", "classes", "scheduler", "ports", "forwarding", "tofino_tm"}
PORT_KEYS = {"threshold", "alpha", "queue_caps_bytes", "ecn_k_bytes", "bcn", "pause", "scheduler"}
# What a congestion point sends (the bcn_feedback table): Fb's Qoff term saturated at
# ±qoff_max_bytes, Fb quantised to fb_bits bits over fb_range_bytes (default Qeq·(1 + 2W)),
# positive feedback to "tagged" sources or to "any".
BCN_FEEDBACK_KEYS = {"qoff_max_bytes", "fb_bits", "fb_range_bytes", "positive_to"}
BCN_KEYS = {"enable", *BCN_DEFAULTS, *BCN_FEEDBACK_KEYS}
POSITIVE_TO = ("tagged", "any")
MAX_FB_BITS = 16
MAX_FB_RANGE_PAGES = 0xFFFF  # the program's quantisation is exact up to here (p4src/README.md)
PAUSE_KEYS = {"mode", "xoff_bytes", "xon_bytes", "quanta", "refresh_us", "link_rate_bps"}
PAUSE_MODES = ("802.3x", "pfc", "off")
FORWARDING_KEYS = {"l2", "routes", "runtime_json"}
L2_KEYS = {"mac", "port"}
ROUTE_KEYS = {"prefix", "next_hop_mac", "port"}
PERCENT = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*%\s*$")


class ConfigError(ValueError):
    """A config file with problems: `errors` lists each as `key.path: reason`."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        super().__init__("\n".join(errors))


@dataclass(frozen=True)
class Threshold:
    """A port's share of the pool: static percent, or dynamic alpha = alpha_num / 2^alpha_shift."""

    percent: int | None = 100
    alpha_num: int = 0
    alpha_shift: int = 0

    @property
    def dynamic(self) -> bool:
        """Whether this is a dynamic (alpha) threshold."""
        return self.percent is None

    def action(self) -> tuple[str, dict[str, int]]:
        """The buffer_threshold action and its parameters."""
        if self.dynamic:
            return "dynamic_threshold", {"alpha_num": self.alpha_num, "alpha_shift": self.alpha_shift}
        return "static_threshold", {"percent": self.percent}


@dataclass(frozen=True)
class Bcn:
    """BCN congestion point parameters of one (port, queue); bytes, Qsc 0 = no severe threshold."""

    enable: bool = False
    qeq_bytes: int = BCN_DEFAULTS["qeq_bytes"]
    w: int = BCN_DEFAULTS["w"]
    qsc_bytes: int = BCN_DEFAULTS["qsc_bytes"]
    sample_bytes: int = BCN_DEFAULTS["sample_bytes"]
    jitter_bytes: int = BCN_DEFAULTS["jitter_bytes"]
    qoff_max_bytes: int | None = None  # None: Qoff unsaturated in Fb
    fb_bits: int | None = None  # None: Fb carried as computed
    fb_range_bytes: int | None = None  # None: Qeq·(1 + 2W)
    positive_to: str = "tagged"

    @property
    def fb_max_bytes(self) -> int:
        """Fbmax = Qeq·(1 + 2W), bytes: the quantisation's default range."""
        return self.qeq_bytes * (1 + 2 * self.w)

    def action(self) -> tuple[str, dict[str, int]]:
        """The bcn_config action and its parameters (Qeq and Qsc in pages)."""
        if not self.enable:
            return "bcn_disable", {}
        return "bcn_enable", {"qeq_pages": self.qeq_bytes // PAGE_BYTES, "w": self.w,
                              "qsc_pages": self.qsc_bytes // PAGE_BYTES,
                              "sample_bytes": self.sample_bytes,
                              "jitter_bytes": self.jitter_bytes}

    def feedback_action(self) -> tuple[str, dict[str, int]]:
        """The bcn_feedback action and its parameters (p4src/include/bcn_config.p4)."""
        params = {"qoff_max_pages": (self.qoff_max_bytes or 0) // PAGE_BYTES,
                  "positive_any": int(self.positive_to == "any"), "fb_range_pages": 0,
                  "fb_code_mul": 0, "fb_step_mul": 0}
        if self.fb_bits is not None:
            range_pages = (self.fb_range_bytes or self.fb_max_bytes) // PAGE_BYTES
            code_mul, step_mul = fb_multipliers(self.fb_bits, range_pages)
            params.update(fb_range_pages=range_pages, fb_code_mul=code_mul, fb_step_mul=step_mul)
        return "bcn_send", params


#: What a bcn_feedback entry holds when the program's default applies.
DEFAULT_FEEDBACK = Bcn().feedback_action()


def fb_multipliers(bits: int, range_pages: int) -> tuple[int, int]:
    """bcn_feedback's fb_code_mul = ⌈2^32·(2^bits − 1)/range⌉ and fb_step_mul =
    ⌈2^32·range/(2^bits − 1)⌉: the program's code = ⌊|Fb|·code_mul / 2^32⌋ and |Fb'| =
    ⌊code·step_mul / 2^32⌋ are then ⌊|Fb|·(2^bits − 1)/range⌋ and ⌊code·range/(2^bits − 1)⌋
    exactly, for 2^bits − 1 ≤ range ≤ 65535 pages."""
    steps = (1 << bits) - 1
    return -(-(steps << 32) // range_pages), -(-(range_pages << 32) // steps)


def quantised_fb_pages(fb_pages: int, bits: int, range_pages: int) -> int:
    """Fb as a congestion point with `bits` over `range_pages` sends it (the exact
    arithmetic the program's multipliers reproduce): |Fb| saturated at the range, cut down
    to whole steps, in whole pages rounded down, sign kept."""
    steps = (1 << bits) - 1
    code = min(abs(fb_pages), range_pages) * steps // range_pages
    magnitude = code * range_pages // steps
    return -magnitude if fb_pages < 0 else magnitude


@dataclass(frozen=True)
class Pause:
    """Flow control of one egress port's buffer: mode 802.3x, pfc or off; bytes, quanta, µs."""

    mode: str = "off"
    xoff_bytes: int = PAUSE_DEFAULTS["xoff_bytes"]
    xon_bytes: int = PAUSE_DEFAULTS["xon_bytes"]
    quanta: int = PAUSE_DEFAULTS["quanta"]
    refresh_us: int = 0

    def action(self) -> tuple[str, dict[str, int]]:
        """The pause_config action and its parameters."""
        if self.mode == "off":
            return "pause_disable", {}
        name = "pause_enable" if self.mode == "802.3x" else "pfc_enable"
        return name, {"xoff_bytes": self.xoff_bytes, "xon_bytes": self.xon_bytes,
                      "quanta": self.quanta, "refresh_us": self.refresh_us}


@dataclass(frozen=True)
class Scheduler:
    """How the traffic manager serves a port's queues: strict priority (no weights), or
    weighted round robin with each queue's weight in % of the port, queue 0 first."""

    weights_percent: tuple[int, ...] | None = None

    @property
    def strict(self) -> bool:
        """Whether the highest non-empty queue always goes first."""
        return self.weights_percent is None


@dataclass(frozen=True)
class PortConfig:
    """One port's effective settings (its own sections over the switch-wide ones)."""

    port: int
    threshold: Threshold
    queue_caps_bytes: tuple[int, ...]  # per queue, NO_CAP = no cap
    bcn: Bcn
    pause: Pause
    scheduler: Scheduler | None = None  # None: the switch keeps its own
    ecn_k_bytes: int | None = None  # CE above this many bytes queued ahead; None: no marking


@dataclass(frozen=True)
class L2Entry:
    """Bridge frames for `mac` to `port`."""

    mac: str
    port: int


@dataclass(frozen=True)
class Route:
    """Route `prefix`/`prefix_len` to `port`, rewriting the destination MAC to `next_hop_mac`."""

    prefix: str
    prefix_len: int
    next_hop_mac: str
    port: int


@dataclass
class Config:
    """A checked config file; switch-wide values become the tables' default actions."""

    switch_id: int
    pool_bytes: int
    ports: dict[int, PortConfig]
    priority_queues: int = 1
    port_session_base: int = 1
    all_ports_session: int = MAX_SESSION
    flood_group: int = 1
    threshold: Threshold = field(default_factory=Threshold)
    queue_cap_bytes: int = NO_CAP
    ecn_k_bytes: int | None = None
    bcn: Bcn = field(default_factory=Bcn)
    pause: Pause = field(default_factory=Pause)
    scheduler: Scheduler | None = None
    classes: dict[int, int] = field(default_factory=dict)
    default_queue: int = 0
    l2: list[L2Entry] = field(default_factory=list)
    routes: list[Route] = field(default_factory=list)
    runtime_json: Path | None = None
    # The explicit `tofino_tm` section as written (checked): Tofino TM settings by BF
    # Runtime table, laid over what the other keys map to on a TNA program.
    tofino_tm: dict[str, Any] | None = None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _Checker:
    """Collects every problem with its key path while reading the raw JSON."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def fail(self, path: str, reason: str) -> None:
        self.errors.append(f"{path}: {reason}")

    def keys(self, raw: Any, allowed: set[str], path: str) -> dict:
        if not isinstance(raw, dict):
            self.fail(path or "(top level)", "must be an object")
            return {}
        for key in sorted(set(raw) - allowed):
            self.fail(_join(path, key), f"unknown key (known: {', '.join(sorted(allowed))})")
        return raw

    def integer(self, raw: dict, key: str, path: str, low: int, high: int,
                default: int | None = None) -> int | None:
        """raw[key] as an int in low..high (None, with the error noted, if it is not)."""
        where = _join(path, key)
        if key not in raw:
            if default is None:
                self.fail(where, "required")
            return default
        return self.value(raw[key], where, low, high)

    def value(self, value: Any, where: str, low: int, high: int) -> int | None:
        """`value` as an int in low..high (None, with the error noted, if it is not)."""
        if not _is_int(value):
            self.fail(where, f"must be a whole number, not {value!r}")
            return None
        if value < low:
            self.fail(where, "must be positive" if low == 1 else f"{value} is below {low}")
            return None
        if value > high:
            self.fail(where, f"{value} is above {high}")
            return None
        return value

    def number_key(self, key: str, path: str, low: int, high: int) -> int | None:
        """A JSON object key that names a number (port, queue, DSCP) in low..high."""
        where = _join(path, key)
        if not re.fullmatch(r"\d+", key):
            self.fail(where, "must be a decimal number")
            return None
        value = int(key)
        if not low <= value <= high:
            self.fail(where, f"{value} is outside {low}..{high}")
            return None
        return value


def _join(path: str, key: str | int) -> str:
    return f"{path}.{key}" if path else str(key)


def parse_percent(text: Any, of: str = "the pool") -> tuple[int | None, str | None]:
    """A whole percentage 1..100 of something ("50%" of the pool) as (percent, None), or
    (None, reason)."""
    match = PERCENT.match(text) if isinstance(text, str) else None
    if match is None:
        return None, f'write a percentage of {of} such as "50%", not {text!r}'
    value = float(match.group(1))
    if value != int(value):
        return None, f"{match.group(1)}% is not a whole percent"
    if value > 100:
        return None, f"{int(value)}% is above 100%"
    if value < 1:
        return None, f"{int(value)}% is below 1%"
    return int(value), None


def parse_alpha(text: Any) -> tuple[tuple[int, int] | None, str | None]:
    """A dynamic-threshold alpha ("1/8", "2", 0.25) as ((alpha_num, alpha_shift), None) or (None, reason)."""
    try:
        if isinstance(text, bool) or not isinstance(text, (str, int, float)):
            raise ValueError
        alpha = Fraction(str(text).strip())
    except (ValueError, ZeroDivisionError):
        return None, f'write alpha as a fraction such as "1/8" or a number, not {text!r}'
    if alpha <= 0:
        return None, "must be positive"
    shift = alpha.denominator.bit_length() - 1
    if alpha.denominator != 1 << shift or shift > MAX_ALPHA_SHIFT:
        return None, f"{alpha} is not n/2^k with k ≤ {MAX_ALPHA_SHIFT} (the program divides by shifting)"
    if alpha.numerator > 0xFFFF:
        return None, f"{alpha}: numerator {alpha.numerator} is above 65535"
    return (alpha.numerator, shift), None


def _threshold(c: _Checker, raw: dict, path: str, inherited: Threshold) -> Threshold:
    if "threshold" in raw and "alpha" in raw:
        c.fail(path or "(top level)", "give threshold or alpha, not both")
        return inherited
    if "threshold" in raw:
        percent, reason = parse_percent(raw["threshold"])
        if reason:
            c.fail(_join(path, "threshold"), reason)
            return inherited
        return Threshold(percent=percent)
    if "alpha" in raw:
        alpha, reason = parse_alpha(raw["alpha"])
        if reason:
            c.fail(_join(path, "alpha"), reason)
            return inherited
        return Threshold(percent=None, alpha_num=alpha[0], alpha_shift=alpha[1])
    return inherited


def _scheduler(c: _Checker, raw: Any, path: str, queues: int) -> Scheduler | None:
    """`"strict"`, or `{"QUEUE": "P%", ...}` with a weight for every queue, adding up to at
    most 100 % (the shares when every queue is busy are the weights over their sum)."""
    if raw == "strict":
        return Scheduler()
    if not isinstance(raw, dict) or not raw:
        c.fail(path, f'write "strict" or weights {{"QUEUE": "P%", ...}}, not {raw!r}')
        return None
    weights: dict[int, int] = {}
    for key, text in raw.items():
        queue = c.number_key(key, path, 0, queues - 1)
        percent, reason = parse_percent(text, of="the port")
        if reason:
            c.fail(_join(path, key), reason)
        elif queue is not None and percent is not None:
            weights[queue] = percent
    if len(weights) != len(raw):
        return None
    missing = [q for q in range(queues) if q not in weights]
    if missing:
        c.fail(path, f"queue {missing[0]} has no weight (give each of the {queues} queues one)")
        return None
    if sum(weights.values()) > 100:
        c.fail(path, f"the weights add up to {sum(weights.values())}%, above 100%")
        return None
    return Scheduler(tuple(weights[q] for q in range(queues)))


def _sections(switch_raw: Any, port_raw: Any, switch_path: str, port_path: str,
              allowed: set[str]) -> dict[str, tuple[Any, str]]:
    """A port's section merged over the switch-wide one: key -> (value, key path it came from)."""
    merged: dict[str, tuple[Any, str]] = {}
    for raw, path in ((switch_raw, switch_path), (port_raw, port_path)):
        if not isinstance(raw, dict):
            continue  # absent, or reported where the section itself is checked
        for key, value in raw.items():
            if key in allowed:
                merged[key] = (value, _join(path, key))
    return merged


def _merged_int(c: _Checker, merged: dict, key: str, low: int, high: int, default: int) -> int | None:
    if key not in merged:
        return default
    value, where = merged[key]
    return c.value(value, where, low, high)


def _bcn(c: _Checker, merged: dict[str, tuple[Any, str]], section: str, present: bool) -> Bcn:
    """A BCN section; one that is present but says nothing enables BCN with the defaults."""
    enable = True
    if "enable" in merged:
        enable, where = merged["enable"]
        if not isinstance(enable, bool):
            c.fail(where, f"must be true or false, not {enable!r}")
            return Bcn()
    elif not present:
        return Bcn()
    values = {}
    for key, default in BCN_DEFAULTS.items():
        low = 0 if key in ("qsc_bytes", "jitter_bytes") else 1
        values[key] = _merged_int(c, merged, key, low, U32, default)
    if None in values.values():
        return Bcn()
    for key in ("qeq_bytes", "qsc_bytes"):
        if values[key] % PAGE_BYTES:
            where = merged[key][1]
            c.fail(where, f"{values[key]} is not a multiple of {PAGE_BYTES} (BCN counts 64-byte pages)")
    if values["w"] > 0xFF:  # bcn_enable's w is bit<8>
        c.fail(merged["w"][1], f"{values['w']} is above 255")
    if values["jitter_bytes"] >= values["sample_bytes"]:
        jitter_where = merged.get("jitter_bytes", (0, f"{section}.jitter_bytes"))[1]
        sample_where = merged.get("sample_bytes", (0, f"{section}.sample_bytes"))[1]
        c.fail(jitter_where, f"{values['jitter_bytes']} is not below {sample_where}"
                             f" {values['sample_bytes']}")
    return Bcn(enable=enable, **values, **_bcn_feedback(c, merged, section, values))


def _bcn_feedback(c: _Checker, merged: dict[str, tuple[Any, str]], section: str,
                  values: dict[str, Any]) -> dict[str, Any]:
    """The keys of what the congestion point sends: qoff_max_bytes, fb_bits, fb_range_bytes,
    positive_to."""
    out: dict[str, Any] = {}
    if merged.get("qoff_max_bytes", (None,))[0] is not None:
        value, where = merged["qoff_max_bytes"]
        qoff_max = c.value(value, where, PAGE_BYTES, U32 // PAGE_BYTES * PAGE_BYTES)
        if qoff_max is not None and qoff_max % PAGE_BYTES:
            c.fail(where, f"{qoff_max} is not a multiple of {PAGE_BYTES} (Qoff counts 64-byte"
                          " pages)")
        elif qoff_max is not None:
            out["qoff_max_bytes"] = qoff_max
    if "positive_to" in merged:
        value, where = merged["positive_to"]
        if value in POSITIVE_TO:
            out["positive_to"] = value
        else:
            c.fail(where, f'{value!r}: write "tagged" (only to sources whose rate-limiter tag'
                          ' names this congestion point) or "any"')
    bits = None
    if merged.get("fb_bits", (None,))[0] is not None:
        bits = c.value(*merged["fb_bits"], 1, MAX_FB_BITS)
        out["fb_bits"] = bits
    if merged.get("fb_range_bytes", (None,))[0] is None:
        range_bytes = values["qeq_bytes"] * (1 + 2 * values["w"])
        range_where = f"{section}.fb_range_bytes (default Qeq·(1 + 2W) = {range_bytes})"
    else:
        value, range_where = merged["fb_range_bytes"]
        if "fb_bits" not in out:
            c.fail(range_where, "needs fb_bits (the range of a quantised Fb)")
            return out
        range_bytes = c.value(value, range_where, PAGE_BYTES, MAX_FB_RANGE_PAGES * PAGE_BYTES)
        if range_bytes is None:
            return out
        if range_bytes % PAGE_BYTES:
            c.fail(range_where, f"{range_bytes} is not a multiple of {PAGE_BYTES}"
                                " (Fb counts 64-byte pages)")
            return out
        out["fb_range_bytes"] = range_bytes
    if bits is not None:
        pages = range_bytes // PAGE_BYTES
        if not (1 << bits) - 1 <= pages <= MAX_FB_RANGE_PAGES:
            c.fail(range_where, f"{pages} pages: with fb_bits {bits} the range must be"
                                f" {(1 << bits) - 1}..{MAX_FB_RANGE_PAGES} pages (a step of at"
                                " least one page, and the program's arithmetic)")
    return out


def _pause(c: _Checker, merged: dict[str, tuple[Any, str]], section: str, present: bool) -> Pause:
    """A PAUSE section; one that is present turns on 802.3x unless its mode says otherwise."""
    if not present:
        return Pause()
    mode, mode_where = merged.get("mode", ("802.3x", ""))
    if mode not in PAUSE_MODES:
        c.fail(mode_where, f"{mode!r} is not one of {', '.join(PAUSE_MODES)}")
        return Pause()
    if mode == "off":
        return Pause()
    xoff = _merged_int(c, merged, "xoff_bytes", 1, U32, PAUSE_DEFAULTS["xoff_bytes"])
    xon = _merged_int(c, merged, "xon_bytes", 0, U32, PAUSE_DEFAULTS["xon_bytes"])
    quanta = _merged_int(c, merged, "quanta", 1, 0xFFFF, PAUSE_DEFAULTS["quanta"])
    rate = _merged_int(c, merged, "link_rate_bps", 1, 1 << 48, 0) if "link_rate_bps" in merged else None
    if xoff is not None and xon is not None and xon > xoff:
        xon_where = merged.get("xon_bytes", (0, f"{section}.xon_bytes"))[1]
        xoff_where = merged.get("xoff_bytes", (0, f"{section}.xoff_bytes"))[1]
        c.fail(xon_where, f"{xon} is above {xoff_where} {xoff}")
    pause_us = quanta * QUANTUM_BITS * 1_000_000 / rate if quanta and rate else None
    if "refresh_us" in merged:
        refresh = _merged_int(c, merged, "refresh_us", 1, (1 << 48) - 1, 0)
        if refresh is not None and pause_us is not None and refresh >= pause_us:
            c.fail(merged["refresh_us"][1], f"{refresh} µs is not shorter than the pause time"
                                            f" {pause_us:g} µs ({quanta} quanta at {rate} bit/s)")
    elif pause_us is not None:
        refresh = max(1, int(pause_us // 2))  # refresh at half the pause time (congestion.md §2.1)
    else:
        c.fail(f"{section}.refresh_us", "required (or give link_rate_bps to refresh at half"
                                           " the pause time)")
        refresh = None
    if None in (xoff, xon, quanta, refresh):
        return Pause()
    return Pause(mode=mode, xoff_bytes=xoff, xon_bytes=xon, quanta=quanta, refresh_us=refresh)


def _mac(c: _Checker, raw: dict, key: str, path: str) -> str | None:
    where = _join(path, key)
    value = raw.get(key)
    if value is None:
        c.fail(where, "required")
        return None
    if not (isinstance(value, str) and MAC.match(value)):
        c.fail(where, f"{value!r} is not a MAC address (aa:bb:cc:dd:ee:ff)")
        return None
    return value.lower().replace("-", ":")


def _forwarding(c: _Checker, raw: Any, ports: set[int], base_dir: Path, config: Config) -> None:
    raw = c.keys(raw, FORWARDING_KEYS, "forwarding")
    seen_macs: dict[str, str] = {}
    for i, entry in enumerate(_list(c, raw.get("l2", []), "forwarding.l2")):
        path = f"forwarding.l2.{i}"
        entry = c.keys(entry, L2_KEYS, path)
        if not entry:
            continue
        mac = _mac(c, entry, "mac", path)
        port = _forwarding_port(c, entry, path, ports)
        if mac in seen_macs:
            c.fail(f"{path}.mac", f"{mac} is already in {seen_macs[mac]}")
        elif mac is not None and port is not None:
            seen_macs[mac] = path
            config.l2.append(L2Entry(mac, port))
    seen_prefixes: dict[tuple[str, int], str] = {}
    for i, entry in enumerate(_list(c, raw.get("routes", []), "forwarding.routes")):
        path = f"forwarding.routes.{i}"
        entry = c.keys(entry, ROUTE_KEYS, path)
        if not entry:
            continue
        network = None
        if "prefix" not in entry:
            c.fail(f"{path}.prefix", "required")
        else:
            try:
                network = ipaddress.IPv4Network(str(entry["prefix"]), strict=True)
            except ValueError as err:
                c.fail(f"{path}.prefix", f"{entry['prefix']!r} is not an IPv4 prefix"
                                         f" a.b.c.d/len ({err})")
        mac = _mac(c, entry, "next_hop_mac", path)
        port = _forwarding_port(c, entry, path, ports)
        if network is not None:
            key = (str(network.network_address), network.prefixlen)
            if key in seen_prefixes:
                c.fail(f"{path}.prefix", f"{network} is already in {seen_prefixes[key]}")
                continue
            seen_prefixes[key] = path
        if network is not None and mac is not None and port is not None:
            config.routes.append(Route(str(network.network_address), network.prefixlen, mac, port))
    if "runtime_json" in raw:
        name = raw["runtime_json"]
        if not isinstance(name, str) or not name:
            c.fail("forwarding.runtime_json", "must be a file name (the tutorials' sN-runtime.json)")
        elif not (base_dir / name).is_file():
            c.fail("forwarding.runtime_json", f"{name}: no such file (relative to the config file)")
        else:
            config.runtime_json = base_dir / name


def _list(c: _Checker, raw: Any, path: str) -> list:
    if not isinstance(raw, list):
        c.fail(path, "must be a list")
        return []
    return raw


def _forwarding_port(c: _Checker, entry: dict, path: str, ports: set[int]) -> int | None:
    port = c.integer(entry, "port", path, 0, MAX_PORT)
    if port is not None and port not in ports:
        c.fail(f"{path}.port", f"{port} is not in ports")
        return None
    return port


def _classes(c: _Checker, raw: Any, queues: int, config: Config) -> None:
    if not isinstance(raw, dict):
        c.fail("classes", 'must be an object {"DSCP": queue, ..., "default": queue}')
        return
    for key, queue in raw.items():
        where = f"classes.{key}"
        if not _is_int(queue) or not 0 <= queue < queues:
            c.fail(where, f"queue {queue!r} is not below priority_queues {queues}")
            continue
        if key == "default":
            config.default_queue = queue
            continue
        dscp = c.number_key(key, "classes", 0, 63)
        if dscp is not None:
            config.classes[dscp] = queue


def _tofino_tm(c: _Checker, section: Any, config: Config) -> None:
    """Checks the `tofino_tm` section (each problem by key path) and keeps it."""
    # Imported here: tofino_tm builds on this module (ConfigError, Config).
    from bufferlab.controller.tofino_tm import tm_commands_from
    try:
        tm_commands_from({"tofino_tm": section})
    except ConfigError as err:
        c.errors.extend(err.errors)
        return
    config.tofino_tm = section


def parse_config(raw: Any, base_dir: Path = Path(".")) -> Config:
    """Check a config file's content; raises ConfigError listing every problem."""
    c = _Checker()
    raw = c.keys(raw, TOP_KEYS, "")
    if not raw:
        if not c.errors:
            c.fail("(top level)", "must be an object with switch_id, pool_bytes and ports")
        raise ConfigError(c.errors)
    switch_id = c.integer(raw, "switch_id", "", 0, 0xFFFF)
    pool_bytes = c.integer(raw, "pool_bytes", "", 1, U32)
    queues = c.integer(raw, "priority_queues", "", 1, 8, 1) or 1
    base = c.integer(raw, "port_session_base", "", 1, MAX_SESSION, 1)
    all_ports = c.integer(raw, "all_ports_session", "", 1, MAX_SESSION, MAX_SESSION)
    group = c.integer(raw, "flood_group", "", 1, MAX_GROUP, 1)
    threshold = _threshold(c, raw, "", Threshold())
    switch_cap = c.integer(raw, "queue_cap_bytes", "", 1, U32, NO_CAP)
    for key in ("bcn", "pause"):
        if key in raw:
            c.keys(raw[key], BCN_KEYS if key == "bcn" else PAUSE_KEYS, key)
    switch_bcn = _bcn(c, _sections(raw.get("bcn"), None, "bcn", "", BCN_KEYS), "bcn",
                      "bcn" in raw)
    switch_pause = _pause(c, _sections(raw.get("pause"), None, "pause", "", PAUSE_KEYS), "pause",
                          "pause" in raw)
    config = Config(switch_id=switch_id or 0, pool_bytes=pool_bytes or 1, ports={},
                    priority_queues=queues, port_session_base=base or 1,
                    all_ports_session=all_ports or MAX_SESSION, flood_group=group or 1,
                    threshold=threshold, queue_cap_bytes=switch_cap or NO_CAP,
                    bcn=switch_bcn, pause=switch_pause)
    if raw.get("ecn_k_bytes") is not None:
        config.ecn_k_bytes = c.value(raw["ecn_k_bytes"], "ecn_k_bytes", 0, U32)
    if "scheduler" in raw:
        config.scheduler = _scheduler(c, raw["scheduler"], "scheduler", queues)
    _classes(c, raw.get("classes", {}), queues, config)

    raw_ports = raw.get("ports")
    if raw_ports is None:
        c.fail("ports", 'required: {"PORT": {port settings}, ...} with every switch port')
        raw_ports = {}
    elif not isinstance(raw_ports, dict) or not raw_ports:
        c.fail("ports", 'must be a non-empty object {"PORT": {port settings}, ...}')
        raw_ports = {}
    for key, port_raw in raw_ports.items():
        port = c.number_key(key, "ports", 0, MAX_PORT)
        if port is None:
            continue
        path = f"ports.{key}"
        port_raw = c.keys(port_raw, PORT_KEYS, path)
        for section, allowed in (("bcn", BCN_KEYS), ("pause", PAUSE_KEYS)):
            if section in port_raw:
                c.keys(port_raw[section], allowed, f"{path}.{section}")
        caps = [config.queue_cap_bytes] * queues
        raw_caps = port_raw.get("queue_caps_bytes", {})
        if not isinstance(raw_caps, dict):
            c.fail(f"{path}.queue_caps_bytes", 'must be an object {"QUEUE": bytes or null}')
            raw_caps = {}
        for queue_key, cap in raw_caps.items():
            queue = c.number_key(queue_key, f"{path}.queue_caps_bytes", 0, queues - 1)
            if queue is None:
                continue
            if cap is None:
                caps[queue] = NO_CAP
            else:
                value = c.value(cap, f"{path}.queue_caps_bytes.{queue_key}", 1, U32)
                if value is not None:
                    caps[queue] = value
        bcn = switch_bcn
        if "bcn" in port_raw:
            bcn = _bcn(c, _sections(raw.get("bcn"), port_raw["bcn"], "bcn", f"{path}.bcn",
                                    BCN_KEYS), f"{path}.bcn", True)
        pause = switch_pause
        if "pause" in port_raw:
            pause = _pause(c, _sections(raw.get("pause"), port_raw["pause"], "pause",
                                        f"{path}.pause", PAUSE_KEYS), f"{path}.pause", True)
        scheduler = config.scheduler
        if "scheduler" in port_raw:
            scheduler = _scheduler(c, port_raw["scheduler"], f"{path}.scheduler", queues)
        ecn_k = config.ecn_k_bytes
        if "ecn_k_bytes" in port_raw:
            raw_k = port_raw["ecn_k_bytes"]
            ecn_k = None if raw_k is None else c.value(raw_k, f"{path}.ecn_k_bytes", 0, U32)
        config.ports[port] = PortConfig(port, _threshold(c, port_raw, path, threshold),
                                        tuple(caps), bcn, pause, scheduler, ecn_k)

    for port in sorted(config.ports):
        session = config.port_session_base + port
        if session > MAX_SESSION:
            c.fail(f"ports.{port}", f"its clone session port_session_base + {port} = {session}"
                                    f" is above {MAX_SESSION}")
        if session == config.all_ports_session:
            c.fail("all_ports_session", f"{session} is also the clone session of port {port}"
                                        f" (port_session_base {config.port_session_base} + {port})")
    if "forwarding" in raw:
        _forwarding(c, raw["forwarding"], set(config.ports), base_dir, config)
    if "tofino_tm" in raw:
        _tofino_tm(c, raw["tofino_tm"], config)
    if c.errors:
        # A switch-wide value merged into several ports is reported once.
        raise ConfigError(list(dict.fromkeys(c.errors)))
    return config


def port_threshold(key: str, text: Any, path: str) -> Threshold:
    """A live threshold change ("threshold" "50%" or "alpha" "1/8"); ConfigError naming path.key."""
    c = _Checker()
    threshold = _threshold(c, {key: text}, path, Threshold())
    if c.errors:
        raise ConfigError(c.errors)
    return threshold


def bcn_section(raw: dict[str, Any], section: str) -> Bcn:
    """One BCN section on its own (a live change); raises ConfigError naming `section`.key."""
    c = _Checker()
    bcn = _bcn(c, _sections(c.keys(raw, BCN_KEYS, section), None, section, "", BCN_KEYS), section,
               True)
    if c.errors:
        raise ConfigError(c.errors)
    return bcn


def pause_section(raw: dict[str, Any], section: str) -> Pause:
    """One PAUSE section on its own (a live change); raises ConfigError naming `section`.key."""
    c = _Checker()
    pause = _pause(c, _sections(c.keys(raw, PAUSE_KEYS, section), None, section, "", PAUSE_KEYS),
                   section, bool(raw))
    if c.errors:
        raise ConfigError(c.errors)
    return pause


def load_config(path: str | Path) -> Config:
    """Read and check a config file; `forwarding.runtime_json` is relative to it."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text())
    except OSError as err:
        raise ConfigError([f"{path}: cannot read: {err.strerror}"]) from None
    except json.JSONDecodeError as err:
        raise ConfigError([f"{path}: not JSON: {err.msg} at line {err.lineno}"
                           f" column {err.colno}"]) from None
    return parse_config(raw, path.parent)
