"""Shaping a scope tree: dissolve groups that would make the drawing cyclic
(:func:`untangle`), and split a scope too large to draw at once into ordered chunks
named by what they span (:func:`chunk`).

Kept apart from the tree building in :mod:`onnxstudio.layout.scopes`, which calls
these when it builds a tree.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

import numpy as np

from onnxstudio.layout.scope_tree import ScopeGroup


def leaves(group: ScopeGroup) -> list[str]:
    """Box ids anywhere inside ``group``."""
    out: list[str] = []
    stack = [group]
    while stack:
        for child in stack.pop().children:
            if isinstance(child, ScopeGroup):
                stack.append(child)
            else:
                out.append(child)
    return out


def _downstream(n: int, u: np.ndarray, v: np.ndarray
                ) -> tuple[list[int], list[int], list[int]]:
    """The edges ``u -> v`` between ``n`` items as successor lists (``heads[starts[i]:
    starts[i + 1]]``), and the items left by a topological peel: those on or after a
    cycle (the peel is cheaper than finding components, and most items go)."""
    by_u = np.argsort(u, kind="stable")
    starts = np.searchsorted(u[by_u], np.arange(n + 1)).tolist()
    heads = v[by_u].tolist()
    indeg = np.bincount(v, minlength=n).tolist()
    ready = [i for i, k in enumerate(indeg) if k == 0]
    while ready:
        i = ready.pop()
        for j in heads[starts[i]:starts[i + 1]]:
            indeg[j] -= 1
            if indeg[j] == 0:
                ready.append(j)
    return starts, heads, [i for i, k in enumerate(indeg) if k > 0]


def _in_cycles(n: int, u: np.ndarray, v: np.ndarray) -> list[bool]:
    """Which of ``n`` items lie on a cycle of the edges ``u -> v``: the members of the
    strongly connected components with more than one item (iterative Tarjan over what
    the peel leaves: nothing there leads back to what it took)."""
    starts, heads, left = _downstream(n, u, v)
    index = [-1] * n
    low = [0] * n
    on = [False] * n
    cyclic = [False] * n
    stack: list[int] = []
    counter = 0
    for start in left:
        if index[start] >= 0:
            continue
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on[start] = True
        work = [(start, iter(heads[starts[start]:starts[start + 1]]))]
        while work:
            x, it = work[-1]
            for w in it:
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on[w] = True
                    work.append((w, iter(heads[starts[w]:starts[w + 1]])))
                    break
                if on[w] and index[w] < low[x]:
                    low[x] = index[w]
            else:
                work.pop()
                if work and low[x] < low[work[-1][0]]:
                    low[work[-1][0]] = low[x]
                if low[x] == index[x]:
                    w = stack.pop()
                    on[w] = False
                    if w != x:  # more than one member
                        cyclic[w] = True
                        while w != x:
                            w = stack.pop()
                            on[w] = False
                            cyclic[w] = True
    return cyclic


def _ancestors(parent: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Each group's ancestors by depth, itself included (-1 below it, and in one spare
    column at the end), and its depth; ``parent`` lists parents before children."""
    depth = [0] * len(parent)
    for gi in range(1, len(parent)):
        depth[gi] = depth[parent[gi]] + 1
    up = np.asarray(parent, dtype=np.int64)
    at = np.asarray(depth, dtype=np.int64)
    anc = np.full((len(parent), int(at.max()) + 2), -1, dtype=np.int64)
    rows = np.arange(len(parent))
    cur = rows.copy()
    while len(rows):  # each group's own entry, then its parent's, one level up a pass
        anc[rows, at[cur]] = cur
        cur = up[cur]
        keep = cur >= 0
        rows, cur = rows[keep], cur[keep]
    return anc, at


class _Edges:
    """Edges between leaves (``s -> d``), with both ends' ancestor rows, the depth where
    those part and the lowest group holding both (``lca``)."""

    def __init__(self, anc: np.ndarray, leaf_group: np.ndarray, s: np.ndarray,
                 d: np.ndarray) -> None:
        self.s, self.d = s, d
        self.ga, self.gb = ga, gb = leaf_group[s], leaf_group[d]
        self.apart = ga != gb  # in different groups
        self.a, self.b = anc[ga], anc[gb]
        self.part = np.argmin((self.a == self.b) & (self.a >= 0), axis=1)
        self.lca = self.a[np.arange(len(s)), self.part - 1]


def _cyclic_levels(e: _Edges, n_groups: int) -> list[int]:
    """Groups whose children (groups contracted) are joined into a cycle by the edges
    that part there, not counting edges between two operators of one group."""
    keep = np.flatnonzero(e.apart)
    if not len(keep):
        return []
    s, d, part = e.s[keep], e.d[keep], e.part[keep]
    # the child of that level holding each end: a group, or the leaf itself (n_groups + i)
    ca, cb = e.a[keep, part], e.b[keep, part]
    ca = np.where(ca >= 0, ca, n_groups + s)
    cb = np.where(cb >= 0, cb, n_groups + d)
    _, first = np.unique(ca * (n_groups + 1 + max(s.max(), d.max())) + cb,
                         return_index=True)
    level = e.lca[keep[first]]
    # Every item is a child of one level only, so the levels' graphs are disjoint: one
    # topological peel over all of them leaves exactly the items of the cyclic levels.
    items, inv = np.unique(np.concatenate([ca[first], cb[first]]), return_inverse=True)
    u, v = inv[:len(first)], inv[len(first):]
    stuck = np.zeros(len(items), dtype=bool)
    stuck[_downstream(len(items), u, v)[2]] = True
    stuck = stuck[u]
    return sorted(set(level[stuck].tolist()))


def untangle(groups: list[ScopeGroup], parent: list[int], leaf_group: np.ndarray,
             s: np.ndarray, d: np.ndarray, flat: set[int]) -> None:
    """Dissolve groups that would make the drawing cyclic.

    A module called twice (ResNet's shared ``relu``) yields a group whose members sit
    at two places of the data flow; drawn as one box it closes a cycle with what runs
    in between. Per level, the groups of each cyclic component are spliced into their
    parent until the level is acyclic, outer levels first.

    ``groups`` lists parents before children (``parent``: index of each one's parent,
    -1 for the root); ``leaf_group``: each leaf's group; ``s -> d``: edges as leaf
    indices; ``flat``: ids of the groups that hold no groups (levels left so join it).
    All on arrays: each edge belongs to the level where its ends part, and the levels of
    one nesting depth are disjoint, so they are dissolved together.
    """
    if not len(s) or len(groups) < 2:
        return
    anc, depth = _ancestors(parent)
    edges = _Edges(anc, leaf_group, s, d)
    levels = _cyclic_levels(edges, len(groups))
    if not levels:
        return
    n = len(groups)
    cyclic = np.zeros(n + 1, dtype=bool)  # the spare entry answers for -1
    cyclic[levels] = True
    outer = cyclic[anc].sum(axis=1) - 1  # cyclic levels around each cyclic level
    gone = np.zeros(n + 1, dtype=bool)
    for rank in sorted(set(outer[levels].tolist())):
        wave = [g for g in levels if outer[g] == rank and not gone[g]]
        changed = _dissolve_wave(wave, anc, depth, edges, gone)
        if changed:
            ids = {id(groups[k]) for k in np.flatnonzero(gone[:n]).tolist()}
            for gi in sorted(changed):
                _splice(groups[gi], ids, flat)


def _dissolve_wave(wave: list[int], anc: np.ndarray, depth: np.ndarray, edges: _Edges,
                   gone: np.ndarray) -> set[int]:
    """Mark in ``gone`` the groups dissolved into the (disjoint) levels of ``wave``;
    returns the levels that changed. A level's children are its nearest groups not
    gone, or the leaves themselves; at most 64 rounds, each dissolving every group on a
    cycle of its level (interleaved modules, lanes feeding each other, are none of them a
    unit), while the level changes and has groups left."""
    n = len(anc)
    in_wave = np.zeros(n + 1, dtype=bool)
    in_wave[wave] = True
    level_of = np.where(in_wave[anc], anc, -1).max(axis=1)  # the wave level around
    keep = level_of[edges.lca] >= 0
    ga, gb = edges.ga[keep], edges.gb[keep]
    s, d, e_level = edges.s[keep] + n, edges.d[keep] + n, level_of[edges.lca[keep]]
    below = (np.arange(anc.shape[1]) > depth[level_of][:, None]) & (anc >= 0)
    below &= (level_of >= 0)[:, None]
    cols = np.arange(n)
    active = in_wave[:n].copy()
    changed: set[int] = set()
    for _ in range(64):
        open_ = below & ~gone[anc]
        first = open_.argmax(axis=1)
        item = np.where(open_[cols, first], anc[cols, first], -1)  # of each group's leaves
        rows = np.flatnonzero(active[e_level])
        ia, ib = item[ga[rows]], item[gb[rows]]
        has_group = (ia >= 0) | (ib >= 0)
        ia = np.where(ia >= 0, ia, s[rows])
        ib = np.where(ib >= 0, ib, d[rows])
        apart = ia != ib
        live = np.zeros(n, dtype=bool)  # levels with groups left: only operators are done
        live[e_level[rows[apart & has_group]]] = True
        apart &= live[e_level[rows]]
        if not apart.any():
            break
        items, inv = np.unique(np.concatenate([ia[apart], ib[apart]]), return_inverse=True)
        half = int(apart.sum())
        on_cycle = np.asarray(_in_cycles(len(items), inv[:half], inv[half:]))
        new = items[on_cycle & (items < n)]
        if not len(new):
            break
        gone[new] = True
        active[:] = False
        active[level_of[new]] = True
        changed.update(level_of[new].tolist())
    return changed


def _splice(group: ScopeGroup, gone: set[int], flat: set[int]) -> None:
    """Replace the dissolved groups among ``group``'s children by their own children;
    add ``group`` to ``flat`` if no group is left in it."""
    spliced: list[ScopeGroup | str] = []
    nested = False
    stack = [iter(group.children)]
    while stack:
        for child in stack[-1]:
            if isinstance(child, ScopeGroup):
                if id(child) in gone:
                    if id(child) in flat:
                        spliced += child.children
                        continue
                    stack.append(iter(child.children))
                    break
                child.parent = group
                nested = True
            spliced.append(child)
        else:
            stack.pop()
    group.children = spliced
    if not nested:
        flat.add(id(group))


def _topological(group: ScopeGroup, succ_of: dict[str, list[str]]) -> None:
    """Reorder a group's children along the data flow (stable: graph order breaks ties),
    so that cutting the list into consecutive chunks cannot create chunk cycles."""
    rep: dict[str, int] = {}
    for i, child in enumerate(group.children):
        for leaf in leaves(child) if isinstance(child, ScopeGroup) else [child]:
            rep[leaf] = i
    n = len(group.children)
    succ: list[set[int]] = [set() for _ in range(n)]
    for a, i in rep.items():
        for b in succ_of.get(a, ()):
            j = rep.get(b)
            if j is not None and j != i:
                succ[i].add(j)
    indeg = [0] * n
    for out in succ:
        for j in out:
            indeg[j] += 1
    ready = [i for i in range(n) if indeg[i] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for j in succ[i]:
            indeg[j] -= 1
            if indeg[j] == 0:
                heapq.heappush(ready, j)
    if len(order) == n:  # acyclic (untangled); otherwise keep graph order
        group.children = [group.children[i] for i in order]


def _name(item: ScopeGroup | str, names: dict[str, str]) -> str:
    """What a chunk's title calls one of its ends: a scope's label, a node's own name
    (its last path component), or a graph input/output's tensor name."""
    if isinstance(item, ScopeGroup):
        return item.label if item.kind != "chunk" else _name(item.children[0], names)
    name = names.get(item) or item.split(":", 1)[-1]
    for sep in ("/", "::"):
        name = name.rstrip(sep).rsplit(sep, 1)[-1] or name
    return name


def _last(item: ScopeGroup | str) -> ScopeGroup | str:
    while isinstance(item, ScopeGroup) and item.kind == "chunk":
        item = item.children[-1]
    return item


Chunking = Callable[[], tuple[dict[str, list[str]], dict[str, str]]]
"""What chunking a group needs, asked for only when one is too large: box id -> consumer
box ids (to order the chunks), box id -> node name (to title them)."""


def chunk(group: ScopeGroup, limit: int, needs: Chunking) -> None:
    """Split groups with more than ``limit`` direct children into ordered chunks titled
    ``first … last``, chunks of chunks if need be."""
    for child in group.children:
        if isinstance(child, ScopeGroup):
            chunk(child, limit, needs)
    if len(group.children) <= limit:
        return
    succ_of, names = needs()
    if succ_of:
        _topological(group, succ_of)
    level = 0
    base = group.id.rstrip("/")
    while len(group.children) > limit:
        items = group.children
        size = -(-len(items) // -(-len(items) // limit))  # even chunks of <= limit
        chunks: list[ScopeGroup | str] = []
        for k in range(0, len(items), size):
            part = items[k:k + size]
            first, last = _name(part[0], names), _name(_last(part[-1]), names)
            piece = ScopeGroup(
                id=f"{base}/#{level}.{k // size}" if level else f"{base}/#{k // size}",
                label=f"{first} … {last}" if first != last else first,
                kind="chunk", parent=group, children=part,
            )
            for item in part:
                if isinstance(item, ScopeGroup):
                    item.parent = piece
            chunks.append(piece)
        group.children = chunks
        level += 1
