"""Helpers for the buffer_switch.p4 engine tests: set-up as p4src/README.md asks of a
controller, frame builders and output sorting."""

from pathlib import Path

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from bufferlab.switch import Engine
from bufferlab.traffic import layers

PROGRAM = Path(__file__).resolve().parents[2] / "p4src" / "buffer_switch.p4"
SWITCH_ID = 1
POOL_BYTES = 100_000
PORTS = (1, 2, 3)
FLOOD_GROUP = 1
PORT_SESSION_BASE = 1
ALL_PORTS_SESSION = 511
HOSTS = {1: "08:00:00:00:01:01", 2: "08:00:00:00:01:02", 3: "08:00:00:00:01:03"}
H1, H2, H3 = HOSTS[1], HOSTS[2], HOSTS[3]
SLOW_BPS = 10_000_000  # a 400-byte frame takes (400 + 24) * 8 / 10 Mb/s = 339.2 µs
WIRE_OVERHEAD_BYTES = 24


def programmed(program_json: str, pool_bytes: int = POOL_BYTES) -> Engine:
    """An engine running the program with the entries the controller writes for PORTS."""
    engine = Engine(program_json, seed=1)
    engine.mc_group_set(FLOOD_GROUP, [(p, 0) for p in PORTS])
    for port in PORTS:
        engine.clone_session_set(PORT_SESSION_BASE + port, port=port)
    engine.clone_session_set(ALL_PORTS_SESSION, mcast_grp=FLOOD_GROUP)
    engine.table_set_default("switch_config", "set_switch", {
        "switch_id": SWITCH_ID, "pool_bytes": pool_bytes,
        "port_session_base": PORT_SESSION_BASE, "all_ports_session": ALL_PORTS_SESSION})
    engine.table_set_default("l2_forward", "flood", {"group": FLOOD_GROUP})
    for port, mac in HOSTS.items():
        engine.table_add("l2_forward", {"dst_addr": mac}, "l2_to_port", {"port": port})
    return engine


def udp_frame(src: str = H1, dst: str = H3, size: int = 100, dscp: int = 0, seq: int = 0,
              dst_ip: str = "10.0.1.3", ttl: int = 64) -> bytes:
    """An IPv4/UDP frame of exactly `size` bytes; `seq` is written at the start of the payload."""
    head = Ether(src=src, dst=dst) / IP(src="10.0.1.1", dst=dst_ip, tos=dscp << 2, ttl=ttl) / UDP(
        sport=1234, dport=5000)
    payload = seq.to_bytes(4, "big")
    return bytes(head / Raw(payload + bytes(max(0, size - len(head) - len(payload)))))


def outputs(engine: Engine) -> list[tuple[int, bytes, int]]:
    """Frames delivered since the last call: (port, frame, arrival ns)."""
    return [(port, bytes(frame), t) for port, frame, t in engine.received()]


def on_port(frames: list[tuple[int, bytes, int]], port: int) -> list[Ether]:
    """The frames that left by `port`, dissected."""
    return [Ether(frame) for p, frame, _t in frames if p == port]


def kinds(frames: list[tuple[int, bytes, int]]) -> list[tuple[int, str]]:
    """(port, kind) per frame, kind "data", "bcn", "pause <quanta>" or "pfc <enable> <times>"."""
    out = []
    for port, frame, _t in frames:
        parsed = Ether(frame)
        if parsed.haslayer(layers.Pause):
            out.append((port, f"pause {parsed[layers.Pause].quanta:#06x}"))
        elif parsed.haslayer(layers.PFC):
            pfc = parsed[layers.PFC]
            out.append((port, f"pfc {pfc.class_enable:#x} {list(pfc.quanta)}"))
        elif parsed.haslayer(layers.BCN):
            out.append((port, "bcn"))
        else:
            out.append((port, "data"))
    return out


def seq_of(frame: Ether) -> int:
    """The sequence number udp_frame wrote into a frame's UDP payload."""
    return int.from_bytes(bytes(frame[UDP].payload)[:4], "big")


def tx_ns(size: int, rate_bps: int = SLOW_BPS) -> float:
    """Time a frame of `size` bytes occupies the port, with the default wire overhead."""
    return (size + WIRE_OVERHEAD_BYTES) * 8 * 1e9 / rate_bps
