"""Speed of the ToR study's virtual-time backend: frames per CPU-second through
buffer_switch.p4 in the engine with the exact tester (Python scheduling, engine, matching
the output back to its frame), for 64- and 1518-byte frames at a congesting load, and the
CPU time the short and full grids need (per-frame cost interpolated linearly in frame size
between the two), and what programming a trial's fresh engine through the controller costs
(P4Runtime server, BufferSwitch.apply, median wall-clock ms over a few). Prints one JSON
line.

Rates are per second of this process's CPU time, so other load on the machine does not
skew them.
"""

import json
import statistics
import time

from bufferlab.experiments.common.buffer_engine import programmed_engine
from bufferlab.experiments.common.wire import frames_in, load_fraction
from bufferlab.experiments.tor_switch.backend import DelayCell
from bufferlab.experiments.tor_switch.config import FULL, SHORT, TorConfig
from bufferlab.experiments.tor_switch.runner import delay_cells
from bufferlab.experiments.tor_switch.switch_config import switch_config
from bufferlab.experiments.tor_switch.virtual_time import VirtualTimeBackend

TRIAL_NS = 40_000_000
PROGRAM_REPEATS = 7


def frames_per_cpu_s(backend: VirtualTimeBackend, size: int) -> float:
    backend.delay_trial(DelayCell(size, 100, 50.2, TRIAL_NS // 10))  # warm-up, not timed
    t0 = time.process_time()
    records = backend.delay_trial(DelayCell(size, 100, 50.2, TRIAL_NS))
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


def cpu_min(frames: dict[int, int], rates: dict[int, float]) -> float:
    """CPU minutes for ``frames``, the per-frame cost linear in size between 64 and 1518 B."""
    small, large = 1 / rates[64], 1 / rates[1518]
    return sum(n * (small + (size - 64) / (1518 - 64) * (large - small))
               for size, n in frames.items()) / 60


def main() -> None:
    backend = VirtualTimeBackend(SHORT)
    rates = {size: frames_per_cpu_s(backend, size) for size in (64, 1518)}
    short, full = grid_frames(SHORT), grid_frames(FULL)
    print(json.dumps({
        "benchmark": "experiment_tor_switch",
        "delay_cell_64B_frames_per_cpu_s": round(rates[64]),
        "delay_cell_1518B_frames_per_cpu_s": round(rates[1518]),
        "short_grid_frames": sum(short.values()),
        "short_grid_cpu_min_est": round(cpu_min(short, rates), 2),
        "full_grid_frames": sum(full.values()),
        "full_grid_cpu_min_est": round(cpu_min(full, rates), 1),
        "program_engine_via_p4runtime_ms": round(program_ms(), 1),
    }))


if __name__ == "__main__":
    main()
