"""analysis/ imports none of the other bufferlab packages (design.md "Dependencies")."""

import ast
from pathlib import Path

ANALYSIS = Path(__file__).resolve().parents[2] / "analysis"


def test_analysis_imports_only_itself_from_bufferlab():
    offenders = []
    for source in sorted(ANALYSIS.rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(), str(source))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            offenders += [f"{source.name}: {n}" for n in names
                          if n.startswith("bufferlab") and not n.startswith("bufferlab.analysis")]
    assert offenders == []
    assert len(list(ANALYSIS.rglob("*.py"))) >= 8
