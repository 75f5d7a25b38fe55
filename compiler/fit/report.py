"""The fit report: located findings, the stage estimate, the verdict and its text.

A finding is an error (the program breaks a rule: Tofino's compiler refuses it or
it cannot fit) or a note (worth knowing, not a refusal). The text puts each finding
on a `file:line:col: error: message [rule]` line, as compilers do, so editors jump
to it; the rules used are listed once at the end with their sources.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..diagnostics import SourcePos
from .rules import RULES
from .targets import Device


@dataclass(frozen=True)
class Finding:
    """One result of one rule at one place in the program."""

    rule: str
    pos: SourcePos | None
    message: str
    severity: str = "error"  # error | note

    def line(self) -> str:
        """The finding as one compiler-style line."""
        where = f"{self.pos}: " if self.pos is not None else ""
        return f"{where}{self.severity}: {self.message} [{self.rule}]"


@dataclass
class StageEstimate:
    """The stage estimate of one gress and how it was reached."""

    gress: str
    stages: int
    chain: list[str]
    chain_stages: int
    tables: int
    registers: int

    def describe(self, device: Device) -> str:
        """One paragraph: the figure, its parts, and whether it fits."""
        verdict = "fits" if self.stages <= device.stages else "does not fit"
        by_tables = -(-self.tables // device.tables_per_stage)
        by_salus = -(-self.registers // device.salus_per_stage)
        lines = [f"  {self.gress}: at least {self.stages} of {device.stages} stages ({verdict})",
                 f"    dependency chain: {self.chain_stages} stage{'' if self.chain_stages == 1 else 's'}"
                 + (f": {' -> '.join(self.chain)}" if self.chain else ""),
                 f"    {self.tables} logical tables / {device.tables_per_stage} per stage: "
                 f"{by_tables}; {self.registers} registers / {device.salus_per_stage} stateful "
                 f"ALUs per stage: {by_salus}"]
        return "\n".join(lines)


@dataclass
class FitReport:
    """Everything one `--fit-report` run found."""

    program: str
    arch: str
    device: Device
    findings: list[Finding] = field(default_factory=list)
    estimates: list[StageEstimate] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        """The findings that break a rule."""
        return [f for f in self.findings if f.severity == "error"]

    @property
    def fits(self) -> bool:
        """True when no rule is broken."""
        return not self.errors

    def format(self) -> str:
        """The whole report as text."""
        out = [f"Tofino fit report: {self.program} ({self.arch}) against {self.device.label} "
               f"({self.device.stages} stages per gress)", ""]
        ordered = sorted(self.findings, key=lambda f: (f.severity != "error", f.pos or _NOWHERE))
        out += [f.line() for f in ordered] or ["no rule broken"]
        out += ["", "Stage estimate (a lower bound: dependencies, logical tables and stateful ALUs "
                "only; memories, crossbar, PHV and gateway resources can add stages):"]
        out += [e.describe(self.device) for e in self.estimates]
        used = sorted({f.rule for f in self.findings} | {"stages"})
        out += ["", "Rules and where they come from:"]
        for rule_id in used:
            rule = RULES[rule_id]
            out.append(f"  [{rule.id}] {rule.requires}")
            out += [f"      {source}" for source in rule.sources]
        errors = len(self.errors)
        notes = len(self.findings) - errors
        out += ["", f"verdict: {'fits' if self.fits else 'does not fit'} "
                    f"({errors} error{'s' if errors != 1 else ''}, {notes} note{'s' if notes != 1 else ''})"]
        return "\n".join(out) + "\n"


_NOWHERE = SourcePos("", 0, 0)
