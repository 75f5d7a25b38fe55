"""The live experiments' set-up as a context manager that never leaves a network behind.

A live lab starts namespaces, veths, switch processes and tester threads. If any step of
its start fails (a compile error, a port that never opened, Ctrl-C), whatever did start
must be torn down before the error propagates, or the next run finds `s1-eth1` taken.
"""

from __future__ import annotations

from typing import Self


class ClosedOnFailedStart:
    """Mixin: `with lab:` runs `_start()`, and `close()` on exit or when `_start()` fails."""

    def _start(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Tear down whatever `_start()` brought up; safe after a partial start."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
