"""A host sender that reacts to the switch: BCN reaction point, PAUSE honouring, or both.

    python3 -m bufferlab.traffic.agents --dst 10.0.1.3 --rate-bps 8Mbit [--bcn] [--pause]
            [--bcn-option NAME=VALUE ...] [--frame-size 1000] [--duration-s 30] [--dev eth0]
            [--dscp 0] [--flow 1]

Run it on a host (in the Mininet CLI: `h1 python3 -m bufferlab.traffic.agents ...`). It sends
UDP data frames to `--dst` through `sender.RegulatedSender`, paced at `--rate-bps` (bit/s
of frames as the host sends them: without preamble, gap and FCS, unlike bufferlab-gen's
line rate). With `--bcn` the BCN reaction point lowers (and, on positive
feedback, raises) that rate and tags the frames with the RLT; with `--pause` a PAUSE stops
the sender until XON or the pause time runs out. `--bcn-option` turns on the reaction
point's 2006 features by their names in experiments/bcn/README.md (`drift_interval_ns=100000
drift_step_bps=1e6`, `severe=stop backoff_max_ns=100000 restart_rate_bps=1e6`,
`initial_rate=current`, `max_decrease=0.5`, ...). Each rate change is printed as it happens,
with the time since the start. The destination MAC follows the lab's address plan:
10.0.S.H is 08:00:00:00:SS:HH.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from scapy.arch import get_if_addr, get_if_hwaddr
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from bufferlab.traffic import layers
from bufferlab.traffic.agents.bcn import BcnAgent, ReactionPoint, RpConfig
from bufferlab.traffic.agents.pause import PauseAgent
from bufferlab.traffic.agents.sender import RegulatedSender
from bufferlab.traffic.generate import DEFAULT_DATA_PORT, parse_bps

FCS_BYTES = 4
HEADERS_BYTES = 14 + 20 + 8  # Ethernet, IPv4, UDP in front of the data header


class OfferedRate:
    """The sender as the RP sees it: never faster than the offered rate, which is also what
    "no limiter" means here (the sender would otherwise send as fast as the host can)."""

    def __init__(self, sender: RegulatedSender, offered_bps: int, start_s: float) -> None:
        """Pace `sender` at `offered_bps` from now on."""
        self.sender = sender
        self.offered_bps = offered_bps
        self.start_s = start_s
        sender.set_rate_bps(offered_bps)

    def set_rate_bps(self, rate_bps: int | None) -> None:
        """Apply the RP's rate, capped at the offered rate, and print it."""
        rate = self.offered_bps if rate_bps is None else min(rate_bps, self.offered_bps)
        self.sender.set_rate_bps(rate)
        print(f"{time.monotonic() - self.start_s:8.3f} s  rate {rate / 1e6:.3f} Mbit/s", flush=True)

    def set_rlt(self, cpid: int | None) -> None:
        """Tag frames with the RLT the RP asks for."""
        self.sender.set_rlt(cpid)

    def back_off_until(self, resume_ns: int) -> None:
        """Stop the sender for a BCN(0,0) back-off, and print it."""
        self.sender.back_off_until(resume_ns)
        print(f"{time.monotonic() - self.start_s:8.3f} s  BCN(0,0): stopped for "
              f"{max(resume_ns - time.time_ns(), 0) / 1e3:.0f} µs", flush=True)

    def add_sent_observer(self, observer: Callable[[int, int], None]) -> None:
        """Report the sender's frames (the RP's rate meter)."""
        self.sender.add_sent_observer(observer)


def bcn_options(pairs: Sequence[str]) -> dict[str, Any]:
    """`NAME=VALUE` words as RpConfig keywords (ints, floats or words); ValueError if bad."""
    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name or not text:
            raise ValueError(f"--bcn-option {pair!r}: write NAME=VALUE")
        value: Any = text
        for kind in (int, float):
            try:
                value = kind(text)
                break
            except ValueError:
                continue
        out[name] = value
    return out


def lab_mac(ip: str) -> str:
    """The lab's MAC of a host address 10.0.S.H: 08:00:00:00:SS:HH (hex)."""
    octets = ipaddress.IPv4Address(ip).packed
    return f"08:00:00:00:{octets[2]:02x}:{octets[3]:02x}"


def data_frames(args: argparse.Namespace, deadline_s: float) -> Iterator[bytes]:
    """Data frames (sequence numbered) until `deadline_s` on the monotonic clock."""
    head = (Ether(src=get_if_hwaddr(args.dev), dst=args.dst_mac or lab_mac(args.dst))
            / IP(src=get_if_addr(args.dev), dst=args.dst, tos=args.dscp << 2)
            / UDP(sport=args.port, dport=args.port, chksum=0))
    pad = bytes(max(args.frame_size - FCS_BYTES - HEADERS_BYTES - 16, 0))
    seq = 0
    while time.monotonic() < deadline_s:
        yield bytes(head / layers.BufferlabData(flow=args.flow, seq=seq) / pad)
        seq += 1


def main(argv: Sequence[str] | None = None) -> int:
    """Send until the duration is over; print rate changes and a summary."""
    parser = argparse.ArgumentParser(prog="python3 -m bufferlab.traffic.agents",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--dst", required=True, help="destination IPv4 address")
    parser.add_argument("--dst-mac", help="destination MAC (default: the lab's plan)")
    parser.add_argument("--rate-bps", type=parse_bps, required=True,
                        help="offered rate, bit/s of frames without FCS (8e6 or 8Mbit); also"
                             " the link rate PAUSE quanta are timed at")
    parser.add_argument("--frame-size", type=int, default=1000,
                        help="frame size in bytes with the FCS (default 1000)")
    parser.add_argument("--duration-s", type=float, default=30.0)
    parser.add_argument("--dev", default="eth0")
    parser.add_argument("--port", type=int, default=DEFAULT_DATA_PORT, help="UDP port")
    parser.add_argument("--dscp", type=int, default=0)
    parser.add_argument("--flow", type=int, default=1, help="flow id in the data header")
    parser.add_argument("--bcn", action="store_true", help="run the BCN reaction point")
    parser.add_argument("--bcn-option", action="append", default=[], metavar="NAME=VALUE",
                        help="a reaction-point feature (experiments/bcn/README.md's names),"
                             " repeatable; implies --bcn")
    parser.add_argument("--pause", action="store_true", help="honour 802.3x PAUSE")
    args = parser.parse_args(argv)
    offered = round(args.rate_bps)
    rp = None
    if args.bcn or args.bcn_option:
        try:
            rp = ReactionPoint(RpConfig(line_rate_bps=offered, min_rate_bps=offered / 100,
                                        **bcn_options(args.bcn_option)))
        except (TypeError, ValueError) as error:
            parser.error(f"--bcn-option: {error}")

    # The RLQ paces frames as Linux sends them (no preamble, gap or FCS).
    start = time.monotonic()
    sender = RegulatedSender(args.dev)
    target = OfferedRate(sender, offered, start)
    agents: list[BcnAgent | PauseAgent] = []
    if rp is not None:
        agents.append(BcnAgent(args.dev, rp, target).start())
    if args.pause:
        agents.append(PauseAgent(args.dev, offered, {0: sender}).start())
    try:
        sent = sender.send(data_frames(args, start + args.duration_s))
    except KeyboardInterrupt:
        sent = sender.sent_frames
    finally:
        for agent in agents:
            agent.stop()
        sender.close()
    print(f"sent {sent} frames of {args.frame_size} bytes in {time.monotonic() - start:.1f} s;"
          f" source held {sender.source_waits} times")
    return 0


if __name__ == "__main__":
    sys.exit(main())
