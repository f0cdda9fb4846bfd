"""Shaping a scope tree: dissolve groups that would make the drawing cyclic
(:func:`untangle`), and split a scope too large to draw at once into ordered chunks
named by what they span (:func:`chunk`).

Kept apart from the tree building in :mod:`onnxstudio.layout.scopes`, which calls
these when it builds a tree.
"""

from __future__ import annotations

import heapq

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


def _ancestry(group: ScopeGroup) -> list[ScopeGroup]:
    chain = []
    g: ScopeGroup | None = group
    while g is not None:
        chain.append(g)
        g = g.parent
    return chain[::-1]


def _is_acyclic(n: int, succ: list[set[int]]) -> bool:
    indeg = [0] * n
    for out in succ:
        for j in out:
            indeg[j] += 1
    ready = [i for i in range(n) if indeg[i] == 0]
    seen = 0
    while ready:
        i = ready.pop()
        seen += 1
        for j in succ[i]:
            indeg[j] -= 1
            if indeg[j] == 0:
                ready.append(j)
    return seen == n


def untangle(root: ScopeGroup, succ_of: dict[str, list[str]]) -> None:
    """Dissolve groups that would make the drawing cyclic.

    A module called twice (ResNet's shared ``relu``) yields a group whose members sit
    at two places of the data flow; drawn as one box it closes a cycle with what runs
    in between. Per level, the groups of each cyclic component are spliced into their
    parent until the level is acyclic. One pass assigns each edge to the group
    where its ends part (cached per pair of innermost groups), so acyclic levels cost
    nothing more.
    """
    group_of: dict[str, ScopeGroup] = {}
    for group in [root, *root.groups()]:
        for child in group.children:
            if not isinstance(child, ScopeGroup):
                group_of[child] = group
    anc: dict[ScopeGroup, list[ScopeGroup]] = {}  # groups hash by identity (eq=False)
    Pairs = list[tuple[ScopeGroup | str, ScopeGroup | str]]
    # per (group of a, group of b): the list of the level where they part, and the
    # children of that level holding each end (None: the end itself sits there); ()
    # when the two ends sit side by side
    split: dict[tuple[ScopeGroup, ScopeGroup], tuple[Pairs, ScopeGroup | None,
                                                     ScopeGroup | None] | tuple[()]] = {}
    level_edges: dict[int, Pairs] = {}
    for a, outs in succ_of.items():
        ga = group_of.get(a)
        if ga is None:
            continue
        for b in outs:
            gb = group_of.get(b)
            if gb is None or gb is ga:
                continue  # two operators side by side: cannot close a cycle alone
            key = (ga, gb)
            hit = split.get(key)
            if hit is None:
                hit = split[key] = _parting(ga, gb, anc, level_edges)
            if hit:
                hit[0].append((hit[1] or a, hit[2] or b))
    for group in [root, *root.groups()]:
        pairs = level_edges.get(id(group))
        if not pairs:
            continue
        pos = {id(c) if isinstance(c, ScopeGroup) else c: i for i, c in enumerate(group.children)}
        succ: list[set[int]] = [set() for _ in group.children]
        for x, y in pairs:
            i = pos.get(id(x) if isinstance(x, ScopeGroup) else x)
            j = pos.get(id(y) if isinstance(y, ScopeGroup) else y)
            if i is not None and j is not None:
                succ[i].add(j)
        if _is_acyclic(len(succ), succ):
            continue
        _dissolve_cycles(group, succ_of)


def _parting(ga: ScopeGroup, gb: ScopeGroup, anc: dict[ScopeGroup, list[ScopeGroup]],
             level_edges: dict[int, list[tuple[ScopeGroup | str, ScopeGroup | str]]]
             ) -> tuple[list[tuple[ScopeGroup | str, ScopeGroup | str]], ScopeGroup | None,
                        ScopeGroup | None] | tuple[()]:
    """Where an edge from group ``ga`` to ``gb`` parts: the edge list of that level and
    the child there holding each end; () when both ends sit side by side."""
    pa = anc.get(ga) or anc.setdefault(ga, _ancestry(ga))
    pb = anc.get(gb) or anc.setdefault(gb, _ancestry(gb))
    k = 0
    while k + 1 < len(pa) and k + 1 < len(pb) and pa[k + 1] is pb[k + 1]:
        k += 1
    ca = pa[k + 1] if k + 1 < len(pa) else None
    cb = pb[k + 1] if k + 1 < len(pb) else None
    if ca is None and cb is None:
        return ()
    return level_edges.setdefault(id(pa[k]), []), ca, cb


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
