"""Check of classes: DSCP picks the queue, and the scavenger class backs off.

h1 marks its frames DSCP 8 (CS1, the QBSS scavenger class: queue 0), h2 sends best effort
(DSCP 0: queue 1); both send 60 frames at 8 Mbit/s to h3, whose port drains 4 Mbit/s. Port 3
serves queue 1 first, so while best effort has frames waiting the scavenger waits, and its
queue's cap (16,000 bytes) keeps it from filling the shared pool.
"""

from exercise import ExerciseLab, Outcome, expect

HINTS = [
    "Try, in the Mininet CLI (h1, h2 paced to 8 Mbit/s; h3's port drains 4 Mbit/s):",
    "  h3 bufferlab-recv --port 5001 --idle-timeout-s 5 &",
    "  h1 bufferlab-gen --dst 10.0.1.3 --dscp 8 --rate-bps 8Mbit --frame-size 1000"
    " --duration-s 60 &",
    "  h2 bufferlab-gen --dst 10.0.1.3 --rate-bps 3Mbit --frame-size 1000 --duration-s 20 &",
    "h1 (scavenger) gets port 3 while h2 sends nothing, and backs off to what h2 leaves.",
]
FRAMES_PER_SENDER = 60
SCAVENGER_DSCP = 8
#: Most of the frames h3 gets before best effort's last one may be scavenger frames: only
#: the few sent before best effort's queue builds up.
SCAVENGER_SHARE_MAX = 0.15


def check(lab: ExerciseLab) -> list[Outcome]:
    """Both classes at once; look at the order h3 gets them in and the per-queue counters."""
    t = lab.traffic({"h1": ("h3", FRAMES_PER_SENDER, SCAVENGER_DSCP),
                     "h2": ("h3", FRAMES_PER_SENDER, 0)}, ("h3",))
    order = [flow for flow, _ in t.received["h3"]]
    scavenger, best_effort = t.flow_of["h1"], t.flow_of["h2"]
    last_be = max((i for i, f in enumerate(order) if f == best_effort), default=-1)
    shared = order[:last_be + 1]
    share = shared.count(scavenger) / len(shared) if shared else 1.0
    got = {flow: order.count(flow) for flow in (scavenger, best_effort)}
    tx = {q: lab.counter("queue_tx", 3 * 8 + q)[0] for q in (0, 1)}
    drops = lab.counter("queue_drops", 3 * 8)[0]
    return [
        expect(tx[1] == got[best_effort] and tx[0] == got[scavenger],
               "DSCP 8 leaves port 3 from queue 0, best effort from queue 1",
               f"queue_tx[24] = {tx[0]}, queue_tx[25] = {tx[1]}; h3 got {got[scavenger]}"
               f" scavenger and {got[best_effort]} best-effort frames"),
        expect(share <= SCAVENGER_SHARE_MAX,
               "while best effort has frames waiting, the scavenger backs off",
               f"{share:.0%} of the frames before best effort's last one are scavenger"),
        expect(got[best_effort] == FRAMES_PER_SENDER, "best effort loses nothing",
               f"{got[best_effort]} of {FRAMES_PER_SENDER}"),
        expect(got[scavenger] + drops == FRAMES_PER_SENDER,
               "the scavenger's excess is tail-dropped at its queue's cap and counted",
               f"{got[scavenger]} delivered + {drops} dropped (queue_drops[24])"),
    ]
