"""Free TCP ports on the loopback for switches' P4Runtime and Thrift servers."""

from __future__ import annotations

import random
import socket

#: Where port blocks are looked for (above the tutorials' 50051 + few switches, below the
#: kernel's ephemeral range).
FIRST_PORT = 20000
LAST_PORT = 32000


def free_port_block(count: int) -> int:
    """The first of ``count`` consecutive TCP ports free on 127.0.0.1 now, from a block
    picked at random."""
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    bases = range(FIRST_PORT, LAST_PORT - count, count)
    # Start at a random block: labs started side by side (a test suite beside `make run`)
    # would otherwise all probe 20000 first and take the same block before either binds it.
    first = random.randrange(len(bases))
    for base in [*bases[first:], *bases[:first]]:
        sockets = []
        try:
            for port in range(base, base + count):
                s = socket.socket()
                sockets.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()
    raise RuntimeError(f"no block of {count} free TCP ports in {FIRST_PORT}..{LAST_PORT}")
