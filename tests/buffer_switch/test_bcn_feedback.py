"""buffer_switch.p4's bcn_feedback: what a congestion point sends once a frame is sampled.
Fb's Qoff term saturated; Fb quantised at the congestion point (QCN's 6 bits over Qeq·(1 + 2W), or any width and
range the controller allows) against the exact arithmetic, quantised to nothing, severe
regardless; positive feedback to any source; and the controller writing the table from a
config (only where it differs from the default) and changing it live."""

import pytest
from buffer_switch_helpers import H1, H3, PROGRAM, outputs, udp_frame
from test_bcn import CPID, QEQ_PAGES, SLOT, T_NS, W, bcn_frames, enable_bcn, queue_state
from test_controller_config import applied

from bufferlab.compiler import compile as compile_p4
from bufferlab.controller.buffer_program import program_updates
from bufferlab.controller.config import (
    ConfigError,
    fb_multipliers,
    parse_config,
    quantised_fb_pages,
)
from bufferlab.controller.p4info import P4InfoIndex
from bufferlab.traffic import layers

FB_MAX_PAGES = QEQ_PAGES * (1 + 2 * W)  # 1,875


def set_feedback(switch, bits=None, range_pages=FB_MAX_PAGES, positive_any=0, queue=0,
                 qoff_max_pages=0):
    """bcn_feedback for port 3's queue: Fb quantised to ``bits`` over ``range_pages``."""
    code_mul, step_mul = fb_multipliers(bits, range_pages) if bits else (0, 0)
    return switch.table_add("bcn_feedback", {"port": 3, "queue": queue}, "bcn_send", {
        "qoff_max_pages": qoff_max_pages, "positive_any": positive_any, "fb_range_pages": range_pages if bits else 0,
        "fb_code_mul": code_mul, "fb_step_mul": step_mul})


def fb_sent(switch, q_pages: int, t_ns: int) -> list[int]:
    """The Fb of the BCN frames a sample at Q = ``q_pages`` (Qdelta 0) sends."""
    queue_state(switch, max(q_pages * 64 - 200, 0), q_pages)  # the 200-byte arrival makes Q
    switch.send(1, udp_frame(H1, H3, 200), t_ns)
    switch.drain()
    return [f[layers.BCN].fb for f in bcn_frames(outputs(switch))]


def test_qcn_quantisation_at_the_congestion_point(switch):
    enable_bcn(switch)
    set_feedback(switch, bits=6)
    # Q = 471, Qold = 400: Fb = −(96 + 2·71) = −238 pages; code ⌊238·63/1875⌋ = 7,
    # |Fb| = ⌊7·1875/63⌋ = 208 pages.
    queue_state(switch, 30_000, 400)
    switch.send(1, udp_frame(H1, H3, 200), T_NS)
    switch.drain()
    (bcn,) = bcn_frames(outputs(switch))
    header = bcn[layers.BCN]
    assert (header.qoff, header.qdelta, header.fb) == (471 - QEQ_PAGES, 71, -208)
    assert switch.register_read("bcn_last_fb", SLOT) == (-208) & 0xFFFFFFFF


@pytest.mark.parametrize(("bits", "range_pages"), [(6, FB_MAX_PAGES), (8, 255), (3, 1000)])
def test_every_magnitude_matches_the_exact_arithmetic(switch, bits, range_pages):
    enable_bcn(switch)
    set_feedback(switch, bits=bits, range_pages=range_pages)
    step = range_pages / ((1 << bits) - 1)
    t = T_NS
    for offset in sorted({1, 2, round(step) - 1, round(step), round(step) + 1, 100, 238,
                          range_pages - 1, range_pages, range_pages + 1, 5000}):
        t += 100_000
        want = quantised_fb_pages(-offset, bits, range_pages)
        assert fb_sent(switch, QEQ_PAGES + offset, t) == ([want] if want else []), offset


def test_the_qoff_term_saturates_in_fb_but_not_in_the_frame(switch):
    enable_bcn(switch)
    handle = set_feedback(switch, qoff_max_pages=QEQ_PAGES)
    sent = []
    # Q = 1,000 pages, Qold = 1,100: Qoff 625 counts as 375, Fb = −(375 − 200) = −175;
    # Q = 100, Qold 100: Qoff −275 is within the cap, Fb = 275, untagged: nothing;
    # Q = 2,000, Qold 1,900: Fb = −(375 + 200) = −575, where unsaturated it is −1,825.
    for k, (q, qold) in enumerate([(1000, 1100), (100, 100), (2000, 1900)]):
        queue_state(switch, q * 64 - 200, qold)
        switch.send(1, udp_frame(H1, H3, 200), T_NS + k * 100_000)
        switch.drain()
        sent += [f[layers.BCN] for f in bcn_frames(outputs(switch))]
    first, second = sent
    assert (first.qoff, first.qdelta, first.fb) == (625, -100, -175)
    assert (second.qoff, second.qdelta, second.fb) == (1625, 100, -575)
    # Below −cap too: an empty queue far under Qeq counts as −375.
    switch.table_modify("bcn_feedback", handle, "bcn_send", {
        "qoff_max_pages": 100, "positive_any": 1, "fb_range_pages": 0, "fb_code_mul": 0,
        "fb_step_mul": 0})
    queue_state(switch, 0, 3)
    switch.send(1, udp_frame(H1, H3, 200), T_NS + 300_000)
    switch.drain()
    (third,) = bcn_frames(outputs(switch))
    assert (third[layers.BCN].qoff, third[layers.BCN].fb) == (3 - QEQ_PAGES, 100)


def test_quantised_to_nothing_sends_nothing_unless_severe(switch):
    enable_bcn(switch, qsc_pages=400)
    set_feedback(switch, bits=6)
    assert fb_sent(switch, QEQ_PAGES + 20, T_NS) == []  # 20 pages, below a step of 29.76
    queue_state(switch, 400 * 64 - 200, 400 + 8)  # Q = Qsc, Fb = −(25 − 16) = −9 → 0
    switch.send(1, udp_frame(H1, H3, 200), T_NS + 100_000)
    switch.drain()
    (bcn,) = bcn_frames(outputs(switch))
    assert (int(bcn[layers.BCN].flags), bcn[layers.BCN].fb) == (0b01, 0)


def test_positive_feedback_to_any_source(switch):
    enable_bcn(switch)
    set_feedback(switch, positive_any=1)
    # Empty queue, Q = 3 pages after the first sample (Qold 0), untagged: Fb = −(3 − 375 +
    # 2·3) = 366 > 0 goes back all the same.
    switch.send(1, udp_frame(H1, H3, 200), T_NS)
    switch.drain()
    (bcn,) = bcn_frames(outputs(switch))
    assert int(bcn[layers.BCN].flags) == 0b10 and bcn[layers.BCN].fb == QEQ_PAGES - 9
    assert bcn.dst == H1 and bcn[layers.BCN].cpid == CPID


def test_without_an_entry_fb_is_sent_as_computed_and_positive_only_when_tagged(switch):
    enable_bcn(switch)
    assert fb_sent(switch, QEQ_PAGES + 20, T_NS) == [-20]
    assert fb_sent(switch, 3, T_NS + 100_000) == []  # positive, untagged


def _config(bcn: dict, port3: dict | None = None) -> dict:
    return {"switch_id": 1, "pool_bytes": 100_000, "bcn": bcn,
            "ports": {"1": {}, "3": {"bcn": port3} if port3 is not None else {}},
            "forwarding": {"l2": [{"mac": H3, "port": 3}, {"mac": H1, "port": 1}]}}


def test_the_controller_writes_bcn_feedback_only_where_it_differs():
    index = P4InfoIndex(compile_p4(PROGRAM)[1])

    def feedback_writes(raw):
        out = []
        for update in program_updates(index, parse_config(raw)):
            entry = update.entity.table_entry
            if entry.table_id == index.get("table", "bcn_feedback").preamble.id:
                out.append((update.type, entry.is_default_action, [m.exact.value for m in
                                                                   entry.match]))
        return out

    assert feedback_writes(_config({})) == []
    assert feedback_writes(_config({}, {"positive_to": "tagged"})) == []
    switch_wide = feedback_writes(_config({"fb_bits": 6}))
    assert switch_wide == [(2, True, [])]  # MODIFY of the default entry only
    # Port 3 differs from the switch-wide section: an entry for each of its queues.
    assert feedback_writes(_config({}, {"fb_bits": 6})) == [(1, False, [b"\x03", b"\x00"])]
    config = parse_config(_config({"fb_bits": 6, "positive_to": "any", "qoff_max_bytes": 24000}))
    assert config.bcn.feedback_action() == ("bcn_send", {
        "qoff_max_pages": 375, "positive_any": 1, "fb_range_pages": 1875, "fb_code_mul": -(-(63 << 32) // 1875),
        "fb_step_mul": -(-(1875 << 32) // 63)})


def test_the_controller_sets_feedback_from_the_config_and_changes_it_live(program_json):
    index = P4InfoIndex(compile_p4(PROGRAM)[1])
    config = parse_config(_config({"sample_bytes": 1, "jitter_bytes": 0}, {"fb_bits": 6}))
    with applied(program_json, index, config) as (engine, switch):
        assert fb_sent(engine, QEQ_PAGES + 238, T_NS) == [-208]
        assert switch.set_bcn(3, {"fb_bits": 8, "fb_range_bytes": 255 * 64}) == 2
        assert fb_sent(engine, QEQ_PAGES + 238, T_NS + 100_000) == [-238]
        assert fb_sent(engine, QEQ_PAGES + 300, T_NS + 200_000) == [-255]
        assert fb_sent(engine, 3, T_NS + 300_000) == []  # positive, untagged
        switch.set_bcn(3, {"positive_to": "any", "fb_bits": None})
        assert fb_sent(engine, 3, T_NS + 400_000) == [QEQ_PAGES - 3]
        assert fb_sent(engine, QEQ_PAGES + 300, T_NS + 500_000) == [-300]
        switch.set_bcn(3, {"qoff_max_bytes": 64 * 100})
        assert fb_sent(engine, QEQ_PAGES + 300, T_NS + 550_000) == [-100]
        # Back to the switch-wide default: the entry goes.
        switch.set_bcn(3, {"positive_to": "tagged", "qoff_max_bytes": None})
        assert switch.entries("bcn_feedback") == []
        assert fb_sent(engine, 3, T_NS + 600_000) == []


@pytest.mark.parametrize(("bcn", "says"), [
    ({"fb_bits": 0}, r"bcn\.fb_bits: must be positive"),
    ({"fb_bits": 17}, r"bcn\.fb_bits: 17 is above 16"),
    ({"fb_range_bytes": 6400}, r"bcn\.fb_range_bytes: needs fb_bits"),
    ({"fb_bits": 6, "fb_range_bytes": 1000}, r"bcn\.fb_range_bytes: 1000 is not a multiple"),
    ({"fb_bits": 8, "fb_range_bytes": 100 * 64}, r"bcn\.fb_range_bytes: 100 pages: with "
                                                 r"fb_bits 8 the range must be 255\.\.65535"),
    ({"fb_bits": 6, "qeq_bytes": 1_280_000},
     r"default Qeq·\(1 \+ 2W\) = 6400000\): 100000 pages"),
    ({"fb_bits": 6, "fb_range_bytes": 65536 * 64}, r"bcn\.fb_range_bytes: 4194304 is above"),
    ({"positive_to": "all"}, r"bcn\.positive_to: 'all': write \"tagged\""),
    ({"qoff_max_bytes": 1000}, r"bcn\.qoff_max_bytes: 1000 is not a multiple of 64"),
    ({"qoff_max_bytes": 0}, r"bcn\.qoff_max_bytes: 0 is below 64"),
])
def test_bad_feedback_keys_name_the_key(bcn, says):
    with pytest.raises(ConfigError, match=says):
        parse_config(_config(bcn))
