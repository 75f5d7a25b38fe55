"""P4Info aliases: the shortest dotted suffix that is unique among all symbols (formats.md §3.4)."""

from __future__ import annotations

from collections.abc import Iterable


class SuffixSet:
    """Counts how many symbols end with each dotted suffix, across every P4Info kind."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._count: dict[tuple[str, ...], int] = {}
        for name in names:
            self.add(name)

    def add(self, name: str) -> None:
        """Register one control-plane name."""
        parts = tuple(name.split("."))
        for start in range(len(parts)):
            suffix = parts[start:]
            self._count[suffix] = self._count.get(suffix, 0) + 1

    def alias(self, name: str) -> str:
        """Shortest suffix of `name` that no other registered name ends with (else `name`)."""
        parts = tuple(name.split("."))
        for length in range(1, len(parts) + 1):
            if self._count.get(parts[-length:], 0) == 1:
                return ".".join(parts[-length:])
        return name
