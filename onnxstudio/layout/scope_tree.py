"""The scope tree's data: collapsible groups and the lookups over them. Built by
scopes.py, shaped by scope_shape.py; both import it, so neither imports the other back."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

GroupKind = Literal["scope", "chunk", "subgraph", "function"]


@dataclass(eq=False)
class ScopeGroup:
    """A collapsible group: scope, chunk of a large flat group, or an expanded body."""

    id: str
    label: str
    kind: GroupKind = "scope"
    parent: ScopeGroup | None = None
    children: list[ScopeGroup | str] = field(default_factory=list)  # groups and box ids
    node_count: int = 0  # operators inside, recursively

    @property
    def depth(self) -> int:
        depth, group = 0, self.parent
        while group is not None:
            depth, group = depth + 1, group.parent
        return depth

    def groups(self) -> Iterator[ScopeGroup]:
        """This group's descendant groups, pre-order (itself excluded)."""
        for child in self.children:
            if isinstance(child, ScopeGroup):
                yield child
                yield from child.groups()


@dataclass(eq=False)
class ScopeTree:
    """Root group plus lookups: box id -> innermost group, group id -> group."""

    root: ScopeGroup
    group_of: dict[str, ScopeGroup]
    by_id: dict[str, ScopeGroup]
    # id(group) -> (its box ids, its groups): filled as the tree is built, else on demand
    parts: dict[int, tuple[list[str], list[ScopeGroup]]] = field(
        default_factory=dict, repr=False)

    def part(self, group: ScopeGroup) -> tuple[list[str], list[ScopeGroup]]:
        """``group``'s own box ids and its groups (children split once per tree: walks
        over large collapsed groups need only the groups)."""
        part = self.parts.get(id(group))
        if part is None:
            part = self.parts[id(group)] = (
                [c for c in group.children if not isinstance(c, ScopeGroup)],
                [c for c in group.children if isinstance(c, ScopeGroup)])
        return part

    def untie(self) -> None:
        """Drop every group's link to its parent: a group and its children point at each
        other, so a tree no longer used stayed until a full collection (~2 MB a closed
        dag30k, which the collector no longer runs when a tab closes: issue 32)."""
        self.root.parent = None
        for group in self.root.groups():
            group.parent = None
        self.parts.clear()

    def ancestors(self, box_id: str) -> list[ScopeGroup]:
        """Groups containing ``box_id``, innermost first, root excluded."""
        out: list[ScopeGroup] = []
        group = self.group_of.get(box_id)
        while group is not None and group is not self.root:
            out.append(group)
            group = group.parent
        return out
