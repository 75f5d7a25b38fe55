"""Speed of the ToR study's virtual-time backend: frames per CPU-second through
buffer_switch.p4 in the simulator with the exact tester (hosts, links, switch, matching
what C captured back to each frame), for 64- and 1518-byte frames at a congesting load in
trials long enough (about 300,000 frames) that building the network does not count, what
programming a trial's fresh engine through the controller costs (P4Runtime server,
BufferSwitch.apply, median wall-clock ms over a few), and the CPU time the short and full
grids need from both (per-frame cost interpolated linearly in frame size between 64 and
1518 bytes, one programmed engine per delay trial). Prints one JSON line.

Rates are per second of this process's CPU time, so other load on the machine does not
skew them.
"""

import json
import statistics
import time

from bufferlab.experiments.common.buffer_engine import programmed_engine
from bufferlab.experiments.common.wire import frames_in, load_fraction, slot_ns
from bufferlab.experiments.tor_switch.backend import DelayCell
from bufferlab.experiments.tor_switch.config import FULL, SHORT, TorConfig
from bufferlab.experiments.tor_switch.runner import delay_cells
from bufferlab.experiments.tor_switch.switch_config import switch_config
from bufferlab.experiments.tor_switch.virtual_time import VirtualTimeBackend

TIMED_FRAMES = 300_000
LOAD_PCT = 50.2
PROGRAM_REPEATS = 7


def frames_per_cpu_s(backend: VirtualTimeBackend, size: int) -> float:
    """Frames per CPU-second of one delay trial of about ``TIMED_FRAMES`` frames."""
    per_port = TIMED_FRAMES // 2
    trial_ns = int(per_port * slot_ns(size, backend.config.port_rate_bps,
                                      load_fraction(LOAD_PCT)))
    backend.delay_trial(DelayCell(size, 100, LOAD_PCT, trial_ns // 20))  # warm-up, not timed
    t0 = time.process_time()
    records = backend.delay_trial(DelayCell(size, 100, LOAD_PCT, trial_ns))
    return records.in_ns.size / (time.process_time() - t0)


def program_ms() -> float:
    """Median wall-clock ms to get an engine programmed by the controller over P4Runtime."""
    config = switch_config(SHORT, 100)
    programmed_engine(config)  # warm-up: compiles the program once
    times = []
    for _ in range(PROGRAM_REPEATS):
        t0 = time.perf_counter()
        programmed_engine(config)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def grid_frames(config: TorConfig) -> dict[int, int]:
    """Frames the delay grid sends, per frame size."""
    frames: dict[int, int] = {}
    for c in delay_cells(config):
        n = 2 * frames_in(c.trial_ns, c.frame_size_bytes, config.port_rate_bps,
                          load_fraction(c.load_pct))
        frames[c.frame_size_bytes] = frames.get(c.frame_size_bytes, 0) + n
    return frames


def cpu_min(config: TorConfig, rates: dict[int, float], setup_ms: float) -> float:
    """CPU minutes for ``config``'s delay grid: its frames, the per-frame cost linear in size
    between 64 and 1518 B, and one programmed engine per cell."""
    small, large = 1 / rates[64], 1 / rates[1518]
    frames = sum(n * (small + (size - 64) / (1518 - 64) * (large - small))
                 for size, n in grid_frames(config).items())
    return (frames + len(delay_cells(config)) * setup_ms / 1000) / 60


def main() -> None:
    backend = VirtualTimeBackend(SHORT)
    rates = {size: frames_per_cpu_s(backend, size) for size in (64, 1518)}
    setup_ms = program_ms()
    print(json.dumps({
        "benchmark": "experiment_tor_switch",
        "delay_cell_64B_frames_per_cpu_s": round(rates[64]),
        "delay_cell_1518B_frames_per_cpu_s": round(rates[1518]),
        "program_engine_via_p4runtime_ms": round(setup_ms, 1),
        "short_grid_frames": sum(grid_frames(SHORT).values()),
        "short_grid_cpu_min_est": round(cpu_min(SHORT, rates, setup_ms), 2),
        "full_grid_frames": sum(grid_frames(FULL).values()),
        "full_grid_cpu_min_est": round(cpu_min(FULL, rates, setup_ms), 1),
    }))


if __name__ == "__main__":
    main()
