"""Check of shared_buffer: two paced senders into one port cannot take more than its share.

h1 and h2 (each paced to 8 Mbit/s) send a burst to h3, whose port drains 10 Mbit/s, so
port 3's queue grows until admission cuts it at its share: 25 % of the 32,000-byte pool.
"""

from exercise import FRAME_BYTES, SWITCH_FRAME_BYTES, ExerciseLab, Outcome, expect

HINTS = [
    "Try, in the Mininet CLI (h1 and h2 are paced to 8 Mbit/s; h3's port drains 10 Mbit/s):",
    "  h3 bufferlab-recv --port 5001 --idle-timeout-s 5 &",
    f"  h1 bufferlab-gen --dst 10.0.1.3 --rate-bps 8Mbit --frame-size {FRAME_BYTES}"
    " --duration-s 60 &",
    f"  h2 bufferlab-gen --dst 10.0.1.3 --rate-bps 8Mbit --frame-size {FRAME_BYTES}"
    " --duration-s 60 &",
    "Port 3's occupancy should sit at its share (8,000 bytes) while its drops grow.",
]
# Long enough that port 3 sits at its share for ~90 ms: many reads of its occupancy land there.
FRAMES_PER_SENDER = 100
POOL_BYTES = 32_000
SHARE_BYTES = POOL_BYTES * 25 // 100


def check(lab: ExerciseLab) -> list[Outcome]:
    """Send the burst; the share holds, the rest is tail-dropped and counted."""
    t = lab.traffic({"h1": ("h3", FRAMES_PER_SENDER, 0), "h2": ("h3", FRAMES_PER_SENDER, 0)},
                    ("h3",), watch=("port_occupancy", 3))
    sent = sum(t.sent.values())
    drops, drop_bytes = lab.counter("port_drops", 3)
    peak = max(t.watched, default=0)
    return [
        expect(drops > 0, "the burst overfills port 3's share and frames are tail-dropped",
               f"{drops} of {sent} frames dropped"),
        expect(t.delivered() + drops == sent,
               "every frame is either delivered to h3 or counted in port_drops[3]",
               f"{t.delivered()} delivered + {drops} dropped, {sent} sent"),
        expect(drop_bytes == drops * SWITCH_FRAME_BYTES and
               lab.counter("queue_drops", 3 * 8) == (drops, drop_bytes),
               "drops are counted in bytes too, and per queue (queue_drops[24])"),
        expect(peak <= SHARE_BYTES, "port 3 never holds more than its share",
               f"largest occupancy seen {peak} bytes in {len(t.watched)} reads, share {SHARE_BYTES} bytes"),
        expect(peak > SHARE_BYTES - 2 * SWITCH_FRAME_BYTES, "port 3 fills up to its share",
               f"largest occupancy seen {peak} bytes in {len(t.watched)} reads"),
        expect(lab.counter("port_drops", 1)[0] == lab.counter("port_drops", 2)[0] == 0,
               "nothing is dropped on the senders' ports"),
        expect(lab.register("pool_occupancy", 0) == 0,
               "the pool is empty again once the burst has left (occupancy back to 0)"),
    ]
