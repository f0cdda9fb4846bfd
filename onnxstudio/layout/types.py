"""The laid-out graph as plain data: what render/ paints and export/ writes.

One coordinate space for the whole drawing (y grows downwards, units are pixels at
zoom 1), so the canvas, the SVG/PNG/PDF export and the JSON export agree exactly.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from itertools import chain
from struct import Struct
from typing import Literal, NamedTuple

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


_XY = Struct("<2d")  # one point of a packed route


class _EdgeFields(NamedTuple):
    source: str  # Box id
    target: str  # Box id
    value: str  # tensor name
    label: str  # shape text, e.g. "1×64×56×56"
    route: list[Point] | bytes  # the polyline; bytes: packed (see Edge)
    back: bool  # drawn against the flow (a cycle was broken)


class Edge(_EdgeFields):
    """A tensor travelling from one box to another along a routed curve.

    ``points`` is the polyline (start, bends..., end): ``route`` is a list when given one
    (a JSON import), but a built layout's routes come packed (``assemble.make_edges``:
    slices of one array) as bytes of float64 x, y pairs: 16 bytes a point, one object
    the collector does not track, instead of a list of tuples of floats (about 110 bytes
    a point; expanded dag100k has 364k points). Reading ``points`` then makes a new list
    each time. A tuple, so a layout's 147k edges are made in C
    (``tuple.__new__(Edge, fields)``, no Python call each: 0.3 s of dag100k's Expand
    All) and read by C getters; an edge is changed by making another (``_replace``).
    """

    __slots__ = ()

    def __new__(cls, source: str, target: str, value: str, label: str = "",
                points: list[Point] | bytes | None = None, back: bool = False) -> Edge:
        return tuple.__new__(cls, (source, target, value, label,
                                   [] if points is None else points, back))

    @property
    def points(self) -> list[Point]:
        route = self.route
        if type(route) is list:
            return route
        return list(_XY.iter_unpack(route))  # type: ignore[arg-type]

    @property
    def packed(self) -> bytes:
        """The route as float64 x, y pairs (what numpy reads with ``frombuffer``)."""
        route = self.route
        if isinstance(route, bytes):
            return route
        return array("d", chain.from_iterable(route)).tobytes()

    def relabelled(self, label: str) -> Edge:
        """This edge with another label, sharing its route."""
        return self._replace(label=label)

    @property
    def point_count(self) -> int:
        route = self.route
        return len(route) >> 4 if isinstance(route, bytes) else len(route)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Edge):
            return NotImplemented
        return (self.source, self.target, self.value, self.label, self.points, self.back) == (
            other.source, other.target, other.value, other.label, other.points, other.back)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # type: ignore[assignment]  # mutable before, and a route may be a list

    def __repr__(self) -> str:
        return (f"Edge({self.source!r}, {self.target!r}, {self.value!r}, {self.label!r}, "
                f"{self.points!r}, {self.back!r})")


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
