"""The live experiments' set-up as a context manager that never leaves a network behind.

A live lab starts namespaces, veths, switch processes and tester threads. If any step of
its start fails (a compile error, a port that never opened, Ctrl-C), whatever did start
must be torn down before the error propagates, or the next run finds `s1-eth1` taken.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Self


class ClosedOnFailedStart(ABC):
    """Base of a live lab: `with lab:` runs `_start()`, and `close()` on exit or when
    `_start()` fails."""

    @abstractmethod
    def _start(self) -> None:
        """Bring the lab up (network, switches, tools)."""

    @abstractmethod
    def close(self) -> None:
        """Tear down whatever `_start()` brought up; safe after a partial start."""

    def __enter__(self) -> Self:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
