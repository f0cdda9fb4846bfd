"""Shaping a scope tree: dissolve groups that would make the drawing cyclic
(:func:`untangle`), and split a scope too large to draw at once into ordered chunks
named by what they span (:func:`chunk`).

Kept apart from the tree building in :mod:`onnxstudio.layout.scopes`, which calls
these when it builds a tree.
"""

from __future__ import annotations

import heapq
from itertools import chain, repeat

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


def _cyclic_components(n: int, succ: list[set[int]]) -> list[list[int]]:
    """Strongly connected components with more than one member (iterative Tarjan)."""
    index = [-1] * n
    low = [0] * n
    on = [False] * n
    stack: list[int] = []
    comps: list[list[int]] = []
    counter = 0
    for start in range(n):
        if index[start] >= 0:
            continue
        work = [(start, iter(sorted(succ[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on[start] = True
        while work:
            v, it = work[-1]
            for w in it:
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on[w] = True
                    work.append((w, iter(sorted(succ[w]))))
                    break
                if on[w]:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on[w] = False
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        comps.append(comp)
    return comps


def _preorder(root: ScopeGroup) -> list[ScopeGroup]:
    """``[root, *root.groups()]`` without a generator per group."""
    out: list[ScopeGroup] = []
    stack = [root]
    while stack:
        group = stack.pop()
        out.append(group)
        stack.extend(c for c in reversed(group.children) if isinstance(c, ScopeGroup))
    return out


def _edge_arrays(order: list[ScopeGroup], succ_of: dict[str, list[str]]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each group's ancestors by depth (index into ``order``, -1 below it), each leaf's
    group, and the edges between leaves of different groups as leaf indices."""
    index = {id(g): i for i, g in enumerate(order)}
    chains: list[list[int]] = [[0]] * len(order)
    leaf_names: list[str] = []
    leaf_group: list[int] = []
    for gi, group in enumerate(order):
        kids = group.children
        names = [c for c in kids if not isinstance(c, ScopeGroup)]
        leaf_names += names
        leaf_group += [gi] * len(names)
        if len(names) < len(kids):
            for child in kids:
                if isinstance(child, ScopeGroup):
                    ci = index[id(child)]
                    chains[ci] = [*chains[gi], ci]
    anc = np.full((len(order), max(map(len, chains)) + 1), -1, dtype=np.int64)
    for gi, path in enumerate(chains):
        anc[gi, :len(path)] = path
    # map(dict.get, keys, repeat(-1)): the string lookups stay in C
    at = dict(zip(leaf_names, range(len(leaf_names)), strict=True)).get
    src = np.fromiter(map(at, succ_of, repeat(-1)), np.int64, len(succ_of))
    s = np.repeat(src, np.fromiter(map(len, succ_of.values()), np.int64, len(succ_of)))
    d = np.fromiter(map(at, chain.from_iterable(succ_of.values()), repeat(-1)), np.int64,
                    len(s))
    groups = np.asarray(leaf_group, dtype=np.int64)
    known = (s >= 0) & (d >= 0)
    s, d = s[known], d[known]
    apart = groups[s] != groups[d]  # two operators side by side cannot close a cycle alone
    return anc, groups, s[apart], d[apart]


def _cyclic_levels(order: list[ScopeGroup], succ_of: dict[str, list[str]]) -> set[int]:
    """Indices into ``order`` of the groups whose children (groups contracted) are
    joined into a cycle by the edges that part there."""
    anc, groups, s, d = _edge_arrays(order, succ_of)
    if not len(s):
        return set()
    n_groups = len(order)
    rows = np.arange(len(s))
    a_anc, b_anc = anc[groups[s]], anc[groups[d]]
    part = np.argmin((a_anc == b_anc) & (a_anc >= 0), axis=1)  # first depth they differ
    level = a_anc[rows, part - 1]
    # the child of that level holding each end: a group, or the leaf itself (n_groups + i)
    ca = np.where(a_anc[rows, part] >= 0, a_anc[rows, part], n_groups + s)
    cb = np.where(b_anc[rows, part] >= 0, b_anc[rows, part], n_groups + d)
    _, first = np.unique(ca * (n_groups + len(groups)) + cb, return_index=True)
    level = level[first]
    # Every item is a child of one level only, so the levels' graphs are disjoint: one
    # topological peel over all of them leaves exactly the items of the cyclic levels.
    items, inv = np.unique(np.concatenate([ca[first], cb[first]]), return_inverse=True)
    u, v = inv[:len(first)], inv[len(first):]
    by_u = np.argsort(u, kind="stable")
    starts = np.searchsorted(u[by_u], np.arange(len(items) + 1)).tolist()
    heads = v[by_u].tolist()
    indeg = np.bincount(v, minlength=len(items)).tolist()
    ready = [i for i, k in enumerate(indeg) if k == 0]
    while ready:
        i = ready.pop()
        for j in heads[starts[i]:starts[i + 1]]:
            indeg[j] -= 1
            if indeg[j] == 0:
                ready.append(j)
    stuck = np.asarray(indeg)[u] > 0
    return set(level[stuck].tolist())


def untangle(root: ScopeGroup, succ_of: dict[str, list[str]]) -> None:
    """Dissolve groups that would make the drawing cyclic.

    A module called twice (ResNet's shared ``relu``) yields a group whose members sit
    at two places of the data flow; drawn as one box it closes a cycle with what runs
    in between. Per level, the groups of each cyclic component are spliced into their
    parent until the level is acyclic. Which levels are cyclic is found for all levels
    at once, on arrays: each edge belongs to the level where its ends part.
    """
    order = _preorder(root)
    for gi in sorted(_cyclic_levels(order, succ_of)):
        _dissolve_cycles(order[gi], succ_of)


def _dissolve_cycles(group: ScopeGroup, succ_of: dict[str, list[str]]) -> None:
    for _ in range(64):
        if not any(isinstance(child, ScopeGroup) for child in group.children):
            return  # only operators left: nothing that could be dissolved
        rep: dict[str, int] = {}
        for i, child in enumerate(group.children):
            if isinstance(child, ScopeGroup):
                for leaf in leaves(child):
                    rep[leaf] = i
            else:
                rep[child] = i
        succ: list[set[int]] = [set() for _ in group.children]
        for a, i in rep.items():
            for b in succ_of.get(a, ()):
                j = rep.get(b)
                if j is not None and j != i:
                    succ[i].add(j)
        dissolve: set[int] = set()
        for comp in _cyclic_components(len(group.children), succ):
            groups = [i for i in comp if isinstance(group.children[i], ScopeGroup)]
            if len(groups) == 1:
                dissolve.add(groups[0])
            else:
                # interleaved modules (lanes feeding each other): none of them is a unit
                dissolve.update(groups)
        if not dissolve:
            return
        spliced: list[ScopeGroup | str] = []
        for i, child in enumerate(group.children):
            if i in dissolve and isinstance(child, ScopeGroup):
                for inner in child.children:
                    if isinstance(inner, ScopeGroup):
                        inner.parent = group
                    spliced.append(inner)
            else:
                spliced.append(child)
        group.children = spliced


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


def chunk(group: ScopeGroup, limit: int, succ_of: dict[str, list[str]],
          names: dict[str, str]) -> None:
    """Split groups with more than ``limit`` direct children into ordered chunks titled
    ``first … last`` (``names``: box id -> node name), chunks of chunks if need be."""
    for child in group.children:
        if isinstance(child, ScopeGroup):
            chunk(child, limit, succ_of, names)
    if len(group.children) > limit and succ_of:
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
