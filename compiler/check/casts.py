"""Which explicit casts `(T) e` P4_16 allows (specification, "Explicit casts")."""

from __future__ import annotations

from ..types import (
    Bits,
    Bool,
    Enum,
    Header,
    HeaderUnion,
    InfInt,
    ListLiteral,
    NewType,
    P4Type,
    SerEnum,
    Struct,
    StructLiteral,
    Tuple,
)


def cast_allowed(source: P4Type, target: P4Type) -> bool:
    """Whether `(target) e` is legal for an `e` of type `source`."""
    if source == target:
        return True
    if isinstance(target, Bits):
        if isinstance(source, Bits):
            # Change width or signedness, not both at once.
            return source.signed == target.signed or source.width == target.width
        if isinstance(source, InfInt):
            return True
        if isinstance(source, Bool):
            return target.width == 1 and not target.signed
        if isinstance(source, SerEnum):
            return source.underlying == target
        if isinstance(source, NewType):
            return source.underlying == target
        return False
    if isinstance(target, Bool):
        return (
            isinstance(source, Bits)
            and source.width == 1
            and not source.signed
            or isinstance(source, InfInt)
        )
    if isinstance(target, InfInt):
        return False
    if isinstance(target, SerEnum):
        return isinstance(source, Bits | InfInt) and (
            isinstance(source, InfInt) or source == target.underlying
        )
    if isinstance(target, NewType):
        return source == target.underlying or isinstance(source, InfInt)
    if isinstance(target, Header | Struct | HeaderUnion | Tuple):
        return isinstance(source, ListLiteral | StructLiteral)
    if isinstance(target, Enum):
        return False
    return False
