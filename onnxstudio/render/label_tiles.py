"""The bookkeeping of edge-label placement (render/edge_labels.py): which tensor each
edge carries and its home tile, the labels placed so far as flat arrays, and the grid
that answers "does this spot overlap a label placed before"."""

from __future__ import annotations

import numpy as np

from onnxstudio.layout.types import Layout
from onnxstudio.render.hit_index import Rect

UNKNOWN = np.iinfo(np.int64).min  # a tensor's home tile not worked out yet
Row = tuple[int, float, float, float, float, float, float]  # edge, x, baseline, x0, y0, x1, y1


class Tensors:
    """Per edge the tensor it carries (a number; -1 for an edge without a label), per
    tensor its first edge, its home tile once known, and its edges in edge order."""

    def __init__(self, layout: Layout) -> None:
        codes: dict[tuple[str, str], int] = {}
        self.tensor = np.fromiter(
            (codes.setdefault((e.source, e.value), len(codes)) if e.label else -1
             for e in layout.edges), dtype=np.int64, count=len(layout.edges))
        labelled = np.flatnonzero(self.tensor >= 0)
        self.order = labelled[np.argsort(self.tensor[labelled], kind="stable")]
        counts = np.bincount(self.tensor[labelled], minlength=len(codes))
        self.start = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        self.first = self.order[self.start[:-1]]
        self.home = np.full(len(codes), UNKNOWN, dtype=np.int64)

    def edges_of(self, tensors: np.ndarray) -> np.ndarray:
        """Every edge of ``tensors``."""
        lo, hi = self.start[tensors], self.start[tensors + 1]
        counts = hi - lo
        step = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        return self.order[np.repeat(lo, counts) + step]


class PlacedLabels:
    """Decided label positions as flat arrays in edge order, for culling with one numpy
    mask; ``tile``: each label's home tile."""

    def __init__(self, rows: list[Row], tiles: list[int]) -> None:
        a = np.array(rows, dtype=np.float64).reshape(-1, 7)
        self._set(a[:, 0].astype(np.int64), a[:, 1:], np.array(tiles, dtype=np.int64))

    def _set(self, edge: np.ndarray, values: np.ndarray, tile: np.ndarray) -> None:
        self.edge, self.values, self.tile = edge, values, tile
        self.text_x, self.base = values[:, 0], values[:, 1]
        self.x0, self.y0, self.x1, self.y1 = values[:, 2], values[:, 3], values[:, 4], values[:, 5]

    def joined(self, rows: list[Row], tiles: list[int]) -> PlacedLabels:
        """These labels and ``rows``, a new object (a paint may be reading this one)."""
        more = PlacedLabels(rows, tiles)
        edge = np.concatenate((self.edge, more.edge))
        order = np.argsort(edge, kind="stable")
        out = PlacedLabels([], [])
        out._set(edge[order], np.concatenate((self.values, more.values))[order],
                 np.concatenate((self.tile, more.tile))[order])
        return out


class Placement:
    """The labels of one look (node names shown or not) placed so far, and their tiles."""

    def __init__(self) -> None:
        self.labels = PlacedLabels([], [])
        self.done: set[int] = set()
        self.complete = False


class RectGrid:
    """The labels placed so far, bucketed in a coarse grid: fast "does this spot overlap
    one". A query walks the cells the spot covers and stops at the first answer."""

    CELL = 128.0  # a label spans 1-2 cells

    def __init__(self) -> None:
        self.cells: dict[tuple[int, int], list[Rect]] = {}

    def add(self, r: Rect) -> None:
        """File ``r`` under every cell it covers."""
        x, y, w, h = r
        c, cells = self.CELL, self.cells
        for i in range(int(x // c), int((x + w) // c) + 1):
            for j in range(int(y // c), int((y + h) // c) + 1):
                cell = cells.get((i, j))
                if cell is None:
                    cells[(i, j)] = [r]
                else:
                    cell.append(r)

    def hits(self, r: Rect) -> bool:
        """Whether ``r`` overlaps a rectangle filed under the cells it covers."""
        x, y, w, h = r
        x1, y1 = x + w, y + h
        c, cells = self.CELL, self.cells
        for i in range(int(x // c), int(x1 // c) + 1):
            for j in range(int(y // c), int(y1 // c) + 1):
                for ox, oy, ow, oh in cells.get((i, j), ()):
                    if x < ox + ow and ox < x1 and y < oy + oh and oy < y1:
                        return True
        return False
