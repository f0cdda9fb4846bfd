"""The first phases of the layered layout: a DAG, its layers, and long-edge dummies.

Gansner et al. (1993): break cycles (DFS, reversed edges remembered), layer by longest
path, then sink nodes with more outputs than inputs towards their consumers (a cheap
stand-in for network simplex), and split edges spanning several layers into chains of
dummies. Long edges from one node share one trunk; beyond a budget (Eiglsperger et al.
2005 avoid dummies altogether) the longest are routed straight instead, so far-reaching
edges cannot blow up the cost of ordering.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

DUMMY_BUDGET = 6.0  # at most this many dummies per real node (plus a constant)
W_RR, W_RD, W_DD = 1.0, 2.0, 8.0  # pull of real-real, real-dummy, dummy-dummy links

Link = tuple[int, float]  # (neighbour, weight)


@dataclass
class Dag:
    """The working state of one layout: items ``0..n-1`` are real, the rest dummies."""

    n: int
    dag: dict[tuple[int, int], float]  # loop-free edges (reversed ones turned) -> weight
    back: set[tuple[int, int]]  # input edges that were reversed to break a cycle
    rank: list[int] = field(default_factory=list)  # layer of every item, dummies too
    nranks: int = 0
    width: list[float] = field(default_factory=list)
    is_dummy: list[bool] = field(default_factory=list)
    chains: dict[tuple[int, int], list[int]] = field(default_factory=dict)  # edge -> dummies
    straight: set[tuple[int, int]] = field(default_factory=set)  # edges without dummies
    up: list[list[Link]] = field(default_factory=list)  # item -> links to the layer above
    down: list[list[Link]] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(self.width)


def _break_cycles(n: int, succ: list[list[int]]) -> set[tuple[int, int]]:
    """Edges closing a cycle in an iterative DFS from nodes in index order."""
    state = [0] * n  # 0 new, 1 on stack, 2 done
    back: set[tuple[int, int]] = set()
    for start in range(n):
        if state[start]:
            continue
        state[start] = 1
        stack = [(start, iter(succ[start]))]
        while stack:
            v, it = stack[-1]
            for w in it:
                if state[w] == 1:
                    back.add((v, w))
                elif state[w] == 0:
                    state[w] = 1
                    stack.append((w, iter(succ[w])))
                    break
            else:
                state[v] = 2
                stack.pop()
    return back


def acyclic(n: int, edges: Sequence[tuple[int, int]], weights: Sequence[float]) -> Dag:
    """Unique, loop-free edges with summed weights; edges closing a cycle reversed.

    The layering's topological sort runs first: when it reaches every item there is no
    cycle (the depth-first search would find none) and its layers are kept for
    ``assign_ranks``; dag100k's 1,475 units have no cycle at all."""
    uniq: dict[tuple[int, int], float] = {}
    for (u, v), w in zip(edges, weights, strict=False):
        if u != v:
            uniq[(u, v)] = uniq.get((u, v), 0.0) + w
    succ: list[list[int]] = [[] for _ in range(n)]
    pred: list[list[int]] = [[] for _ in range(n)]
    for u, v in uniq:
        succ[u].append(v)
        pred[v].append(u)
    order, rank = _longest_paths(n, succ, pred)
    if len(order) == n:
        return Dag(n, uniq, set(), rank=_sunk(order, rank, succ, pred))
    back = _break_cycles(n, succ)
    dag: dict[tuple[int, int], float] = {}
    for (u, v), w in uniq.items():
        key = (v, u) if (u, v) in back else (u, v)
        dag[key] = dag.get(key, 0.0) + w
    return Dag(n, dag, back)


def _longest_paths(n: int, succ: list[list[int]], pred: list[list[int]]
                   ) -> tuple[list[int], list[int]]:
    """Items in topological order (those on or after a cycle left out) and their
    longest-path layers."""
    indeg = [len(p) for p in pred]
    order = [v for v in range(n) if indeg[v] == 0]
    rank = [0] * n
    i = 0
    while i < len(order):
        v = order[i]
        i += 1
        rv = rank[v] + 1
        for w in succ[v]:
            if rank[w] < rv:
                rank[w] = rv
            indeg[w] -= 1
            if indeg[w] == 0:
                order.append(w)
    return order, rank


def _sunk(order: list[int], rank: list[int], succ: list[list[int]], pred: list[list[int]]
          ) -> list[int]:
    """Output-heavy items moved down next to their consumers."""
    for v in reversed(order):
        s = succ[v]
        if s and len(s) >= len(pred[v]):
            lowest = min(rank[w] for w in s) - 1
            if lowest > rank[v]:
                rank[v] = lowest
    return rank


def assign_ranks(g: Dag, top: Sequence[int], bottom: Sequence[int]) -> None:
    """Layers for the real items; ``top``/``bottom`` ports get a first/last layer alone.
    (A DAG that had no cycle comes with its layers from ``acyclic``.)"""
    n = g.n
    if g.rank:
        rank = g.rank
    else:
        succ: list[list[int]] = [[] for _ in range(n)]
        pred: list[list[int]] = [[] for _ in range(n)]
        for u, v in g.dag:
            succ[u].append(v)
            pred[v].append(u)
        order, rank = _longest_paths(n, succ, pred)
        rank = _sunk(order, rank, succ, pred)
    if top:
        rank = [r + 1 for r in rank]
        for t in top:
            rank[t] = 0
    if bottom:
        ends = set(bottom)
        last = max((r for i, r in enumerate(rank) if i not in ends), default=0) + 1
        for b in bottom:
            rank[b] = last
    g.rank = rank
    g.nranks = max(rank) + 1


def add_dummies(g: Dag, widths: Sequence[float]) -> None:
    """Trunks of zero-width dummies for long edges (one shared trunk per source: a tensor
    feeding many far consumers, like an attention mask, is one bus rather than many
    lines); then the weighted links between neighbouring layers."""
    n, rank, dag = g.n, g.rank, g.dag
    width = g.width = list(widths)
    is_dummy = g.is_dummy = [False] * n
    fan: dict[int, list[int]] = {}
    for u, v in dag:
        if rank[v] - rank[u] > 1:
            fan.setdefault(u, []).append(v)
    trunks = sorted((max(rank[v] for v in vs) - rank[u] - 1, u) for u, vs in fan.items())
    budget = DUMMY_BUDGET * n + 200
    total = 0
    for length, u in trunks:
        if total + length > budget:
            g.straight.update((u, v) for v in fan[u])
            continue
        total += length
        trunk = []
        for r in range(rank[u] + 1, rank[u] + 1 + length):
            trunk.append(len(width))
            width.append(0.0)
            rank.append(r)
            is_dummy.append(True)
        for v in fan[u]:
            g.chains[(u, v)] = trunk[: rank[v] - rank[u] - 1]
    _link(g)


def _link(g: Dag) -> None:
    is_dummy = g.is_dummy
    chains, straight = g.chains, g.straight
    seg_w: dict[tuple[int, int], float] = {}
    for (u, v), w in g.dag.items():
        trunk = chains.get((u, v))
        if trunk is None:  # two real items, next to each other or drawn straight
            if (u, v) not in straight:
                seg_w[(u, v)] = seg_w.get((u, v), 0.0) + w * W_RR
            continue
        for a, b in itertools.pairwise([u, *trunk, v]):
            ew = w * (W_DD if is_dummy[a] and is_dummy[b] else W_RD if is_dummy[a] or is_dummy[b]
                      else W_RR)
            seg_w[(a, b)] = seg_w.get((a, b), 0.0) + ew
    size = g.size
    up: list[list[Link]] = [[] for _ in range(size)]
    down: list[list[Link]] = [[] for _ in range(size)]
    for (a, b), ew in seg_w.items():
        down[a].append((b, ew))
        up[b].append((a, ew))
    g.up = up
    g.down = down
