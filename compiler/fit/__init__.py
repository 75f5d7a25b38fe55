"""Tofino fit check (`bufferlab-p4c --arch tna --fit-report PROG.p4`).

It reads what our compiler made of a program (v1model or TNA/T2NA JSON) and reports,
with source locations, what Tofino's compiler is known to refuse or split, and a
lower bound on the match-action stages each gress needs. One module per concern:
`rules` (the rules and their sources), `targets` (device figures), `program` (the
compiled program as nodes, reads, writes and register accesses), `registers`,
`salu`, `arithmetic`, `widths` (the checks), `stages` (dependency graph and
estimate), `report` (findings and text).
"""

from __future__ import annotations

from . import arithmetic, registers, salu, stages, widths
from .program import gresses
from .report import Finding, FitReport
from .targets import DEVICES, Device, device_for

__all__ = ["DEVICES", "Device", "Finding", "FitReport", "check_program", "device_for"]


def check_program(document: dict, program: str, arch: str, device: Device) -> FitReport:
    """Apply every fit rule to a compiled program's JSON document."""
    report = FitReport(program, arch, device)
    all_gresses = gresses(document)
    for g in all_gresses:
        report.findings += registers.one_access(g)
        report.findings += registers.cells(g, device)
        report.findings += salu.check_gress(g, device)
        report.findings += arithmetic.check_gress(g, device)
        report.findings += widths.check_gress(g, device)
        est = stages.estimate(g, device)
        report.estimates.append(est)
        report.findings += stages.check(est, g, device)
    report.findings += registers.one_gress(all_gresses)
    # A register or action shared by both gresses of a v1model program is seen twice.
    report.findings = list(dict.fromkeys(report.findings))
    return report
