"""One unit of the compound layout (build.py) as layout_dag sees it, and back.

A unit's items (boxes and laid-out sub-units) and its edge pieces become sized items and
index pairs; a group's entries and exits become zero-size ports on a first and last layer.
The result, offset by the unit's padding, gives its ports' x at once; its items' positions
and edge routes are read from it when everything is placed (assemble.py). BERT-96 lays
out 1,253 units, all but 16 memoised by layout_dag: this per-unit setup is most of their
cost, so it is kept to plain loops.
"""

from __future__ import annotations

from operator import itemgetter
from typing import NamedTuple, cast

from onnxstudio.layout.layered import DagResult
from onnxstudio.layout.types import Box, Point
from onnxstudio.layout.units import Unit

IN = "\x00in:"  # + source box id: a group's entry for that tensor's producer
OUT = "\x00out:"  # + source box id: a group's exit

Key = tuple[str, str, str]
Ports = list[tuple[str, int]]


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
    get = units.get
    found = list(map(get, items))  # a laid-out sub-unit, or None: a box
    nested = found.count(None) < len(found)
    if nested:
        sized: list[Box | Unit] = [boxes[i] if u is None else u
                                   for i, u in zip(items, found, strict=True)]
    else:
        sized = list(map(boxes.__getitem__, items))
    widths = [b.width for b in sized]
    heights = [b.height for b in sized]
    top: list[int] = []
    bottom: list[int] = []
    ports: Ports = []

    def port(name: str, side: list[int]) -> int:
        i = index[name] = len(widths)
        ports.append((name, i))
        side.append(i)
        widths.append(0.0)
        heights.append(0.0)
        return i

    at = index.get
    keys = list(unit.edges)
    src = list(map(at, map(itemgetter(0), keys)))
    dst = list(map(at, map(itemgetter(1), keys)))
    # an end that is no item is a port (starts with NUL): numbered in edge order
    for e in [e for e, (i, j) in enumerate(zip(src, dst, strict=True)) if i is None or j is None]:
        a, b, _s = keys[e]
        if src[e] is None:
            i = at(a)
            src[e] = port(a, top) if i is None else i
        if dst[e] is None:
            j = at(b)
            dst[e] = port(b, bottom) if j is None else j
    edges = cast(list[tuple[int, int]], list(zip(src, dst, strict=True)))  # no None left
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
          pad_t: float) -> None:
    """Keep ``res`` as the unit's layout at ``(pad_l, pad_t)``: its ports' x now, its
    items' positions and edge routes when assemble.py places and joins everything (on
    arrays: offsetting each unit's routes here made 170k lists of tuples for dag100k)."""
    unit.result = res
    unit.pad = (pad_l, pad_t)
    unit.edge_at = dict(zip(keys, range(len(keys)), strict=True))
    xs = res.x
    for port, i in ports:
        if port.startswith(IN):
            unit.in_x[port[len(IN):]] = xs[i] + pad_l
        else:
            unit.out_x[port[len(OUT):]] = xs[i] + pad_l


def route(unit: Unit, key: Key) -> list[Point]:
    """One edge piece's route in the unit, as assemble.join_routes takes it (entries
    start at the frame's top, exits end at its bottom)."""
    res = unit.result
    if res is None:
        return []
    e = unit.edge_at[key]
    pad_l, pad_t = unit.pad
    start = int(res.ends[e - 1]) if e else 0
    pts = [(px + pad_l, py + pad_t) for px, py in res.points[start:res.ends[e]].tolist()]
    if key[0].startswith(IN) and pts:
        pts[0] = (pts[0][0], 0.0)
    if key[1].startswith(OUT) and pts:
        pts[-1] = (pts[-1][0], unit.height)
    return pts
