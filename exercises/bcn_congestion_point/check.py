"""Check of bcn_congestion_point: the congestion point samples, computes Fb and tells the
source, and the source's reaction point slows down on what it is told.

h1 (paced to 8 Mbit/s) sends 40 frames of 996 bytes to h3, whose port drains 4 Mbit/s, so
port 3's queue grows all along. The CP samples every 4,980 bytes of arrivals (5 frames, no
jitter), starting with the first frame: 8 samples (frames 0, 5, ..., 35), each with Fb < 0
while the queue grows, so 8 BCN frames back to h1, whose fields must be consistent with each
other. On Tofino (PROGRAM=tna) the CP samples departures and measures the queue the sample
leaves behind (the TM's deq_qdepth, cells turned into pages): frame 0 leaves an empty queue
(Q = 0, so Fb = +Qeq: positive feedback, which goes only to a tagged source), and frames
leaving after the last arrival see the queue drain (Qdelta < 0, Fb > 0 once it is short).
So h1 sends 80 frames there, twice what port 3 drains while they arrive: frames 0-35 leave
while the queue still grows, and the BCN frames of samples 5, 10, ..., 35 are required
(those of later samples may come or not, as the draining queue gives their Fb).
"""

import math
import time

from exercise import SWITCH_FRAME_BYTES, ExerciseLab, Outcome, expect
from scapy.layers.inet import UDP
from scapy.layers.l2 import Ether

from bufferlab.traffic import layers
from bufferlab.traffic.agents.bcn import ReactionPoint, RpConfig, parse_bcn
from bufferlab.traffic.agents.listener import FrameListener

HINTS = [
    "Try, in the Mininet CLI (h1, h2 paced to 8 Mbit/s; h3's port drains 4 Mbit/s):",
    "  h1 bufferlab-gen --dst 10.0.1.3 --rate-bps 8Mbit --frame-size 1000 --duration-s 60 &",
    "and watch the BCN frames and their Fb; then the same with h1's reaction point:",
    "  h1 python3 -m bufferlab.traffic.agents --dst 10.0.1.3 --rate-bps 8Mbit --bcn"
    " --duration-s 60 &",
    "whose rate (printed, and in the view) falls and settles near port 3's 4 Mbit/s.",
]
FRAMES = 40
#: Frames h1 sends on Tofino, where the CP samples departures: the first 40 leave while
#: the rest still arrive, so the queue grows at each of their samples.
FRAMES_TNA = 80
SAMPLE_BYTES = 4980
QEQ_PAGES = 2048 // 64
W = 2
LINE_RATE_BPS = 8e6
#: Longest wait for h1's listener to have read every BCN frame the switch counted, s. The
#: frames are on h1 long before (they leave with the burst), but the listener is a thread
#: of this process, which a loaded machine can hold back for a good part of a second.
BCN_WAIT_S = 5.0


def check(lab: ExerciseLab) -> list[Outcome]:
    """Send the burst, collect the BCN frames h1 gets, check them and feed them to an RP."""
    frames: list[bytes] = []
    with FrameListener("eth0", lambda frame, _: frames.append(frame), lab.netns("h1"),
                       ethertype=layers.ETHERTYPE_BCN):
        frames_sent = FRAMES_TNA if lab.tofino else FRAMES
        lab.traffic({"h1": ("h3", frames_sent, 0)}, ("h3",))
        counted = lab.counter("bcn_frames", 3 * 8)[0]
        deadline = time.monotonic() + BCN_WAIT_S
        while len(frames) < counted and time.monotonic() < deadline:
            time.sleep(0.01)
    samples = math.ceil(frames_sent * SWITCH_FRAME_BYTES / SAMPLE_BYTES)
    parsed = [(f, parse_bcn(f)) for f in frames]
    bcns = [b for _, b in parsed if b is not None]
    sampled = [sampled_seq(b.sample(f)) for f, b in parsed if b is not None]
    every = SAMPLE_BYTES // SWITCH_FRAME_BYTES
    required = list(range(every if lab.tofino else 0, FRAMES, every))
    h1_mac = lab.topology.hosts["h1"].mac
    h3_mac = lab.topology.hosts["h3"].mac
    cpid = layers.make_cpid(1, 3, 0)
    qold = [0] + [b.qoff_pages + QEQ_PAGES for b in bcns[:-1]]
    rp = ReactionPoint(RpConfig(LINE_RATE_BPS, 100e3))
    for i, bcn in enumerate(bcns):
        rp.on_bcn(i * 1_000_000, bcn)
    return [
        expect(counted == len(bcns) and set(required) <= set(sampled)
               and set(sampled) <= set(range(0, frames_sent, every)) and len(bcns) <= samples,
               "one BCN frame per sample: every 4,980 bytes"
               f" of {'departures' if lab.tofino else 'arrivals'} at port 3",
               f"bcn_frames[24] = {counted}; sampled frames {sampled},"
               f" {required} required of {samples} samples"),
        expect(len(bcns) >= len(required) and all(f[0:6] == bytes.fromhex(h1_mac.replace(":", ""))
                                                  for f in frames),
               "h1, the source, receives them", f"{len(bcns)} BCN frames at h1"),
        expect(bcns and all(b.cpid == cpid for b in bcns),
               "each names the congestion point: switch 1, port 3, queue 0",
               ", ".join(f"{b.cpid:#x}" for b in bcns[:3])),
        expect(bcns and all(b.fb_pages == -(b.qoff_pages + W * b.qdelta_pages) for b in bcns),
               "Fb = -(Qoff + W * Qdelta) in each",
               ", ".join(f"({b.qoff_pages}, {b.qdelta_pages}, {b.fb_pages})" for b in bcns)),
        expect(bcns and all(b.qdelta_pages == b.qoff_pages + QEQ_PAGES - old
                            for b, old in zip(bcns, qold, strict=True)),
               "Qdelta = Q - Q at the previous sample (Q = Qoff + Qeq, Qeq = 32 pages)"),
        expect(bcns and all(b.fb_pages < 0 for b in bcns),
               "Fb < 0 while the queue grows (negative feedback)"),
        expect(bcns and all(b.sample_len == 90 and b.sample(f)[0:6] == bytes.fromhex(
                   h3_mac.replace(":", "")) for f, b in parsed if b is not None),
               "each carries the first 90 bytes of the sampled frame (to h3)"),
        expect(rp.rate_bps < LINE_RATE_BPS,
               "a reaction point fed these frames slows the sender below its 8 Mbit/s",
               f"{rp.rate_bps / 1e6:.2f} Mbit/s after {len(bcns)} BCN frames"),
    ]


def sampled_seq(sample: bytes) -> int:
    """The sequence number of the generator frame a BCN frame's sample is the start of."""
    return int(layers.BufferlabData(bytes(Ether(sample)[UDP].payload)).seq)
