"""Every unit of a batch ranked at once: ``layered.ranked``'s phases as numpy steps.

``ranking.py`` builds each unit's DAG in Python (dicts of edges, lists of links per
item); expanded dag100k's 1,474 units spent a quarter of the batched engine there,
mostly making and collecting small objects. Here the units' edges are numbered end to
end and each phase is a few numpy operations over the whole batch: duplicate edges
summed (in order of first appearance, the same additions as the dict's), the longest-
path layers by rounds of a topological sort (one step per layer index), output-heavy
items sunk towards their consumers (one step per layer, deepest first: every consumer is
final when its producer moves, as in ``ranking._sunk``'s reverse topological order),
entry and exit ports on layers of their own, shared trunks of dummies within each unit's
budget (the trunks sorted by length are taken while they fit: a prefix), and the weighted
links between neighbouring layers (again summed in order of first appearance). The
result is the arrays ``ranking.Dag`` holds, for every unit: the same numbers, so each
unit's layout is the one it gets alone. A unit with a cycle (none of dag100k's) has its
cycles broken by ``ranking.acyclic`` first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from onnxstudio.concurrency.gil_runs import fromiter_in_runs
from onnxstudio.layout import ranking
from onnxstudio.layout.ranking import W_DD, W_RD, W_RR, Dag
from onnxstudio.layout.unit_place import DagInputs

Ints = np.ndarray


def ranges(starts: Ints, counts: Ints) -> tuple[Ints, Ints]:
    """For groups of ``counts`` elements from ``starts``: each element's group and index."""
    total = int(counts.sum())
    group = np.repeat(np.arange(len(counts)), counts)
    first = np.cumsum(counts) - counts
    return group, starts[group] + np.arange(total) - first[group]


def _first_sums(key: Ints, weight: np.ndarray) -> tuple[Ints, np.ndarray, Ints]:
    """Indices of each distinct key's first occurrence, in order of first occurrence,
    the weights of each summed in order (``d[k] = d.get(k, 0.0) + w``), and each key's
    place in that order."""
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    sums = np.bincount(inv, weight, minlength=len(first))
    order = np.argsort(first, kind="stable")
    place = np.empty(len(order), dtype=np.intp)
    place[order] = np.arange(len(order))
    return first[order], sums[order], place[inv]


@dataclass
class Ranked:
    """The batch's units as ``ranking.Dag`` would hold them, numbered unit after unit
    (each unit's real items, then its dummies; DAG edges and links in each unit's order)."""

    base: Ints  # first item of each unit, and the total at the end
    n: Ints  # real items per unit
    unit: Ints  # item -> unit
    rank: Ints  # item -> layer
    nranks: Ints  # per unit
    width: np.ndarray
    dummy: np.ndarray
    du: Ints  # DAG edges (reversed ones turned), unit after unit in each one's order
    dv: Ints
    dw: np.ndarray
    dag_base: Ints  # first DAG edge of each unit, and the total
    chain_start: Ints  # per DAG edge: its first dummy (its chain runs on from there)
    chain_len: Ints  # and how many (0: none)
    straight: np.ndarray  # per DAG edge: a long edge drawn without dummies
    back: dict[int, set[tuple[int, int]]]  # unit -> its input edges reversed (cycles)
    src: Ints  # links between neighbouring layers, grouped by source, each in order
    dst: Ints
    w: np.ndarray
    seq: Ints  # each link's place in the order links first appear (``ranking._link``)
    link_base: list[int]  # first link of each unit, and the total
    edges: Ints  # the units' input edges end to end, local numbers (pairs)
    edge_base: Ints  # first input edge of each unit, and the total
    edge_dag: Ints | None  # each input edge's DAG edge, -1 for a loop (None: some turned)

    def links_of(self, u: int) -> tuple[int, int]:
        return self.link_base[u], self.link_base[u + 1]

    @property
    def size(self) -> int:
        return len(self.unit)

    def links_per_item(self) -> Ints:
        return np.bincount(self.src, minlength=self.size)

    def unit_dag(self, u: int, links: bool = True) -> Dag:
        """Unit ``u`` as ``ranking.Dag`` (local numbers): for ``ordering.port_slots``,
        which reads its dicts only (``links=False``: no lists of links), and tests."""
        lo, hi = int(self.base[u]), int(self.base[u + 1])
        ea, eb = int(self.dag_base[u]), int(self.dag_base[u + 1])
        du = (self.du[ea:eb] - lo).tolist()
        dv = (self.dv[ea:eb] - lo).tolist()
        keys = list(zip(du, dv, strict=True))
        cs = (self.chain_start[ea:eb] - lo).tolist()
        cl = self.chain_len[ea:eb].tolist()
        g = Dag(int(self.n[u]), dict(zip(keys, self.dw[ea:eb].tolist(), strict=True)),
                set(self.back.get(u, ())), rank=(self.rank[lo:hi]).tolist(),
                nranks=int(self.nranks[u]), width=self.width[lo:hi].tolist(),
                is_dummy=self.dummy[lo:hi].tolist())
        g.chains = {k: list(range(s, s + c)) for k, s, c in zip(keys, cs, cl, strict=True)
                    if c}
        g.straight = {k for k, s in zip(keys, self.straight[ea:eb].tolist(), strict=True)
                      if s}
        if not links:
            return g
        la, lb = self.links_of(u)
        pieces = list(zip((self.src[la:lb] - lo).tolist(), (self.dst[la:lb] - lo).tolist(),
                         self.w[la:lb].tolist(), self.seq[la:lb].tolist(), strict=True))
        g.up = [[] for _ in range(hi - lo)]
        g.down = [[] for _ in range(hi - lo)]
        for a, b, x, _ in sorted(pieces, key=lambda t: t[3]):  # in order of first appearance
            g.down[a].append((b, x))
            g.up[b].append((a, x))
        return g


def _longest_paths(size: int, du: Ints, dv: Ints) -> Ints:
    """Each item's longest-path layer by rounds of a topological sort (a round's items are
    those whose last producer the round before finished); -1 on or after a cycle."""
    out = np.bincount(du, minlength=size)
    start = np.cumsum(out) - out
    targets = dv[np.argsort(du, kind="stable")]
    indeg = np.bincount(dv, minlength=size)
    rank = np.full(size, -1, dtype=np.intp)
    front = np.flatnonzero(indeg == 0)
    r = 0
    while len(front):
        rank[front] = r
        reached = np.bincount(targets[ranges(start[front], out[front])[1]], minlength=size)
        indeg -= reached
        front = np.flatnonzero((indeg == 0) & (reached > 0))
        r += 1
    return rank


def _sunk(rank: Ints, du: Ints, dv: Ints) -> Ints:
    """``ranking._sunk`` a layer at a time from the deepest: an item with at least as many
    consumers as producers moves down to just above its highest consumer."""
    size = len(rank)
    out = np.bincount(du, minlength=size)
    start = np.cumsum(out) - out
    targets = dv[np.argsort(du, kind="stable")]
    movable = (out > 0) & (out >= np.bincount(dv, minlength=size))
    cand = np.flatnonzero(movable)
    cand = cand[np.argsort(-rank[cand], kind="stable")]
    levels = rank[cand]
    cuts = np.flatnonzero(levels[1:] != levels[:-1]) + 1
    new = rank.copy()
    for v in np.split(cand, cuts) if len(cand) else ():
        c = out[v]
        vals = new[targets[ranges(start[v], c)[1]]]
        low = np.minimum.reduceat(vals, np.cumsum(c) - c) - 1
        new[v] = np.maximum(new[v], low)
    return new


def _input_edges(inputs: Sequence[DagInputs]) -> tuple[Ints, Ints]:
    """Every unit's input edges end to end (local item numbers), and the first of each."""
    m = np.fromiter(map(len, (a.edges for a in inputs)), np.intp, len(inputs))
    total = int(m.sum())
    ends = fromiter_in_runs(chain.from_iterable(chain.from_iterable(
        a.edges for a in inputs)), np.intp, 2 * total).reshape(-1, 2)
    return ends, np.concatenate(([0], np.cumsum(m)))


def _dag_edges(inputs: Sequence[DagInputs], rbase: Ints, ends: Ints, edge_base: Ints
               ) -> tuple[tuple[Ints, Ints, np.ndarray, Ints], Ints]:
    """Every unit's distinct, loop-free edges with summed weights (``ranking.acyclic``'s
    dict) as global item pairs, and the first edge of each unit; and each input edge's
    place among them (-1: a loop)."""
    off = np.repeat(rbase[:-1], np.diff(edge_base))
    eu = ends[:, 0] + off
    ev = ends[:, 1] + off
    ew = fromiter_in_runs(chain.from_iterable(a.weights for a in inputs), float, len(ends))
    keep = eu != ev
    eu, ev = eu[keep], ev[keep]
    first, dw, place = _first_sums(eu * int(rbase[-1]) + ev, ew[keep])
    du, dv = eu[first], ev[first]
    unit = np.repeat(np.arange(len(inputs)), np.diff(rbase))
    dag_base = np.searchsorted(unit[du], np.arange(len(inputs) + 1))
    edge_dag = np.full(len(keep), -1, dtype=np.intp)
    edge_dag[keep] = place
    return (du, dv, dw, dag_base), edge_dag


def _break_cycles(inputs: Sequence[DagInputs], rbase: Ints, cyclic: set[int],
                  parts: tuple[Ints, Ints, np.ndarray, Ints],
                  back: dict[int, set[tuple[int, int]]]
                  ) -> tuple[Ints, Ints, np.ndarray, Ints]:
    """The DAG edges with each cyclic unit's replaced by ``ranking.acyclic``'s."""
    du, dv, dw, dag_base = parts
    cu: list[Ints] = []
    cv: list[Ints] = []
    cw: list[np.ndarray] = []
    counts = np.diff(dag_base)
    for u in range(len(inputs)):
        ea, eb = dag_base[u], dag_base[u + 1]
        if u in cyclic:
            a = inputs[u]
            g = ranking.acyclic(len(a.widths), a.edges, a.weights)
            back[u] = g.back
            keys = np.array(list(g.dag), dtype=np.intp).reshape(-1, 2) + rbase[u]
            cu.append(keys[:, 0])
            cv.append(keys[:, 1])
            cw.append(np.fromiter(g.dag.values(), float, len(g.dag)))
            counts[u] = len(g.dag)
        else:
            cu.append(du[ea:eb])
            cv.append(dv[ea:eb])
            cw.append(dw[ea:eb])
    return (np.concatenate(cu), np.concatenate(cv), np.concatenate(cw),
            np.concatenate(([0], np.cumsum(counts))))


def _with_ports(inputs: Sequence[DagInputs], unit: Ints, rank: Ints, rbase: Ints) -> Ints:
    """``ranking.assign_ranks``' ports: entries on a first layer alone, exits on a last."""
    tops = [np.asarray(a.top, dtype=np.intp) + rbase[u] for u, a in enumerate(inputs)
            if a.top]
    bottoms = [np.asarray(a.bottom, dtype=np.intp) + rbase[u]
               for u, a in enumerate(inputs) if a.bottom]
    rank = rank.copy()
    if tops:
        top = np.concatenate(tops)
        has = np.zeros(len(inputs), dtype=bool)
        has[unit[top]] = True
        rank += has[unit]
        rank[top] = 0
    if bottoms:
        bottom = np.concatenate(bottoms)
        other = np.ones(len(rank), dtype=bool)
        other[bottom] = False
        last = np.zeros(len(inputs), dtype=np.intp)
        np.maximum.at(last, unit[other], rank[other])
        rank[bottom] = last[unit[bottom]] + 1
    return rank


def rank_batch(inputs: Sequence[DagInputs]) -> Ranked:
    """``layered.ranked``'s DAG of every unit (each with at least one item)."""
    k = len(inputs)
    n = np.fromiter(map(len, (a.widths for a in inputs)), np.intp, k)
    rbase = np.concatenate(([0], np.cumsum(n)))
    nreal = int(rbase[-1])
    runit = np.repeat(np.arange(k), n)
    ends, edge_base = _input_edges(inputs)
    parts, found = _dag_edges(inputs, rbase, ends, edge_base)
    edge_dag: Ints | None = found
    rank = _longest_paths(nreal, parts[0], parts[1])
    back: dict[int, set[tuple[int, int]]] = {}
    if (rank < 0).any():
        edge_dag = None  # some edges turned: found by ``batch_routes``
        parts = _break_cycles(inputs, rbase, set(np.unique(runit[rank < 0]).tolist()),
                              parts, back)
        rank = _longest_paths(nreal, parts[0], parts[1])
    du, dv, dw, dag_base = parts
    rank = _with_ports(inputs, runit, _sunk(rank, du, dv), rbase)

    # trunks of dummies: one per source of long edges, as long as its longest; each
    # unit's sorted by (length, source) and taken while the total fits its budget
    span = rank[dv] - rank[du]
    long = span > 1
    srcs, which = np.unique(du[long], return_inverse=True)
    length = np.zeros(len(srcs), dtype=np.intp)
    np.maximum.at(length, which, span[long] - 1)
    tunit = runit[srcs]
    order = np.lexsort((srcs, length, tunit))
    ls, us = length[order], tunit[order]
    total = np.cumsum(ls)
    per_unit = np.bincount(us, ls, minlength=k).astype(np.intp)
    before = np.cumsum(per_unit) - per_unit  # the trunks' lengths in earlier units
    budget = ranking.DUMMY_BUDGET * n + 200
    taken = np.empty(len(srcs), dtype=bool)
    taken[order] = total - before[us] <= budget[us]
    tlen = np.where(taken, length, 0)
    ndum = np.bincount(tunit, tlen, minlength=k).astype(np.intp)
    base = np.concatenate(([0], np.cumsum(n + ndum)))
    size = int(base[-1])
    renum = base[:-1] - rbase[:-1]  # a real item's new number: old + its unit's shift
    tstart = np.empty(len(srcs), dtype=np.intp)  # each trunk's first dummy, by source
    sl = tlen[order]
    within = np.cumsum(sl) - sl - (np.cumsum(ndum) - ndum)[us]  # earlier trunks' dummies
    tstart[order] = (base[:-1] + n)[us] + within

    unit = np.repeat(np.arange(k), n + ndum)
    item_rank = np.empty(size, dtype=np.intp)
    real = np.arange(nreal) + renum[runit]
    item_rank[real] = rank
    t_of, dummies = ranges(tstart, tlen)
    item_rank[dummies] = rank[srcs[t_of]] + 1 + dummies - tstart[t_of]
    width = np.zeros(size)
    width[real] = fromiter_in_runs(chain.from_iterable(a.widths for a in inputs), float,
                                   nreal)
    dummy = np.ones(size, dtype=bool)
    dummy[real] = False
    nranks = np.zeros(k, dtype=np.intp)
    np.maximum.at(nranks, unit, item_rank)

    # the DAG edges renumbered, their chains (a trunk's first dummies) or straight
    chain_start = np.zeros(len(du), dtype=np.intp)
    chain_len = np.zeros(len(du), dtype=np.intp)
    straight = np.zeros(len(du), dtype=bool)
    chain_start[long] = tstart[which]
    chain_len[long] = np.where(taken[which], span[long] - 1, 0)
    straight[long] = ~taken[which]
    du = du + renum[runit[du]]
    dv = dv + renum[runit[dv]]

    # links between neighbouring layers, every DAG edge's pieces in order, summed
    pieces = np.where(chain_len > 0, chain_len + 1, np.where(straight, 0, 1))
    e, j = ranges(np.zeros(len(du), dtype=np.intp), pieces)
    c = chain_len[e]
    cs = chain_start[e]
    a = np.where(j == 0, du[e], cs + j - 1)
    b = np.where(j == c, dv[e], cs + j)
    pull = np.where(c == 0, W_RR, np.where((j == 0) | (j == c), W_RD, W_DD))
    first, lw, _ = _first_sums(a * size + b, dw[e] * pull)
    by_src = np.argsort(a[first], kind="stable")
    src = a[first][by_src]
    return Ranked(base, n, unit, item_rank, nranks + 1, width, dummy, du, dv, dw, dag_base,
                  chain_start, chain_len, straight, back, src, b[first][by_src], lw[by_src],
                  by_src, np.searchsorted(src, base).tolist(), ends, edge_base, edge_dag)
