"""What `expr.member` means for each kind of type (fields, built-in methods, extern methods)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..types import P4Type

# Built-in methods of headers, unions and stacks (specification, "Operations on headers").
HEADER_METHODS = ("isValid", "setValid", "setInvalid")
UNION_METHODS = ("isValid",)
STACK_METHODS = ("push_front", "pop_front")
SIZE_METHODS = ("minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes")


@dataclass(frozen=True)
class Method(P4Type):
    """The type of `x.m` before the call: what a following `(...)` will call.

    `kind` is `builtin`, `extern_method`, `table_apply`, `block_apply`;
    `candidates` the MethodPrototypes of an extern method (overloads), or the
    parameters of a parser/control instance's apply.
    """

    kind: str
    name: str
    receiver: P4Type | None = field(default=None, compare=False)
    candidates: tuple[Any, ...] = field(default=(), compare=False)

    def __str__(self) -> str:
        return f"method {self.name}"
