"""Hand-written recursive-descent parser for the P4_16 grammar (spec appendix).

`parse(tokens)` returns an `ast.Program`; a syntax error raises `CompileError`
at the offending token. Two grammar ambiguities are settled the way p4c
settles them:

- `<` after a name starts type arguments only when `<types>` is followed by
  `(` (a generic call); otherwise it is the comparison;
- `(T) e` is a cast when `T` is a base type or a name declared as a type
  earlier in the source (P4 requires declaration before use).

A statement that starts with a name is a declaration when a type followed by
a name (or `T(args) name` for an instantiation) can be read there.
"""

from __future__ import annotations

from .. import ast
from ..lexer import Token
from .blocks import BlockParser


class Parser(BlockParser):
    """Parses one token list into an `ast.Program`."""


def parse(tokens: list[Token]) -> ast.Program:
    """Parse a token list (from `lexer.tokenize`) into a program."""
    return Parser(tokens).program()
