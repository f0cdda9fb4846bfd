"""The containers the compound layout works in (see build.py): an expanded group, body or
call frame being laid out on its own, and the edge pieces that cross them."""

from __future__ import annotations

from dataclasses import dataclass, field

from onnxstudio.layout.types import Point

Piece = tuple[str, str, str, str, list[tuple["Unit", tuple[str, str, str]]]]


@dataclass(eq=False)
class Unit:
    """An expanded container: the root, a scope/chunk group, a body, or a call frame."""

    id: str
    label: str
    kind: str
    node_count: int
    parent: Unit | None
    depth: int
    items: list[str] = field(default_factory=list)
    edges: dict[tuple[str, str, str], int] = field(default_factory=dict)  # (from, to, source)
    width: float = 0.0
    height: float = 0.0
    in_x: dict[str, float] = field(default_factory=dict)  # entry x per source box id
    out_x: dict[str, float] = field(default_factory=dict)  # exit x per source box id
    pos: dict[str, Point] = field(default_factory=dict)
    routes: dict[tuple[str, str, str], list[Point]] = field(default_factory=dict)
    reversed: dict[tuple[str, str, str], bool] = field(default_factory=dict)
