"""An experiment's expected outcome, one PASS/FAIL line per expectation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Check:
    """One expectation and whether the run met it."""

    name: str
    passed: bool
    detail: str

    def line(self) -> str:
        """``PASS name: detail`` or ``FAIL name: detail``."""
        return f"{'PASS' if self.passed else 'FAIL'} {self.name}: {self.detail}"


def print_outcome(checks: Sequence[Check], report: Path, files: Sequence[Path]) -> None:
    """Prints the PASS/FAIL lines, then where the report and its CSVs and plots are."""
    for check in checks:
        print(check.line())
    print(f"\nreport: {report}")
    for path in files:
        print(f"        {path}")
