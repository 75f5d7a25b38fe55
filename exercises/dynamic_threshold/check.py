"""Check of dynamic_threshold: a port's share is alpha times the free pool, so it shrinks
when another port fills too.

With alpha = 1 and a 32,000-byte pool, one congested port settles where Q = B - Q, at
B/2 = 16,000 bytes; two congested ports at Q = B - 2Q, B/3 = 10,666 bytes each. A static
share would give the same in both cases.
"""

from exercise import FRAME_BYTES, SWITCH_FRAME_BYTES, ExerciseLab, Outcome, expect

HINTS = [
    "Try, in the Mininet CLI (h1, h2 paced to 8 Mbit/s; h3's and h4's ports drain 4 Mbit/s):",
    "  h1 bufferlab-gen --dst 10.0.1.3 --rate-bps 8Mbit --frame-size 1000 --duration-s 60 &",
    "  (port 3 alone: its occupancy settles at alpha*B/(1+alpha) = 16,000 bytes)",
    "  h2 bufferlab-gen --dst 10.0.1.4 --rate-bps 8Mbit --frame-size 1000 --duration-s 30 &",
    "  (ports 3 and 4 together: alpha*B/(1+2*alpha) = 10,666 bytes each)",
    "Compare with a static share, live (in this CLI):",
    "  sh {ctl} set 3 threshold 50%     (port 3 keeps 16,000 bytes whatever port 4 does)",
    "  sh {ctl} set 3 alpha 1           (the dynamic share again)",
]
# Long enough that port 3 sits at its share for ~100 ms: many reads of its occupancy land there.
FRAMES_PER_SENDER = 150
POOL_BYTES = 32_000
ALONE_BYTES = POOL_BYTES // 2
TOGETHER_BYTES = POOL_BYTES // 3


def check(lab: ExerciseLab) -> list[Outcome]:
    """Fill port 3 alone, then ports 3 and 4 together; compare port 3's occupancy."""
    alone = lab.traffic({"h1": ("h3", FRAMES_PER_SENDER, 0)}, ("h3",),
                        watch=("port_occupancy", 3))
    together = lab.traffic({"h1": ("h3", FRAMES_PER_SENDER, 0),
                            "h2": ("h4", FRAMES_PER_SENDER, 0)}, ("h3", "h4"),
                           watch=("port_occupancy", 3))
    peak_alone = max(alone.watched, default=0)
    peak_together = max(together.watched, default=0)
    drops = lab.counter("port_drops", 3)[0] + lab.counter("port_drops", 4)[0]
    sent = FRAMES_PER_SENDER * 3
    return [
        expect(ALONE_BYTES - 2 * SWITCH_FRAME_BYTES < peak_alone <= ALONE_BYTES,
               "port 3 alone fills to alpha * (pool - used): B/2",
               f"largest occupancy seen {peak_alone} bytes in {len(alone.watched)} reads,"
               f" B/2 = {ALONE_BYTES} bytes"),
        expect(TOGETHER_BYTES - 3 * SWITCH_FRAME_BYTES < peak_together
               <= TOGETHER_BYTES + SWITCH_FRAME_BYTES,
               "with port 4 congested too, port 3 holds about B/3",
               f"largest occupancy seen {peak_together} bytes in {len(together.watched)} reads,"
               f" B/3 = {TOGETHER_BYTES} bytes"),
        expect(alone.delivered() + together.delivered() + drops == sent,
               "every frame is either delivered or counted as dropped",
               f"{alone.delivered() + together.delivered()} delivered + {drops} dropped,"
               f" {sent} sent of {FRAME_BYTES} bytes"),
        expect(lab.register("pool_occupancy", 0) == 0,
               "the pool is empty again once the bursts have left"),
    ]
