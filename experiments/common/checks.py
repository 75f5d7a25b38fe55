"""An experiment's expected outcome, one PASS/FAIL line per expectation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Check:
    """One expectation and whether the run met it; a check that is not ``binding`` is a
    figure shown against the same limit where the program under test is expected to differ
    (e.g. a ratio in bytes on a traffic manager that counts cells): it never fails a run."""

    name: str
    passed: bool
    detail: str
    binding: bool = True

    def line(self) -> str:
        """``PASS name: detail``, ``FAIL name: detail``, or for a check that is not binding
        ``INFO name: detail (within|outside the limit; not expected on this program)``."""
        if not self.binding:
            where = "within" if self.passed else "outside"
            return f"INFO {self.name}: {self.detail} ({where} the limit; not expected on this program)"
        return f"{'PASS' if self.passed else 'FAIL'} {self.name}: {self.detail}"


def all_passed(checks: Sequence[Check]) -> bool:
    """Whether every binding check passed."""
    return all(c.passed for c in checks if c.binding)


def print_outcome(checks: Sequence[Check], report: Path, files: Sequence[Path]) -> None:
    """Prints the PASS/FAIL lines, then where the report and its CSVs and plots are."""
    for check in checks:
        print(check.line())
    print(f"\nreport: {report}")
    for path in files:
        print(f"        {path}")
