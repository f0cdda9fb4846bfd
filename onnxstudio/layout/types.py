"""The laid-out graph as plain data: what render/ paints and export/ writes.

One coordinate space for the whole drawing (y grows downwards, units are pixels at
zoom 1), so the canvas, the SVG/PNG/PDF export and the JSON export agree exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Direction = Literal["TB", "LR"]
BoxKind = Literal["node", "input", "output", "group", "function"]
Point = tuple[float, float]


@dataclass(slots=True)  # slots: expanded dag100k draws 100k boxes and 157k edges
class Box:
    """A drawn node: an operator, a graph input/output, or a collapsed group."""

    id: str  # Node.id, "in:<value>", "out:<value>", or the group's scope id
    kind: BoxKind
    x: float  # top-left corner
    y: float
    width: float
    height: float
    title: str  # op type, tensor name, or group name
    subtitle: str = ""  # node name (shown on demand) or "<count> nodes"
    details: tuple[str, ...] = ()  # key attributes, folded initializers (boxes share them)
    category: str = "other"  # colour key: conv, activation, norm, pool, shape, math, ...
    expandable: bool = False  # collapsed group, or node with a body that can expand in place

    @property
    def center(self) -> Point:
        return (self.x + self.width / 2, self.y + self.height / 2)


@dataclass(slots=True)
class GroupFrame:
    """An expanded group drawn as a frame around its members."""

    id: str  # scope id, e.g. "/encoder/layer.3/attention"
    label: str
    x: float
    y: float
    width: float
    height: float
    node_count: int  # operators inside, recursively
    members: list[str] = field(default_factory=list)  # ids of boxes directly inside
    depth: int = 0
    kind: Literal["scope", "chunk", "subgraph", "function"] = "scope"


@dataclass(slots=True)
class Edge:
    """A tensor travelling from one box to another along a routed curve."""

    source: str  # Box id
    target: str  # Box id
    value: str  # tensor name
    label: str = ""  # shape text, e.g. "1×64×56×56"
    points: list[Point] = field(default_factory=list)  # polyline: start, bends..., end
    back: bool = False  # drawn against the flow (a cycle was broken)


@dataclass
class Layout:
    """A complete drawing of one graph in one expand/collapse state and direction."""

    direction: Direction
    width: float
    height: float
    boxes: list[Box] = field(default_factory=list)
    groups: list[GroupFrame] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)

    def box(self, box_id: str) -> Box | None:
        return next((b for b in self.boxes if b.id == box_id), None)
