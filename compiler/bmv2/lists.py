"""`field_lists` and `learn_lists` (formats.md §1.7): ids start at 1, as simple_switch needs."""

from __future__ import annotations

from typing import Any

from .context import Context


class FieldLists:
    """Creates field lists for clone/resubmit/recirculate and learn lists for digests."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._field_lists: dict[int, int] = {}
        self._learn_lists: dict[str, int] = {}
        # Id 0 is burnt: simple_switch treats a list id as "was called".
        ctx.next_id("field_lists")
        ctx.next_id("learn_lists")

    def anonymous_list(self, elements: list[dict], node: Any) -> int:
        """A new field list `fl`, `fl_0`, … of `elements` (plain `clone`: none)."""
        return self._add(self.ctx.field_lists, "field_lists", self.ctx.unique("fl"), elements, node)

    def field_list(self, index: int, node: Any) -> int:
        """Id of `field_list<index>`: user-metadata fields tagged `@field_list(index)`."""
        known = self._field_lists.get(index)
        if known is not None:
            return known
        # An index no user-metadata field carries preserves nothing: an empty list, as p4c
        # writes it (the resubmitted, recirculated or cloned packet keeps no metadata).
        members = self.ctx.field_list_members.get(index, [])
        elements = [m.operand() for m in members]
        list_id = self._add(
            self.ctx.field_lists, "field_lists", f"field_list{index}", elements, node
        )
        self._field_lists[index] = list_id
        return list_id

    def learn_list(self, name: str, elements: list[dict], node: Any) -> int:
        """Id of the learn list `name` (created on first use)."""
        known = self._learn_lists.get(name)
        if known is not None:
            return known
        list_id = self._add(self.ctx.learn_lists, "learn_lists", name, elements, node)
        self._learn_lists[name] = list_id
        return list_id

    def _add(
        self, target: list[dict], group: str, name: str, elements: list[dict], node: Any
    ) -> int:
        """Append one list object and return its id."""
        entry: dict = {"id": self.ctx.next_id(group), "name": name}
        info = self.ctx.source_info(node)
        if info is not None:
            entry["source_info"] = info
        entry["elements"] = elements
        target.append(entry)
        return entry["id"]
