"""Parameters of the DCTCP study: the network, the workload, the grid and its presets, and
the paper's figures as data (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010).

One switch at 10 Gbit/s, every link 25 µs long (RTT 100 µs through the switch), 1500-byte
MTU. DCTCP marks at K = 65 packets, the paper's setting at 10 Gbit/s (20 at 1 Gbit/s, as
Linux's Documentation/networking/dctcp.txt reports it); CUBIC runs the same network with
drop-tail and no ECN.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

GBIT = 1_000_000_000
MS = 1_000_000
US = 1_000
#: The paper's marking threshold at 10 Gbit/s, packets of 1500 bytes.
PAPER_K_PACKETS = 65
PACKET_BYTES = 1500
#: The algorithms compared: the host models' profiles (dctcp: DCTCP with ECN; linux-today:
#: CUBIC, SACK, RACK-TLP, no ECN).
ALGORITHMS = {"dctcp": "dctcp", "cubic": "linux-today"}


@dataclass(frozen=True)
class PaperClaim:
    """One of the paper's results: what it says and where, for the report's tables."""

    what: str
    figure: str
    source: str


#: The paper's headline results our checks test, with where they are stated.
PAPER = {
    "k": PaperClaim("K = 65 packets at 10 Gbit/s (20 at 1 Gbit/s)",
                    "its experiments at 10 Gbit/s",
                    "Linux's Documentation/networking/dctcp.txt, citing the paper"),
    "throughput": PaperClaim("throughput as high as TCP's, or higher", "abstract",
                             "the paper's abstract"),
    "buffer": PaperClaim("90 % less buffer occupied than with TCP", "abstract",
                         "the paper's abstract"),
    "incast": PaperClaim("bursts tolerated: ten times the foreground (query) traffic without "
                         "a timeout", "abstract", "the paper's abstract"),
    "latency": PaperClaim("short flows see low latency", "abstract", "the paper's abstract"),
}


@dataclass(frozen=True)
class DctcpConfig:
    """The study's parameters (units in the names); errors name the key."""

    link_bps: int = 10 * GBIT
    #: One-way propagation of every link; a path crosses two: RTT 4 × this.
    link_delay_ns: int = 25 * US
    mss_bytes: int = 1460
    k_packets: int = PAPER_K_PACKETS
    #: The switch's shared buffer; a port may take all of it (a shallow-buffered switch
    #: of the paper's time: 4 MB).
    pool_bytes: int = 4_000_000
    #: Smallest RTO, ns: a data-centre setting (Linux's own is 200 ms).
    rto_min_ns: int = 10 * MS
    algorithms: tuple[str, ...] = ("dctcp", "cubic")
    #: Long-lived flows, each from its own host to the receiver.
    long_flows: int = 2
    #: The long-flow cells: measured from warm-up to warm-up + window.
    warmup_ns: int = 20 * MS
    long_window_ns: int = 100 * MS
    #: Queue samples of the long-flow cells, ns apart.
    long_sample_ns: int = 10 * US
    #: Incast cells: N servers each answer a query with query_bytes / N, beside the long
    #: flows; `queries` queries, `query_interval_ns` apart, from the warm-up on.
    incast_senders: tuple[int, ...] = (8, 16, 32, 40)
    query_bytes: int = 1_000_000
    queries: int = 10
    query_interval_ns: int = 10 * MS
    #: After the last query, time for late responses (timeouts) before the run ends.
    tail_ns: int = 60 * MS
    incast_sample_ns: int = 100 * US
    seed: int = 1

    def __post_init__(self) -> None:
        def fail(key: str, why: str) -> None:
            raise ValueError(f"dctcp config: {key}: {why}")

        for key in ("link_bps", "mss_bytes", "k_packets", "pool_bytes", "rto_min_ns",
                    "long_window_ns", "long_sample_ns", "query_bytes", "queries",
                    "query_interval_ns", "incast_sample_ns"):
            if getattr(self, key) <= 0:
                fail(key, f"{getattr(self, key)} must be positive")
        for key in ("link_delay_ns", "warmup_ns", "tail_ns"):
            if getattr(self, key) < 0:
                fail(key, f"{getattr(self, key)} must be 0 or more")
        if not 1 <= self.long_flows <= 64:
            fail("long_flows", f"{self.long_flows}: 1 to 64")
        unknown = [a for a in self.algorithms if a not in ALGORITHMS]
        if not self.algorithms or unknown:
            fail("algorithms", f"{self.algorithms}: one or more of {', '.join(ALGORITHMS)}")
        if any(not 1 <= n <= 400 for n in self.incast_senders):
            fail("incast_senders", f"{self.incast_senders}: each 1 to 400")
        if any(self.query_bytes < n for n in self.incast_senders):
            fail("query_bytes", f"{self.query_bytes} cannot be split among "
                                f"{max(self.incast_senders)} servers")
        for key, sample in (("warmup_ns", self.long_sample_ns), ("long_window_ns",
                                                                  self.long_sample_ns)):
            if getattr(self, key) % sample:
                fail(key, f"{getattr(self, key)} is not a multiple of long_sample_ns {sample}")
        if self.k_bytes >= self.pool_bytes:
            fail("k_packets", f"K = {self.k_bytes} bytes must be below pool_bytes")

    @property
    def k_bytes(self) -> int:
        """K in bytes: k_packets full-size packets."""
        return self.k_packets * PACKET_BYTES

    @property
    def rtt_ns(self) -> int:
        """Propagation RTT between two hosts through the switch, ns."""
        return 4 * self.link_delay_ns

    @property
    def frame_bytes(self) -> int:
        """A full data frame: Ethernet 14 + IPv4 20 + TCP 20 + MSS, bytes (no FCS)."""
        return self.mss_bytes + 54

    @property
    def frame_capacity_bps(self) -> float:
        """What a saturated link carries in full-size frames' bytes, bit/s: the link rate
        less 24 bytes of preamble, gap and FCS a frame."""
        return self.link_bps * self.frame_bytes / (self.frame_bytes + 24)

    @property
    def goodput_capacity_bps(self) -> float:
        """What a saturated link carries in TCP payload, bit/s."""
        return self.link_bps * self.mss_bytes / (self.frame_bytes + 24)

    def with_overrides(self, **changes: Any) -> DctcpConfig:
        """A copy with the non-None ``changes`` (unknown keys are an error)."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise ValueError(f"dctcp config: {', '.join(unknown)}: unknown key")
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


#: The study as the README describes it.
FULL = DctcpConfig()
#: Fewer, shorter cells: tests and a first look.
QUICK = DctcpConfig(long_window_ns=30 * MS, warmup_ns=10 * MS, incast_senders=(8, 32),
                    queries=4, tail_ns=40 * MS)
