"""How much the live network forwards without losing frames: the measurement k rests on.

With the bottleneck unshaped and no cap, UDP from `udp` to `sink` (9000-byte frames, the
project's generator) and TCP from `snd` to `rcv` (iperf3 -P 2 paced by the sender's HTB)
cross both switches at rising rates. A rate is carried when nothing was lost anywhere
(the trial's accounting) and, for TCP, iperf3 got at least `CARRIED_SHARE` of it. The
study's busiest switch sees the link rate plus its background (1.3 × the link at 30 %).
"""

from __future__ import annotations

from bufferlab.experiments.esnet_buffer.backend import Trial, TrialSpec
from bufferlab.experiments.esnet_buffer.evaluation import Row

#: Offered rates, bit/s, live.
RATES_BPS = (1_000_000_000, 1_500_000_000, 2_000_000_000, 3_000_000_000)
#: TCP is carried when iperf3 gets this share of its paced rate (goodput is 99.3 % of it).
CARRIED_SHARE = 0.97
#: Far above any offered rate: the sender's HTB then never limits UDP trials.
UNPACED_BPS = 100_000_000_000


def headroom_specs(trial_s: float, rates_bps: tuple[int, ...] = RATES_BPS) -> list[TrialSpec]:
    """UDP then TCP at each rate, bottleneck unshaped and uncapped."""
    udp = [TrialSpec("headroom_udp", r, 0, None, None, UNPACED_BPS, r, trial_s, 0, tcp=False)
           for r in rates_bps]
    tcp = [TrialSpec("headroom_tcp", r, 0, None, None, r, 0, trial_s, min(2.0, trial_s / 4))
           for r in rates_bps]
    return udp + tcp


def headroom_row(trial: Trial) -> Row:
    """One probe: offered rate, what arrived, where frames were lost, carried or not."""
    s = trial.spec
    tcp_bps = trial.iperf.received_bps if trial.iperf else 0.0
    lossless = trial.accounting.valid and trial.udp_received_frames == trial.udp_sent_frames
    carried = lossless and (not s.tcp or tcp_bps >= CARRIED_SHARE * s.send_bps)
    return {"traffic": "TCP" if s.tcp else "UDP", "offered_bps": s.seed_setting,
            "tcp_throughput_bps": tcp_bps, "udp_sent_frames": trial.udp_sent_frames,
            "udp_received_frames": trial.udp_received_frames,
            "accounting": trial.accounting.describe(), "carried": carried}
