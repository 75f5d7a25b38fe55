"""The tools' command lines and outputs: the UDP background (bufferlab-gen to
bufferlab-recv) and the sender's HTB pacing class."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from bufferlab.experiments.esnet_buffer.config import FRAME_BYTES, UDP_FRAME_BYTES
from bufferlab.traffic.tc import HtbClass

#: UDP port of the background sink.
UDP_PORT = 5001
#: Seconds the UDP background starts before TCP, so TCP meets it from its first RTT.
BACKGROUND_LEAD_S = 1.0
#: Seconds the UDP background runs on after TCP's planned end.
BACKGROUND_TAIL_S = 1.0
#: HTB's bucket: two jumbo frames back to back at most, so a paced sender is paced.
PACING_BURST_BYTES = 2 * FRAME_BYTES
PACING_MINOR = 2


def _tool(name: str) -> str:
    """A bufferlab command beside this Python (the venv's): `ip netns exec` keeps no venv PATH."""
    return str(Path(sys.executable).with_name(name))


def generator_argv(dst_ip: str, rate_bps: int, duration_s: float,
                   burst_frames: int = 1) -> list[str]:
    """bufferlab-gen sending 9000-byte frames at ``rate_bps`` (line bit/s) for
    ``duration_s``, ``burst_frames`` at a time (the mean rate kept); it sleeps between
    departures (no spinning: the cores are the switches')."""
    return [_tool("bufferlab-gen"), "--dst", dst_ip, "--port", str(UDP_PORT), "--rate-bps",
            str(rate_bps), "--frame-size", str(UDP_FRAME_BYTES), "--duration-s",
            f"{duration_s:g}", "--spin-ns", "0", "--burst-frames", str(burst_frames)]


def receiver_argv(duration_s: float) -> list[str]:
    """bufferlab-recv counting the background's frames for up to ``duration_s``."""
    return [_tool("bufferlab-recv"), "--port", str(UDP_PORT), "--duration-s",
            str(math.ceil(duration_s)), "--idle-timeout-s", "3"]


def parse_generator(text: str) -> int:
    """Frames bufferlab-gen sent, from its JSON line."""
    return int(json.loads(text.strip().splitlines()[-1])["sent_frames"])


def parse_receiver(text: str) -> int:
    """Frames bufferlab-recv received, from its JSON summary."""
    return int(json.loads(text.strip().splitlines()[-1])["total"]["received_frames"])


def pacing_classes(rate_bps: int) -> tuple[list[HtbClass], int]:
    """The sender's HTB leaf (rate = ceil = ``rate_bps``, a two-frame bucket) and its minor:
    the seed's `tc class add … htb rate Ngbit`, every frame through it."""
    return ([HtbClass(minor=PACING_MINOR, rate_bps=rate_bps, burst_bytes=PACING_BURST_BYTES,
                      cburst_bytes=PACING_BURST_BYTES)], PACING_MINOR)

