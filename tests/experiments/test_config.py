"""ToR study configuration: defaults, the seed's grid, and errors that name the key."""

import pytest

from bufferlab.experiments.tor_switch.config import FULL, SHORT, TorConfig


def test_full_grid_is_the_seeds():
    assert FULL.frame_sizes_bytes == (64, 128, 256, 512, 1024, 1280, 1518)
    assert FULL.thresholds_pct == (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100)
    assert FULL.loads_pct == (49.8, 49.9, 50.0, 50.1, 50.2)
    assert (FULL.burst_frame_sizes_bytes, FULL.burst_thresholds_pct) == ((512, 1024), (50, 100))
    # 1 % of the full pool still holds one 1518-byte frame.
    assert FULL.pool_bytes // 100 >= 1518


def test_trial_and_latency_window_in_ns():
    assert SHORT.trial_ns == 400_000_000
    assert SHORT.latency_from_ns == 200_000_000


@pytest.mark.parametrize("values, key", [
    ({"port_rate_bps": 0}, "port_rate_bps"),
    ({"pool_bytes": 0}, "pool_bytes"),
    ({"trial_ms": -1}, "trial_ms"),
    ({"latency_from": 1.0}, "latency_from"),
    ({"frame_sizes_bytes": (32,)}, "frame_sizes_bytes"),
    ({"burst_frame_sizes_bytes": ()}, "burst_frame_sizes_bytes"),
    ({"thresholds_pct": (0,)}, "thresholds_pct"),
    ({"burst_thresholds_pct": (101,)}, "burst_thresholds_pct"),
    ({"loads_pct": (120,)}, "loads_pct"),
    ({"port_b": 1}, "port_a/port_b/port_c"),
    ({"pool_bytes": 10_000}, "pool_bytes"),  # 10 % = 1,000 bytes < one 1518-byte frame
])
def test_bad_values_name_the_key(values, key):
    with pytest.raises(ValueError, match=f"tor_switch config: {key}:"):
        TorConfig(**values)


def test_overrides_skip_none_and_refuse_unknown_keys():
    assert SHORT.with_overrides(pool_bytes=None, seed=3) == TorConfig(seed=3)
    with pytest.raises(ValueError, match="unknown keys \\['pool'\\]"):
        SHORT.with_overrides(pool=1)
