"""Check of pause: the congested port pauses its sources, they stop, nothing is dropped.

h1 and h2 each send 60 frames at 8 Mbit/s through a rate-limited sender that honours PAUSE
(traffic/'s RegulatedSender and PauseAgent, as a NIC would) to h3, whose port drains
4 Mbit/s: without flow control the queue would outgrow the 64,000-byte pool. With XOFF at
6,000 bytes and XON at 3,000, the sources are paused and released until all is delivered.
On Tofino (PROGRAM=tna) the TM sends the PAUSE and XON frames (each source port's ingress
limit is port 3's XOFF, in cells) and counts them, and drops are the TM's.
"""

from concurrent.futures import ThreadPoolExecutor

from exercise import DATA_PORT, SWITCH_FRAME_BYTES, ExerciseLab, Outcome, expect
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from bufferlab.traffic import layers
from bufferlab.traffic.agents.pause import PauseAgent
from bufferlab.traffic.agents.sender import RegulatedSender
from bufferlab.traffic.receive import Receiver

HINTS = [
    "Try, in the Mininet CLI (h1, h2 paced to 8 Mbit/s; h3's port drains 4 Mbit/s), senders"
    " that honour PAUSE:",
    "  h1 python3 -m bufferlab.traffic.agents --dst 10.0.1.3 --rate-bps 8Mbit --pause"
    " --duration-s 60 &",
    "  h2 python3 -m bufferlab.traffic.agents --dst 10.0.1.3 --rate-bps 8Mbit --pause"
    " --duration-s 60 &",
    "and watch port 3 stay near XOFF (6,000 bytes) with no drops while h1 and h2 take turns.",
]
FRAMES_PER_SENDER = 60
RATE_BPS = 8_000_000
QUANTA = 65535
#: Each sender's own queue holds this many frames, so a paused sender's source waits soon.
RLQ_BYTES = 8 * SWITCH_FRAME_BYTES


def frames(lab: ExerciseLab, host: str, flow: int) -> list[bytes]:
    """The sender's data frames to h3, as the switch counts them (no FCS)."""
    src, dst = lab.topology.hosts[host], lab.topology.hosts["h3"]
    head = (Ether(src=src.mac, dst=dst.mac)
            / IP(src=lab.host_ip(host), dst=lab.host_ip("h3"))
            / UDP(sport=DATA_PORT, dport=DATA_PORT, chksum=0))
    return [bytes(head / layers.BufferlabData(flow=flow, seq=seq)
                  / bytes(SWITCH_FRAME_BYTES - 58)) for seq in range(FRAMES_PER_SENDER)]


def check(lab: ExerciseLab) -> list[Outcome]:
    """Send from both senders while their PAUSE agents listen; count what arrives."""
    hosts = {"h1": 1, "h2": 2}
    senders = {h: RegulatedSender("eth0", lab.netns(h), RLQ_BYTES) for h in hosts}
    agents = {h: PauseAgent("eth0", RATE_BPS, {0: senders[h]}, lab.netns(h)) for h in hosts}
    try:
        with Receiver(DATA_PORT, netns=lab.netns("h3")) as receiver:
            for h in hosts:
                senders[h].set_rate_bps(RATE_BPS)
                agents[h].start()
            with ThreadPoolExecutor(max_workers=2) as pool:
                sent = sum(pool.map(lambda h: senders[h].send(frames(lab, h, hosts[h])), hosts))
            receiver.start(idle_timeout_s=1.0)
            received = len(receiver.join().frames)
    finally:
        for h in hosts:
            agents[h].stop()
            senders[h].close()
    events = [e for agent in agents.values() for _, _, e in agent.events]
    pauses, xons = lab.pause_frames_sent()
    sent_by = "the TM (XOFF, XON)" if lab.tofino else "pause_frames, xon_frames"
    drops = lab.drops(3)
    return [
        expect(pauses > 0, "port 3's congestion makes the switch send PAUSE to its sources",
               f"{sent_by}: {pauses}, {xons}"),
        expect(any(e.quanta[0] == QUANTA for e in events),
               "the sources receive PAUSE with the configured quanta",
               f"{len(events)} PAUSE/XON frames received"),
        expect(sum(s.source_waits for s in senders.values()) > 0,
               "a paused sender stops (its source waits: its queue is full)",
               f"{sum(s.source_waits for s in senders.values())} waits"),
        expect(xons > 0 and any(e.quanta[0] == 0 for e in events),
               "when port 3 drains below XON the sources are released (quanta 0)",
               f"{sum(e.quanta[0] == 0 for e in events)} XON received"),
        expect(drops == 0, "no frame is dropped",
               f"{'TM drops' if lab.tofino else 'port_drops[3]'} = {drops}"),
        expect(received == sent == FRAMES_PER_SENDER * len(hosts),
               "h3 receives every frame", f"{received} of {sent}"),
    ]
