"""One unit of the compound layout (build.py) as layout_dag sees it, and back.

A unit's items (boxes and laid-out sub-units) and its edge pieces become sized items and
index pairs; a group's entries and exits become zero-size ports on a first and last layer.
The result, offset by the unit's padding, becomes its items' positions, its ports' x and
its edge routes. BERT-96 lays out 1,253 units, all but 16 memoised by layout_dag: this
per-unit setup is most of their cost, so it is kept to plain loops.
"""

from __future__ import annotations

from typing import NamedTuple

from onnxstudio.layout.layered import DagResult
from onnxstudio.layout.types import Box, Point
from onnxstudio.layout.units import Unit

IN = "\x00in:"  # + source box id: a group's entry for that tensor's producer
OUT = "\x00out:"  # + source box id: a group's exit

Key = tuple[str, str, str]
Ports = list[tuple[str, int]]
Offsets = dict[tuple[int, float, float, float], tuple[DagResult, list[Point], list[list[Point]]]]


class DagInputs(NamedTuple):
    """layout_dag's arguments for one unit."""

    widths: list[float]
    heights: list[float]
    edges: list[tuple[int, int]]
    weights: list[float]
    top: list[int]
    bottom: list[int]
    src_off: list[float | None]
    dst_off: list[float | None]


def dag_inputs(unit: Unit, units: dict[str, Unit], boxes: dict[str, Box]
               ) -> tuple[list[Key], Ports, DagInputs]:
    """The unit's edge keys, its ports (id, index) and layout_dag's arguments."""
    items = unit.items
    index = dict(zip(items, range(len(items)), strict=True))
    widths: list[float] = []
    heights: list[float] = []
    nested = False
    for item in items:
        box: Box | Unit | None = units.get(item)
        if box is None:
            box = boxes[item]
        else:
            nested = True
        widths.append(box.width)
        heights.append(box.height)
    top: list[int] = []
    bottom: list[int] = []
    ports: Ports = []
    edges: list[tuple[int, int]] = []

    def port(name: str, side: list[int]) -> int:
        i = index[name] = len(widths)
        ports.append((name, i))
        side.append(i)
        widths.append(0.0)
        heights.append(0.0)
        return i

    at = index.get
    for a, b, _s in unit.edges:  # an end that is no item is a port (starts with NUL)
        ia = at(a)
        ib = at(b)
        edges.append((port(a, top) if ia is None else ia,
                      port(b, bottom) if ib is None else ib))
    keys = list(unit.edges)
    src_off: list[float | None] = [None] * len(keys)
    dst_off: list[float | None] = [None] * len(keys)
    for e, (a, b, s) in enumerate(keys) if nested else ():
        sa = units.get(a)
        sb = units.get(b)
        if sa is not None:
            src_off[e] = sa.out_x.get(s)
        if sb is not None:
            dst_off[e] = sb.in_x.get(s)
    weights = [float(w) for w in unit.edges.values()]
    return keys, ports, DagInputs(widths, heights, edges, weights, top, bottom, src_off,
                                  dst_off)


def place(unit: Unit, res: DagResult, keys: list[Key], ports: Ports, pad_l: float,
          pad_t: float, memo: Offsets) -> None:
    """Store ``res``, offset by the padding, as the unit's positions, ports and routes."""
    pos, routes = _offset(res, keys, pad_l, pad_t, unit.height, memo)
    unit.pos.update(zip(unit.items, pos, strict=False))
    for port, i in ports:
        if port.startswith(IN):
            unit.in_x[port[len(IN):]] = pos[i][0]
        else:
            unit.out_x[port[len(OUT):]] = pos[i][0]
    unit.routes.update(zip(keys, routes, strict=True))
    unit.reversed.update(zip(keys, res.reversed, strict=True))


def _offset(res: DagResult, keys: list[Key], pad_l: float, pad_t: float, height: float,
            memo: Offsets) -> tuple[list[Point], list[list[Point]]]:
    """Item positions and edge routes offset by the padding. Units laid out alike (every
    layer of a transformer) share one memoised DagResult, and so share these lists too
    (read-only): the same numbers, computed once. ``keys`` only say which edges run to
    the unit's entries and exits, which the result fixes."""
    key = (id(res), pad_l, pad_t, height)
    hit = memo.get(key)
    if hit is not None:
        return hit[1], hit[2]
    pos = [(x + pad_l, y + pad_t) for x, y in zip(res.x, res.y, strict=True)]
    # Python, not numpy: a small numpy step per unit lets the GIL go and takes it back
    # at once, which starved the window's thread of it for a whole depth of units
    # (dag100k's Expand All froze the window 190-220 ms).
    flat = res.points.tolist()
    routes: list[list[Point]] = []
    start = 0
    for (a, b, _s), end in zip(keys, res.ends.tolist(), strict=False):
        pts = [(px + pad_l, py + pad_t) for px, py in flat[start:end]]
        start = end
        if a.startswith(IN) and pts:
            pts[0] = (pts[0][0], 0.0)  # from the top of the frame
        if b.startswith(OUT) and pts:
            pts[-1] = (pts[-1][0], height)  # to its bottom
        routes.append(pts)
    memo[key] = (res, pos, routes)  # holds res: its id stays unique
    return pos, routes
