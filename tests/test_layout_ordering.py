"""The layered engine's inner phases on plain graphs: crossing counts, ordering, placement."""

from __future__ import annotations

import itertools
import random

import pytest

from onnxstudio.layout import coords, ordering
from onnxstudio.layout.layered import layout_dag
from onnxstudio.layout.ranking import Dag, acyclic, add_dummies, assign_ranks


def _dag(n: int, extra: int, seed: int) -> tuple[Dag, list[tuple[int, int]], list[float]]:
    rng = random.Random(seed)
    edges = [(i, min(n - 1, i + rng.randint(1, 4))) for i in range(n - 1)]
    edges += [(rng.randrange(n), rng.randrange(n)) for _ in range(extra)]
    widths = [rng.uniform(30, 150) for _ in range(n)]
    g = acyclic(n, edges, [float(rng.choice((1, 1, 2))) for _ in edges])
    assign_ranks(g, (), ())
    add_dummies(g, widths)
    return g, edges, widths


def _brute_crossings(o: ordering._Ordering) -> float:
    pos = o.pos
    total = 0.0
    for links in o.between:
        ends = [(pos[v] + fa, pos[w] + fb, x) for v, w, x, fa, fb in links]
        for i, (ua, la, xa) in enumerate(ends):
            for ub, lb, xb in ends[i + 1:]:
                if (ua - ub) * (la - lb) < 0:
                    total += xa * xb
    return total


@pytest.mark.parametrize("seed", range(6))
def test_crossings_of_all_link_pairs_match_the_layer_by_layer_count(seed: int) -> None:
    """The unit-wide numpy count (every pair of links between two layers at once) gives
    the layer-by-layer tree count's total, ports included, in any ordering."""
    g, edges, widths = _dag(60, 40, seed)
    rng = random.Random(seed)
    offs: list[float | None] = [rng.uniform(0, 30) if rng.random() < 0.3 else None
                                for _ in edges]
    ports = ordering.port_slots(g, edges, widths, offs, offs[::-1])
    layers = ordering.initial_layers(g)
    for layer in layers:
        rng.shuffle(layer)
    pos = [0] * g.size
    for layer in layers:
        for i, v in enumerate(layer):
            pos[v] = i
    o = ordering._Ordering(layers, g.up, g.down, pos, ports, True)
    assert o._pairs is not None
    fast = o.crossings()
    o._pairs = None  # the per-layer path (a unit too wide for all pairs at once)
    assert fast == o.crossings() == _brute_crossings(o) > 0


def test_ordering_removes_the_crossings_of_a_known_case() -> None:
    """Depth-first order starts with 0's children (4, 7) left of 5, so 0 -> 7 crosses
    1 -> 4 and 2 -> 4; the median sweeps with transpositions untangle both."""
    edges = [(0, 4), (0, 7), (1, 4), (2, 4), (4, 6), (5, 6)]
    g = acyclic(8, edges, [1.0] * len(edges))
    assign_ranks(g, (), ())
    add_dummies(g, [60.0] * 8)
    first = ordering.initial_layers(g)
    pos = [0] * g.size
    for layer in first:
        for i, v in enumerate(layer):
            pos[v] = i
    assert ordering._Ordering(first, g.up, g.down, pos, {}, True).crossings() == 2
    res = layout_dag([60.0] * 8, [30.0] * 8, edges)
    for i, (a, b) in enumerate(edges):
        for c, d in edges[i + 1:]:
            if len({a, b, c, d}) == 4 and res.rank[a] == res.rank[c]:
                assert (res.x[a] - res.x[c]) * (res.x[b] - res.x[d]) > 0, (a, b, c, d)


def _pava_reference(target: list[float], weight: list[float]) -> list[float]:
    """The textbook stack form: every element pushed, violators pooled on the stack."""
    vals: list[float] = []
    wts: list[float] = []
    cnt: list[int] = []
    for t, w in zip(target, weight, strict=True):
        vals.append(t)
        wts.append(w)
        cnt.append(1)
        while len(vals) > 1 and vals[-2] > vals[-1]:
            w2 = wts[-2] + wts[-1]
            v = (vals[-2] * wts[-2] + vals[-1] * wts[-1]) / w2
            c = cnt[-2] + cnt[-1]
            del vals[-1], wts[-1], cnt[-1]
            vals[-1], wts[-1], cnt[-1] = v, w2, c
    return [v for v, c in zip(vals, cnt, strict=True) for _ in range(c)]


@pytest.mark.parametrize("seed", range(20))
def test_pava_gives_the_textbook_fit_to_the_last_bit(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 40)
    target = [rng.uniform(-500, 500) for _ in range(n)]
    if seed % 4 == 0:
        target.sort()
    weight = [rng.choice((0.05, 1.0, 2.0, 3.5, 8.0)) for _ in range(n)]
    fit = coords._pava(target, weight)
    assert fit == _pava_reference(target, weight)
    assert all(a <= b for a, b in itertools.pairwise(fit))


def test_layers_kept_from_the_cycle_check_are_the_layering() -> None:
    """``acyclic`` keeps the layers of its topological sort when it finds no cycle:
    they are what ``assign_ranks`` computes itself from the DAG (ports included); a
    graph with a cycle gets its reversed edges and is layered afterwards."""
    cyclic = 0
    for seed in range(40):
        rng = random.Random(seed)
        n = rng.randint(5, 40)
        # forward edges only for even seeds; odd ones also get random (maybe back) edges
        edges = [(rng.randrange(n - 1), 0) for _ in range(n)]
        edges = [(u, rng.randrange(u + 1, n)) for u, _ in edges]
        if seed % 2:
            edges += [(rng.randrange(n), rng.randrange(n)) for _ in range(n // 4)]
        weights = [1.0] * len(edges)
        top, bottom = ([0], [n - 1]) if seed % 3 == 0 else ((), ())
        g = acyclic(n, edges, weights)
        cyclic += bool(g.back)
        assert bool(g.rank) == (not g.back)
        assign_ranks(g, top, bottom)
        fresh = acyclic(n, edges, weights)
        fresh.rank = []
        assign_ranks(fresh, top, bottom)
        assert g.rank == fresh.rank
        assert top or all(g.rank[u] < g.rank[v] for u, v in g.dag)
    assert cyclic >= 5
