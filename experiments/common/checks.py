"""An experiment's expected outcome, one PASS/FAIL line per expectation."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    """One expectation and whether the run met it."""

    name: str
    passed: bool
    detail: str

    def line(self) -> str:
        """``PASS name: detail`` or ``FAIL name: detail``."""
        return f"{'PASS' if self.passed else 'FAIL'} {self.name}: {self.detail}"
