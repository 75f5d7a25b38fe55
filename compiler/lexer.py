"""P4_16 lexer: preprocessed text -> tokens located in the original files.

The preprocessor's line markers (`# 12 "file.p4" 2` and `#line 12 "file.p4"`)
are consumed here, so every `Token.pos` names the original file and line.

Token kinds:
- `IDENT` for identifiers, including the grammar's soft keywords (`key`,
  `actions`, `entries`, `state`, `type`, `apply`, `priority`, `list`), which may
  also be used as names; the parser checks `text` for them;
- `INT` with `value` = `IntValue(value, width, signed)`;
- `STRING` with `value` = the unescaped string;
- every hard keyword and punctuator is its own kind (`kind == text`);
- `EOF` at the end.

`>` is always a single token: the parser joins two adjacent `>` (see
`Token.end`) into a shift so that `bit<bit<8>>` needs no special case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .diagnostics import CompileError, SourcePos

HARD_KEYWORDS = frozenset(
    """abstract action bool bit break const continue control default else enum error
    exit extern false for header header_union if in inout int match_kind out parser
    package pragma return select string struct switch table this transition true tuple
    typedef varbit value_set void""".split()
)

SOFT_KEYWORDS = frozenset("key actions entries state type apply priority list".split())

# Longest first so that `&&&` wins over `&&` and `|+|=` over `|+|`.
PUNCTUATORS = sorted(
    """&&& |+|= |-|= |+| |-| ... .. << <<= <= >= == != && || ++ += -= *= /= %= &= |= ^=
    { } ( ) [ ] < > ; : , . = + - * / % & | ^ ~ ! ? @ _ #""".split(),
    key=len,
    reverse=True,
)

_SPACE = re.compile(r"[ \t\r\f\v]+")
_PUNCTUATOR = re.compile("|".join(re.escape(p) for p in PUNCTUATORS))
_INT = re.compile(
    r"(?:(?P<width>[0-9]+)(?P<sign>[ws]))?"
    r"(?:0[xX](?P<hex>[0-9a-fA-F_]+)|0[oO](?P<oct>[0-7_]+)|0[bB](?P<bin>[01_]+)"
    r"|0[dD](?P<dec2>[0-9_]+)|(?P<dec>[0-9][0-9_]*))"
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LINE_MARKER = re.compile(r'#\s*(?:line\s+)?(\d+)(?:\s+"((?:[^"\\]|\\.)*)")?[^\n]*')
_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "0": "\0"}


@dataclass(frozen=True)
class IntValue:
    """An integer literal: `width` is None for an arbitrary-precision `int`."""

    value: int
    width: int | None
    signed: bool


@dataclass(frozen=True)
class Token:
    """One token: `end` is the offset just past it in the preprocessed text."""

    kind: str
    text: str
    pos: SourcePos
    value: object = None
    start: int = 0
    end: int = 0


def _unescape(body: str) -> str:
    """Replace backslash escapes in a string literal's body."""
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)


class Lexer:
    """Turns preprocessed P4 text into a list of tokens."""

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self.line = 1
        self.line_start = 0
        self.offset = 0

    def _pos(self, offset: int) -> SourcePos:
        return SourcePos(self.file, self.line, offset - self.line_start + 1)

    def _newline(self, offset: int) -> None:
        self.line += 1
        self.line_start = offset + 1

    def _skip_line_directive(self) -> None:
        """Consume a `#` line at line start; a line marker moves the position."""
        m = _LINE_MARKER.match(self.text, self.offset)
        end = self.text.find("\n", self.offset)
        end = len(self.text) if end < 0 else end
        if m and m.end() == end:
            line, file = int(m.group(1)), m.group(2)
            if file is not None:
                self.file = _unescape(file)
            self.offset = end + 1
            self.line = line
            self.line_start = self.offset
            return
        # Other directives cpp leaves behind (`#pragma ...`) carry no P4 meaning.
        self.offset = end
        return

    def tokens(self) -> list[Token]:
        """Lex the whole text; raises `CompileError` on a character P4 does not use."""
        out: list[Token] = []
        text = self.text
        at_line_start = True
        while self.offset < len(text):
            c = text[self.offset]
            if c == "\n":
                self._newline(self.offset)
                self.offset += 1
                at_line_start = True
                continue
            if c in " \t\r\f\v":
                self.offset = _SPACE.match(text, self.offset).end()
                continue
            if c == "#" and at_line_start:
                self._skip_line_directive()
                continue
            at_line_start = False
            if text.startswith("//", self.offset):
                end = text.find("\n", self.offset)
                self.offset = len(text) if end < 0 else end
                continue
            if text.startswith("/*", self.offset):
                self._skip_block_comment()
                continue
            out.append(self._token())
        out.append(Token("EOF", "", self._pos(self.offset), None, self.offset, self.offset))
        return out

    def _skip_block_comment(self) -> None:
        start = self.offset
        end = self.text.find("*/", start + 2)
        if end < 0:
            raise CompileError(self._pos(start), "unterminated comment")
        for i in range(start, end):
            if self.text[i] == "\n":
                self._newline(i)
        self.offset = end + 2

    def _token(self) -> Token:
        text, start = self.text, self.offset
        pos = self._pos(start)
        c = text[start]
        if "0" <= c <= "9":
            return self._int(pos)
        m = _IDENT.match(text, start)
        if m is not None and (c != "_" or m.end() > start + 1):
            word = m.group(0)
            self.offset = m.end()
            kind = word if word in HARD_KEYWORDS else "IDENT"
            return Token(kind, word, pos, None, start, self.offset)
        if c == '"':
            m = _STRING.match(text, start)
            if not m:
                raise CompileError(pos, "unterminated string literal")
            self.offset = m.end()
            return Token("STRING", m.group(0), pos, _unescape(m.group(1)), start, self.offset)
        m = _PUNCTUATOR.match(text, start)
        if m is None:
            raise CompileError(pos, f"unexpected character {c!r}")
        p = m.group(0)
        self.offset = m.end()
        return Token(p, p, pos, None, start, self.offset)

    def _int(self, pos: SourcePos) -> Token:
        start = self.offset
        m = _INT.match(self.text, start)
        width = int(m.group("width")) if m.group("width") else None
        signed = m.group("sign") == "s"
        base, digits = next(
            (b, m.group(g))
            for g, b in (("hex", 16), ("oct", 8), ("bin", 2), ("dec2", 10), ("dec", 10))
            if m.group(g) is not None
        )
        digits = digits.replace("_", "")
        if not digits:
            raise CompileError(pos, f"malformed integer literal {m.group(0)!r}")
        self.offset = m.end()
        if self.offset < len(self.text) and (
            self.text[self.offset].isalnum() or self.text[self.offset] == "_"
        ):
            raise CompileError(
                pos, f"malformed integer literal {m.group(0)}{self.text[self.offset]}"
            )
        if width is not None and width == 0 and signed:
            raise CompileError(pos, "signed integer literal needs a width of at least 1")
        value = IntValue(int(digits, base), width, signed)
        return Token("INT", m.group(0), pos, value, start, self.offset)


def tokenize(text: str, file: str) -> list[Token]:
    """Lex preprocessed `text` whose first line belongs to `file`."""
    return Lexer(text, file).tokens()
