"""Free TCP ports on the loopback for switches' P4Runtime and Thrift servers."""

from __future__ import annotations

import socket

#: Where port blocks are looked for (above the tutorials' 50051 + few switches, below the
#: kernel's ephemeral range).
FIRST_PORT = 20000
LAST_PORT = 32000


def free_port_block(count: int) -> int:
    """The first of ``count`` consecutive TCP ports free on 127.0.0.1 now."""
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    for base in range(FIRST_PORT, LAST_PORT - count, count):
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
