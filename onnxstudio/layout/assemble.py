"""The last steps of the compound layout (build.py): absolute positions for every unit's
items and one polyline per edge, then the LR drawing as the TB one transposed."""

from __future__ import annotations

from collections.abc import Iterable

from onnxstudio.layout.types import Box, Edge, GroupFrame, Layout, Point
from onnxstudio.layout.units import Piece, Unit


def place_items(units: dict[str, Unit], boxes_by_id: dict[str, Box], root: Unit
                ) -> tuple[list[Box], list[GroupFrame], dict[str, Point]]:
    """Boxes at their absolute positions, the frames of the expanded units (by depth,
    then place), and each unit's origin."""
    origin: dict[str, Point] = {root.id: (0.0, 0.0)}
    frames: list[GroupFrame] = []
    stack = [root]
    boxes: list[Box] = []
    while stack:
        unit = stack.pop()
        ox, oy = origin[unit.id]
        for item in unit.items:
            px, py = unit.pos[item]
            sub = units.get(item)
            if sub is not None:
                origin[item] = (ox + px, oy + py)
                frames.append(GroupFrame(sub.id, sub.label, ox + px, oy + py, sub.width,
                                         sub.height, sub.node_count, list(sub.items),
                                         sub.depth - 1, sub.kind))  # type: ignore[arg-type]
                stack.append(sub)
            else:
                box = boxes_by_id[item]
                box.x, box.y = ox + px, oy + py
                boxes.append(box)
    frames.sort(key=lambda f: (f.depth, f.y, f.x))
    return boxes, frames, origin


def join_edges(pieces: Iterable[Piece], origin: dict[str, Point]) -> list[Edge]:
    """Each edge's polyline: its pieces' routes, offset by their units' origins."""
    edges: list[Edge] = []
    for s, d, value, label, path in pieces:
        pts: list[Point] = []
        back = False
        lx = ly = 0.0  # the last point kept (once pts has one)
        for unit, key in path:
            ox, oy = origin[unit.id]
            if unit.reversed.get(key) and key[0][0] != "\x00" and key[1][0] != "\x00":
                back = True
            for px, py in unit.routes.get(key, ()):
                x = ox + px
                y = oy + py
                if not pts or abs(lx - x) > 0.01 or abs(ly - y) > 0.01:
                    pts.append((x, y))
                    lx, ly = x, y
        edges.append(Edge(s, d, value, label, pts, back))
    return edges


def transpose(layout: Layout) -> Layout:
    """The TB drawing (computed with swapped box sizes) mirrored onto the diagonal: LR."""
    for box in layout.boxes:
        box.x, box.y, box.width, box.height = box.y, box.x, box.height, box.width
    for fr in layout.groups:
        fr.x, fr.y, fr.width, fr.height = fr.y, fr.x, fr.height, fr.width
    for edge in layout.edges:
        edge.points = [(py, px) for px, py in edge.points]
    return Layout("LR", layout.height, layout.width, layout.boxes, layout.groups, layout.edges)
