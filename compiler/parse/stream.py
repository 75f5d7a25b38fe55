"""The token cursor the parser's parts share: lookahead, expectation, backtracking."""

from __future__ import annotations

from .. import ast
from ..diagnostics import CompileError
from ..lexer import Token


class Backtrack(Exception):
    """Raised inside a speculative parse to give up and rewind."""


class TokenStream:
    """A cursor over one token list, with located syntax errors."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.i = 0
        self.type_names: set[str] = set()
        self.speculating = 0
        # Declarations a typedef declared inline, emitted just before it.
        self.pending: list[ast.Declaration] = []

    # ------------------------------------------------------------ token helpers

    def peek(self, k: int = 0) -> Token:
        """The token `k` ahead of the cursor."""
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def advance(self) -> Token:
        """Consume and return the current token."""
        tok = self.peek()
        if self.i < len(self.tokens) - 1:
            self.i += 1
        return tok

    def at(self, *kinds: str) -> bool:
        """Whether the current token is one of `kinds` (soft keywords by text)."""
        tok = self.peek()
        return tok.kind in kinds or (tok.kind == "IDENT" and tok.text in kinds)

    def accept(self, kind: str) -> Token | None:
        """Consume the current token if it is `kind`."""
        if self.at(kind):
            return self.advance()
        return None

    def error(self, message: str, tok: Token | None = None) -> CompileError:
        """A syntax error at `tok` (default: the current token)."""
        if self.speculating:
            raise Backtrack()
        tok = tok or self.peek()
        return CompileError(tok.pos, message)

    def expect(self, kind: str, what: str | None = None) -> Token:
        """Consume a `kind` token or raise a located syntax error."""
        if self.at(kind):
            return self.advance()
        raise self.error(
            f"syntax error: expected {what or repr(kind)}, found {describe(self.peek())}"
        )

    def name(self, what: str = "a name") -> Token:
        """Consume an identifier (soft keywords included)."""
        if self.peek().kind == "IDENT":
            return self.advance()
        raise self.error(f"syntax error: expected {what}, found {describe(self.peek())}")

    def speculate(self, fn, *args):  # noqa: ANN001, ANN201
        """Run `fn`; on a syntax error rewind and return None."""
        saved = self.i
        self.speculating += 1
        try:
            return fn(*args)
        except (Backtrack, CompileError):
            self.i = saved
            return None
        finally:
            self.speculating -= 1

    def balanced(self, opener: str, closer: str) -> list[Token]:
        """Consume `opener tokens closer`, nesting included; return the inner tokens."""
        open_tok = self.expect(opener)
        depth, body = 1, []
        while True:
            tok = self.advance()
            if tok.kind == "EOF":
                raise self.error(f"syntax error: {opener!r} is never closed", open_tok)
            if tok.kind == opener:
                depth += 1
            elif tok.kind == closer:
                depth -= 1
                if depth == 0:
                    return body
            body.append(tok)


def describe(tok: Token) -> str:
    """How a token is named in a syntax error."""
    if tok.kind == "EOF":
        return "end of file"
    return repr(tok.text)
