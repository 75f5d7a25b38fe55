"""Semantic checks: a parsed `ast.Program` -> a `CheckedProgram` with every slot filled.

One walk in source order (P4 declares before use). Each module has one job:
`scope` (name resolution), `typeresolve` (written types -> P4 types),
`consteval` (constant folding), `casts` (explicit casts), `coerce` (implicit
conversions, type inference), `expressions`, `calls` (argument binding and
directions), `lvalues`, `statements`, `tables`, `declarations`,
`annotations`. `Checker` combines them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import ast
from ..diagnostics import CompileError, CompileWarning
from ..types import PackageType, Specialized
from .annotations import check_all_annotations, fold_integer_annotations
from .declarations import DeclarationChecker


class Checker(DeclarationChecker):
    """The whole semantic checker."""


@dataclass
class CheckedProgram:
    """A checked program and what the back end needs to start from.

    `main` is the top-level package instantiation named `main` (None when the
    program has none); `package` its package type declaration (e.g.
    `V1Switch`); `main_args` maps each package parameter name (`p`, `vr`,
    `ig`, `eg`, `ck`, `dep` for V1Switch) to the parser/control declaration
    passed for it; `type_args` the package's bound type parameters (`H`, `M`).
    `errors` and `match_kinds` list the members in declaration order; `arch` is
    the `compiler.arch.Architecture` and `target` the device the front end chose.
    """

    program: ast.Program
    main: ast.Instantiation | None = None
    package: ast.PackageTypeDeclaration | None = None
    main_args: dict[str, ast.Declaration] = field(default_factory=dict)
    type_args: dict[str, object] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    match_kinds: list[str] = field(default_factory=list)
    warnings: list[CompileWarning] = field(default_factory=list)
    top_level: dict[str, list[object]] = field(default_factory=dict)
    arch: object = None
    target: str = ""

    def declaration(self, name: str) -> object | None:
        """The top-level declaration called `name` (the first, for overloads)."""
        found = self.top_level.get(name)
        return found[0] if found else None


def check(program: ast.Program) -> CheckedProgram:
    """Check `program`; raises `CompileError` at the first error."""
    checker = Checker()
    check_all_annotations(program)
    for d in program.declarations:
        checker.check_declaration(d)
    fold_integer_annotations(program, checker.check_expr)
    result = CheckedProgram(
        program=program,
        errors=list(checker.facts.errors),
        match_kinds=list(checker.facts.match_kinds),
        warnings=checker.warnings,
        top_level=dict(checker.scope.names),
    )
    main = checker.scope.lookup("main")
    if isinstance(main, ast.Instantiation):
        _describe_main(result, main)
    return result


def _describe_main(result: CheckedProgram, main: ast.Instantiation) -> None:
    t = main.p4type
    base = t.base if isinstance(t, Specialized) else t
    if not isinstance(base, PackageType):
        raise CompileError(main.pos, f"'main' must be a package instance, not {t}")
    result.main = main
    result.package = base.decl
    if isinstance(t, Specialized):
        result.type_args = t.bindings()
    by_name = {a.name: a for a in main.args if a.name is not None}
    pairs = (
        [(p, by_name[p.name]) for p in base.params if p.name in by_name]
        if by_name
        else list(zip(base.params, main.args, strict=False))
    )
    for p, a in pairs:
        value = a.value
        decl = (
            value.call.target
            if isinstance(value, ast.MethodCallExpression) and value.call
            else None
        )
        if decl is None and isinstance(value, ast.PathExpression):
            decl = value.ref
        result.main_args[p.name] = decl
