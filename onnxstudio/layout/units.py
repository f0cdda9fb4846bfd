"""The containers the compound layout works in (see build.py): an expanded group, body or
call frame being laid out on its own, and the edge pieces that cross them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from onnxstudio.layout.layered import DagResult

Key = tuple[str, str, str]  # (from item, to item, source box id) within one unit


@dataclass(eq=False)
class Unit:
    """An expanded container: the root, a scope/chunk group, a body, or a call frame."""

    id: str
    label: str
    kind: str
    node_count: int
    parent: Unit | None
    depth: int
    num: int  # its place in the build's units (assemble joins routes by it)
    items: list[str] = field(default_factory=list)
    edges: dict[Key, int] = field(default_factory=dict)  # (from, to, source) -> count
    width: float = 0.0
    height: float = 0.0
    in_x: dict[str, float] = field(default_factory=dict)  # entry x per source box id
    out_x: dict[str, float] = field(default_factory=dict)  # exit x per source box id
    # its layout_dag result (shared by units laid out alike: read-only), placed at
    # ``pad`` in the unit; ``edge_at``: each edge key's index in it (unit_place.place)
    result: DagResult | None = None
    pad: tuple[float, float] = (0.0, 0.0)
    edge_at: dict[Key, int] = field(default_factory=dict)


@dataclass(eq=False)
class Pieces:
    """Every drawn edge and the per-unit pieces it is split into, as flat parallel lists:
    edge ``i``'s pieces are ``units[starts[i]:starts[i + 1]]`` (with ``keys`` alike),
    from its source's unit to its target's. No object per edge or piece beyond the
    shared keys (expanded dag100k: 147k edges, 179k pieces)."""

    sources: list[str]
    targets: list[str]
    values: list[str]
    labels: list[str]
    units: list[Unit]
    keys: list[Key]
    starts: np.ndarray  # len(sources) + 1 offsets into units/keys
    nums: np.ndarray  # each piece's Unit.num
    ports: np.ndarray  # the pieces from an entry or to an exit (a key with a port)
    # each edge's ends as indexes into a list of box ids, when found on arrays
    codes: tuple[np.ndarray, np.ndarray, list[str]] | None
