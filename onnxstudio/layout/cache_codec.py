"""How the layout cache (cache.py) writes a Layout and a ScopeTree: runs of small pickles.

Pickle (protocol 5) because it is the fastest way back to dataclasses: a columnar
encoding measured no faster to load (879 vs 987 ms for 100k boxes and 147k edges),
since rebuilding each object in Python costs what unpickling it does. Small, because
one ``pickle.loads`` holds the GIL for its whole run (a second for 100k boxes): with at
most ``CHUNK`` objects each (~5 ms), the GUI thread gets its turn between them. A scope
tree is written as plain rows, so it too loads in runs (in one pickle, dag100k's tree
held the GIL for 40-50 ms).
Only the classes listed in ``_CLASSES`` unpickle, so an entry can never run code.
"""

from __future__ import annotations

import io
import pickle
from array import array
from collections.abc import Callable
from typing import Any

from onnxstudio.layout.layered import LayoutCancelled
from onnxstudio.layout.scope_tree import ScopeGroup, ScopeTree
from onnxstudio.layout.types import Box, Edge, GroupFrame, Layout
from onnxstudio.pickle_runs import dump_runs, load_runs

CHUNK = 1000  # objects per pickle
KEYS = 20_000  # box ids per pickle of a scope tree's lookup (strings load ~10x faster)
_CLASSES = {(c.__module__, c.__name__): c for c in (Box, Edge, GroupFrame)}


def encode_layout(layout: Layout) -> bytes:
    out = io.BytesIO()
    pickle.dump((layout.direction, layout.width, layout.height), out, 5)
    for items in (layout.boxes, layout.groups, layout.edges):
        dump_runs(items, out, CHUNK)
    return out.getvalue()


def decode_layout(payload: memoryview, cancel: Callable[[], bool] | None = None
                  ) -> Layout | None:
    stream = io.BytesIO(payload)
    direction, width, height = _load(stream)
    parts: list[list[Any]] = []
    for kind in (Box, GroupFrame, Edge):
        items = _load_runs(stream, cancel)
        if not all(type(item) is kind for item in items):
            return None
        parts.append(items)
    boxes, groups, edges = parts
    return Layout(direction, width, height, boxes, groups, edges)


def encode_tree(tree: ScopeTree) -> bytes | None:
    """The groups in pre-order as plain rows (a child group as its index in that order,
    a box as its id), in runs of about ``KEYS`` children; then the lookups as indexes
    into the same order. None if a parent or lookup points outside the tree."""
    order = [tree.root, *tree.root.groups()]
    index = {id(g): i for i, g in enumerate(order)}
    out = io.BytesIO()
    try:
        rows = [(g.id, g.label, g.kind, g.node_count,
                 -1 if g.parent is None else index[id(g.parent)],
                 [c if isinstance(c, str) else index[id(c)] for c in g.children])
                for g in order]
    except KeyError:
        return None
    pickle.dump(len(rows), out, 5)
    run: list[Any] = []
    size = 0
    for row in rows:
        run.append(row)
        size += len(row[5])
        if size >= KEYS:
            pickle.dump(run, out, 5)
            run, size = [], 0
    pickle.dump(run, out, 5)
    for lookup in (tree.by_id, tree.group_of):
        keys = list(lookup)
        try:
            where = array("I", [index[id(lookup[k])] for k in keys])
        except KeyError:
            return None
        pickle.dump(len(keys), out, 5)
        for start in range(0, len(keys), KEYS):
            pickle.dump((keys[start:start + KEYS], where[start:start + KEYS].tobytes()),
                        out, 5)
    return out.getvalue()


def decode_tree(payload: memoryview, cancel: Callable[[], bool] | None = None
                ) -> ScopeTree | None:
    stream = io.BytesIO(payload)
    order = _groups(_load_runs(stream, cancel))
    if order is None:
        return None
    lookups: list[dict[str, ScopeGroup]] = []
    for _ in range(2):
        count = _load(stream)
        lookup: dict[str, ScopeGroup] = {}
        while len(lookup) < count:
            if cancel is not None and cancel():
                raise LayoutCancelled
            keys, raw = _load(stream)
            where = array("I")
            where.frombytes(raw)
            lookup.update(zip(keys, map(order.__getitem__, where), strict=True))
        lookups.append(lookup)
    by_id, group_of = lookups
    return ScopeTree(order[0], group_of, by_id)


def _groups(rows: list[Any]) -> list[ScopeGroup] | None:
    """The ScopeGroups of ``encode_tree``'s rows, linked; None if a row is malformed."""
    try:
        order = [ScopeGroup(gid, label, kind, None, [], count)
                 for gid, label, kind, count, _parent, _children in rows]
        for group, (*_, parent, children) in zip(order, rows, strict=True):
            group.parent = order[parent] if parent >= 0 else None
            group.children = [c if type(c) is str else order[c] for c in children]
    except (ValueError, TypeError, IndexError):
        return None
    return order if order and order[0].parent is None else None


def _load_runs(stream: io.BytesIO, cancel: Callable[[], bool] | None) -> list[Any]:
    def check() -> None:
        if cancel is not None and cancel():
            raise LayoutCancelled

    return load_runs(lambda: _load(stream), check)


def _load(stream: io.BytesIO) -> Any:
    return _Unpickler(stream).load()


class _Unpickler(pickle.Unpickler):
    """Unpickles the layout's own classes and nothing else (no code runs)."""

    def find_class(self, module: str, name: str) -> Any:
        cls = _CLASSES.get((module, name))
        if cls is None:
            raise pickle.UnpicklingError(f"{module}.{name} is not part of a layout")
        return cls
