"""free_port_block: a block of free loopback ports, picked at random so labs started side by
side do not all take the same one."""

import socket

import pytest

from bufferlab.experiments.common.ports import FIRST_PORT, LAST_PORT, free_port_block


def test_a_block_is_free_and_inside_the_range():
    base = free_port_block(3)
    assert FIRST_PORT <= base and base + 3 <= LAST_PORT
    held = []
    try:
        for port in range(base, base + 3):
            s = socket.socket()
            held.append(s)
            s.bind(("127.0.0.1", port))
    finally:
        for s in held:
            s.close()


def test_successive_calls_spread_over_the_range():
    # Every call used to return the first free block (20000 on a quiet machine), so two labs
    # asking at once got the same ports.
    assert len({free_port_block(2) for _ in range(20)}) > 1


def test_a_held_block_is_skipped():
    base = free_port_block(1)
    with socket.socket() as s:
        s.bind(("127.0.0.1", base))
        assert all(free_port_block(1) != base for _ in range(50))


def test_count_must_be_positive():
    with pytest.raises(ValueError):
        free_port_block(0)
