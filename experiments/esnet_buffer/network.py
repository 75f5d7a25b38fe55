"""The study's network as both worlds describe it: four hosts, two switches, the addresses,
the ports and each switch's controller config (no Mininet, no simulator here).

```
 snd 10.0.4.1 ─ p1 [s41] p5 ══ p5 [s42] p2 ─ rcv  10.0.4.2
 udp 10.0.4.3 ─ p3              bottleneck      p4 ─ sink 10.0.4.4
```

The live lab (`live.py`) brings it up in Mininet, the virtual one (`virtual_time.py`) in
`bufferlab-sim`; both program the switches from `switch_config`.
"""

from __future__ import annotations

from pathlib import Path

from bufferlab.controller.config import Config, parse_config
from bufferlab.experiments.common.buffer_engine import host_mac
from bufferlab.experiments.common.wire import FCS_BYTES, IFG_BYTES, PREAMBLE_BYTES

#: The sending side's switch index (the receiving side's is the next): indices set device
#: ids and the interfaces' names in the root namespace, so ones unlikely to be another
#: lab's (qbss is s18, tor_switch s16).
FIRST_SWITCH = 41
#: Sides of the bottleneck: the senders' switch and the receivers'.
SEND_SIDE, RECV_SIDE = 0, 1
SUBNET = 4
SENDER, RECEIVER, UDP_SENDER, UDP_SINK = "snd", "rcv", "udp", "sink"
#: Host -> (side, port); the host's address is 10.0.4.<port>.
HOSTS = {SENDER: (SEND_SIDE, 1), RECEIVER: (RECV_SIDE, 2),
         UDP_SENDER: (SEND_SIDE, 3), UDP_SINK: (RECV_SIDE, 4)}
TRUNK_PORT = 5
BOTTLENECK_QUEUE = 0
#: Bytes a frame takes on the wire besides itself: preamble, gap and FCS.
WIRE_OVERHEAD = PREAMBLE_BYTES + IFG_BYTES + FCS_BYTES
#: The program's pool: larger than any buffer under test, so only the queue's cap binds.
PROGRAM_POOL_BYTES = 200_000_000
#: A traffic-manager queue depth (packets) far above any cap in bytes: the P4 admission
#: alone decides (hold-queue trials set the depth to the hold queue instead).
UNBOUNDED_DEPTH_PACKETS = 1_000_000


def host_ip(host: str) -> str:
    """10.0.4.<port> of ``host``."""
    return f"10.0.{SUBNET}.{HOSTS[host][1]}"


def mac_of(host: str) -> str:
    """08:00:00:00:04:<port> of ``host``."""
    return host_mac(SUBNET, HOSTS[host][1])


def switch_names(first: int = FIRST_SWITCH) -> tuple[str, str]:
    """The senders' and the receivers' switch: s<first>, s<first + 1>."""
    return f"s{first}", f"s{first + 1}"


def switch_config(side: int, switch_id: int, trunk_cap_bytes: int | None = None) -> Config:
    """The controller's config of the switch on ``side``: L2 forwarding (its hosts on their
    ports, the others over the trunk), the program's pool, and the trunk queue's cap in
    bytes (None: no cap; the live lab sets each trial's cap over P4Runtime instead)."""
    l2 = [{"mac": mac_of(h), "port": port if s == side else TRUNK_PORT}
          for h, (s, port) in HOSTS.items()]
    ports: dict[str, dict] = {str(p): {} for h, (s, p) in HOSTS.items() if s == side}
    ports[str(TRUNK_PORT)] = ({} if trunk_cap_bytes is None else
                              {"queue_caps_bytes": {str(BOTTLENECK_QUEUE): trunk_cap_bytes}})
    return parse_config({"switch_id": switch_id, "pool_bytes": PROGRAM_POOL_BYTES,
                         "ports": ports, "forwarding": {"l2": l2}}, Path("."))
