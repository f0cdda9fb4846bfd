"""The bookkeeping of edge-label placement (render/edge_labels.py): which tensor each
edge carries and its home tile, and the labels placed so far as flat arrays."""

from __future__ import annotations

import numpy as np

from onnxstudio.layout.types import Layout

UNKNOWN = np.iinfo(np.int64).min  # a tensor's home tile not worked out yet


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
    mask: per label its edge, (text x, baseline, x0, y0, x1, y1) and its home tile."""

    def __init__(self, edge: np.ndarray, values: np.ndarray, tile: np.ndarray) -> None:
        self.edge, self.values, self.tile = edge, values, tile
        self.text_x, self.base = values[:, 0], values[:, 1]
        self.x0, self.y0, self.x1, self.y1 = values[:, 2], values[:, 3], values[:, 4], values[:, 5]

    @classmethod
    def gathered(cls, parts: list[PlacedLabels]) -> PlacedLabels:
        """The labels of ``parts`` in one set, in edge order."""
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return cls(np.zeros(0, dtype=np.int64), np.zeros((0, 6)), np.zeros(0, dtype=np.int64))
        edge = np.concatenate([p.edge for p in parts])
        order = np.argsort(edge, kind="stable")
        return cls(edge[order], np.concatenate([p.values for p in parts])[order],
                   np.concatenate([p.tile for p in parts])[order])

    def only(self, mask: np.ndarray) -> PlacedLabels:
        """The labels ``mask`` keeps."""
        return PlacedLabels(self.edge[mask], self.values[mask], self.tile[mask])

    def by_tile(self) -> dict[int, PlacedLabels]:
        """These labels split by home tile (each part in edge order)."""
        order = np.argsort(self.tile, kind="stable")
        keys = self.tile[order]
        cuts = (np.flatnonzero(keys[1:] != keys[:-1]) + 1).tolist()
        return {int(keys[a]): PlacedLabels(self.edge[part], self.values[part], keys[a:b])
                for a, b in zip([0, *cuts], [*cuts, len(keys)], strict=True)
                for part in (order[a:b],) if b > a}


class Placement:
    """The labels of one look (node names shown or not) placed so far, by home tile
    (a paint gathers the few tiles it shows, not every label placed: those grow with
    every tile scrolled to). ``done``: the tiles placed, with or without labels.
    Replaced, not changed, when a tile is added: a paint may be reading them."""

    def __init__(self) -> None:
        self.tiles: dict[int, PlacedLabels] = {}
        self.done: frozenset[int] = frozenset()
        self.complete = False
        self._whole: tuple[dict[int, PlacedLabels], PlacedLabels] | None = None

    def add(self, labels: PlacedLabels, tiles: set[int]) -> None:
        """The labels of ``tiles`` (placed together; the caller holds the lock)."""
        self.tiles = {**self.tiles, **labels.by_tile()}
        self.done = self.done | tiles

    @property
    def labels(self) -> PlacedLabels:
        """Every label placed so far, in edge order."""
        tiles, whole = self.tiles, self._whole
        if whole is None or whole[0] is not tiles:
            whole = self._whole = (tiles, PlacedLabels.gathered(list(tiles.values())))
        return whole[1]

    def within(self, keys: list[int]) -> PlacedLabels:
        """The labels of the tiles ``keys``, in edge order."""
        tiles = self.tiles
        return PlacedLabels.gathered([part for k in keys if (part := tiles.get(k)) is not None])


def tile_keys(rect: tuple[float, float, float, float], tile: float) -> list[int]:
    """The tiles (side ``tile``) ``rect`` meets, as keys (``tile_key``)."""
    x, y, w, h = rect
    return [tile_key(c, r) for c in range(int(x // tile), int((x + w) // tile) + 1)
            for r in range(int(y // tile), int((y + h) // tile) + 1)]


def tile_key(col: int, row: int) -> int:
    """One number per tile (``EdgeLabels._blocked`` takes it apart again)."""
    return (col << 32) + row + 2**31
