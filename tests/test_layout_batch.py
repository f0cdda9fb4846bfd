"""The batched engine (batch.py): many units ordered and placed together as numpy steps."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper

from onnxstudio.layout import (
    ExpandState,
    batch,
    batch_order,
    batch_rank,
    batch_routes,
    build_layout,
    coords,
    layered,
    ordering,
    ranking,
)
from onnxstudio.layout.unit_place import DagInputs
from onnxstudio.model import load_model
from tests.builders import make_model, save
from tests.layout_checks import check_layout, on_border, overlapping_pairs


def _unit(seed: int, ports: bool = True) -> DagInputs:
    """A random unit like a group's: boxes, a few entries on top and exits at the
    bottom, some edges attached at fixed offsets (a sub-group's ports)."""
    rng = random.Random(seed)
    n = rng.randint(20, 70)
    edges = [(i, min(n - 1, i + rng.randint(1, 4))) for i in range(n - 1)]
    edges += [(rng.randrange(n), rng.randrange(n)) for _ in range(n // 3)]
    widths = [rng.uniform(30, 160) for _ in range(n)]
    heights = [rng.uniform(20, 60) for _ in range(n)]
    top: list[int] = []
    bottom: list[int] = []
    if ports:
        for _ in range(rng.randint(1, 3)):
            top.append(len(widths))
            edges.append((len(widths), rng.randrange(n)))
            widths.append(0.0)
            heights.append(0.0)
        bottom.append(len(widths))
        edges.append((n - 1, len(widths)))
        widths.append(0.0)
        heights.append(0.0)
    src_off: list[float | None] = [rng.uniform(0, widths[u]) if widths[u] and rng.random() < 0.2
                                   else None for u, _ in edges]
    dst_off: list[float | None] = [None] * len(edges)
    weights = [float(rng.choice((1, 1, 2))) for _ in edges]
    return DagInputs(widths, heights, edges, weights, top, bottom, src_off, dst_off)


def test_batched_ordering_crosses_no_more_than_the_single_engine() -> None:
    """Over many random units the batched ordering's weighted crossings are at most a
    few per cent above ``order_layers``' (on expanded dag100k they are 0.6 % fewer)."""
    units = [_unit(seed) for seed in range(100, 100 + batch.BATCH_MIN)]
    ranked = [layered.ranked(a.widths, a.edges, a.weights, a.top, a.bottom, a.src_off,
                             a.dst_off) for a in units]
    single = 0.0
    for g, ports in ranked:
        layers = ordering.order_layers(g, ports, None)
        pos = [0] * g.size
        for layer in layers:
            for i, v in enumerate(layer):
                pos[v] = i
        single += ordering._Ordering(layers, g.up, g.down, pos, ports, True).crossings()
    f = batch_order.flatten(batch_rank.rank_batch(units), units)
    first = batch_order.BatchOrdering(f).crossings().sum()
    f.pos[:] = batch_order.order_batch(f, None)
    batched = batch_order.BatchOrdering(f).crossings().sum()
    assert single > 0
    assert batched <= 1.05 * single < first


@pytest.fixture(autouse=True)
def _fresh_memo() -> Any:
    layered._CACHE.clear()
    yield
    layered._CACHE.clear()


def test_batched_units_are_valid_layouts() -> None:
    """No overlapping boxes, every edge down the layers (or marked reversed), routes
    starting and ending on their boxes, fixed ports exactly where they were asked."""
    units = [_unit(seed) for seed in range(batch.BATCH_MIN + 6)]
    results = batch.layout_dags(units)
    for a, res in zip(units, results, strict=True):
        rects = {str(i): (res.x[i], res.y[i], a.widths[i], a.heights[i])
                 for i in range(len(a.widths)) if a.widths[i]}
        assert not overlapping_pairs(rects)
        for e, ((u, v), route, rev) in enumerate(zip(a.edges, res.routes, res.reversed,
                                                      strict=True)):
            if u == v:
                continue
            assert (res.rank[v] > res.rank[u]) != rev
            if a.widths[u]:
                assert on_border(rects[str(u)], route[0])
            if a.widths[v]:
                assert on_border(rects[str(v)], route[-1])
            off = a.src_off[e]
            if off is not None and not rev:
                assert route[0][0] == pytest.approx(res.x[u] + off)
        for t in a.top:
            assert res.rank[t] == 0
        for b in a.bottom:
            assert res.rank[b] == max(res.rank)


def test_a_unit_is_laid_out_alike_in_any_batch() -> None:
    """A unit's result depends on it alone, not on the units batched with it (the memo
    hands one result to every identical unit): not on their number, nor on a deeper
    unit making the batch step through more layers."""
    units = [_unit(seed, ports=seed % 2 == 0) for seed in range(2 * batch.BATCH_MIN)]
    depth = max(layered.ranked(a.widths, a.edges, a.weights, a.top, a.bottom, a.src_off,
                               a.dst_off)[0].nranks for a in units[10:batch.BATCH_MIN + 10])
    n = depth + 6  # a chain a few layers deeper than any of them
    deeper = DagInputs([50.0] * n, [20.0] * n, [(i, i + 1) for i in range(n - 1)],
                       [1.0] * (n - 1), [], [], [None] * (n - 1), [None] * (n - 1))
    first = batch.layout_dags(units[:batch.BATCH_MIN + 10])
    layered._CACHE.clear()
    second = batch.layout_dags([*units[10:], deeper])
    assert first[10:] == second[:batch.BATCH_MIN]


def test_small_batches_take_the_single_engine_unchanged() -> None:
    units = [_unit(seed) for seed in range(5)]
    results = batch.layout_dags(units)
    layered._CACHE.clear()
    for a, res in zip(units, results, strict=True):
        assert res == layered._layout_dag(
            a.widths, a.heights, a.edges, weights=a.weights, top=a.top, bottom=a.bottom,
            src_off=a.src_off, dst_off=a.dst_off)


def test_batched_ordering_removes_the_crossings_of_a_known_case() -> None:
    """test_layout_ordering's case (0 -> 7 crosses 1 -> 4 and 2 -> 4 in the first
    ordering), many times over with different widths so no two units are alike."""
    edges = [(0, 4), (0, 7), (1, 4), (2, 4), (4, 6), (5, 6)]
    units = [DagInputs([60.0 + i] * 8, [30.0] * 8, edges, [1.0] * 6, [], [], [None] * 6,
                       [None] * 6) for i in range(batch.BATCH_MIN)]
    for res in batch.layout_dags(units):
        for i, (a, b) in enumerate(edges):
            for c, d in edges[i + 1:]:
                if len({a, b, c, d}) == 4 and res.rank[a] == res.rank[c]:
                    assert (res.x[a] - res.x[c]) * (res.x[b] - res.x[d]) > 0, (a, b, c, d)


def _many_groups_model(tmp_path: Path, groups: int) -> Any:
    """Groups /g0 .. in a chain, each a run of Relus with one side branch, all different
    lengths: enough distinct units at one depth for the batched engine."""
    nodes = []
    prev = "x"
    for g in range(groups):
        start = prev
        for i in range(2 + g):
            nodes.append(helper.make_node("Relu", [prev], [f"v{g}_{i}"], name=f"/g{g}/Relu_{i}"))
            prev = f"v{g}_{i}"
        nodes.append(helper.make_node("Add", [prev, start], [f"s{g}"], name=f"/g{g}/Add"))
        prev = f"s{g}"
    graph = helper.make_graph(
        nodes, "groups", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [2, 8])])
    return load_model(save(make_model(graph), tmp_path / "groups.onnx"))


def test_a_model_of_many_groups_is_laid_out_in_a_batch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _many_groups_model(tmp_path, batch.BATCH_MIN + 8)
    state = ExpandState()
    state.expand_all(model.graph)
    batches: list[int] = []
    real = batch._engine

    def counted(ranked: Any, *args: Any) -> Any:
        batches.append(len(ranked.n))
        return real(ranked, *args)

    monkeypatch.setattr(batch, "_engine", counted)
    layout = build_layout(model, state)
    assert batches == [batch.BATCH_MIN + 8]  # the groups; the root alone
    check_layout(layout)
    # the chain runs down: each group below the one before it
    frames = {f.id: f for f in layout.groups}
    ys = [frames[f"/g{g}"].y for g in range(batch.BATCH_MIN + 8)]
    assert ys == sorted(ys)


def test_remembered_results_keep_their_routes_packed() -> None:
    """The memo holds every result for the session: its routes are one float64 array
    (16 bytes a point), not lists of tuples, and read back as the very same points."""
    a = _unit(7)
    res = layered.layout_dag(a.widths, a.heights, a.edges, weights=a.weights, top=a.top,
                             bottom=a.bottom, src_off=a.src_off, dst_off=a.dst_off)
    assert res.points.dtype == float and res.points.shape == (int(res.ends[-1]), 2)
    assert not hasattr(res, "__dict__")  # nothing else to hold lists
    routes = res.routes
    assert [len(r) for r in routes] == [int(b - a) for a, b in
                                        zip([0, *res.ends[:-1]], res.ends, strict=True)]
    flat = [p for r in routes for p in r]
    assert flat == [tuple(p) for p in res.points.tolist()]
    assert all(len(r) >= 2 for (u, v), r in zip(a.edges, routes, strict=True) if u != v)


@pytest.mark.parametrize("budget", [ranking.DUMMY_BUDGET, -2.0])
def test_batched_routes_are_each_units_own(monkeypatch: pytest.MonkeyPatch,
                                           budget: float) -> None:
    """``batch_routes`` gives every unit of a batch exactly ``layered.result``'s y,
    routes and flags (reversed edges, loops, fixed ports, layers of dummies alone, and
    with a small dummy budget edges drawn straight), whatever it is batched with."""
    monkeypatch.setattr(ranking, "DUMMY_BUDGET", budget)
    units = [_unit(seed, ports=seed % 3 != 0) for seed in range(300, 330)]
    dags, placed = [], []
    for a in units:
        a.edges.append((1, 1))  # a loop: no route
        a.weights.append(1.0)
        a.src_off.append(None)
        a.dst_off.append(None)
        g, ports = layered.ranked(a.widths, a.edges, a.weights, a.top, a.bottom, a.src_off,
                                  a.dst_off)
        dags.append(g)
        placed.append(coords.x_coords(g, ordering.order_layers(g, ports, None), a.edges,
                                      a.src_off, a.dst_off))
    assert any(g.back for g in dags)
    assert any(g.straight for g in dags) == (budget < 0)
    together = batch_routes.batch_results(batch_rank.rank_batch(units), placed, units)
    alone = [batch_routes.batch_results(batch_rank.rank_batch([a]), [p], [a])[0]
             for p, a in zip(placed[::7], units[::7], strict=True)]
    for g, p, a, res in zip(dags, placed, units, together, strict=True):
        want = layered.result(g, *p, a.heights, a.edges, a.src_off, a.dst_off)
        assert res == want
        assert res.ends.tolist() == want.ends.tolist()
        assert res.points.shape == want.points.shape
    assert alone == together[::7]


def test_flattened_batch_numbers_every_item_and_link_unit_after_unit() -> None:
    """``flatten``'s arrays, made from the whole batch at once, hold what a walk over
    each unit ranked alone gives (global ids, initial layer slots, port offsets)."""
    units = [_unit(seed, ports=seed % 2 == 0) for seed in range(40, 52)]
    ranked = [layered.ranked(a.widths, a.edges, a.weights, a.top, a.bottom, a.src_off,
                             a.dst_off) for a in units]
    f = batch_order.flatten(batch_rank.rank_batch(units), units)
    assert any(pt for _, pt in ranked)
    off = 0
    links: list[tuple[int, int, float, float, float]] = []
    for g, pt in ranked:
        for row in ordering.initial_layers(g):
            for i, v in enumerate(row):
                assert f.pos[v + off] == i
                assert f.layer[v + off] == g.rank[v]
        links += [(v + off, t + off, x, *pt.get((v, t), (0.0, 0.0)))
                  for v, row in enumerate(g.down) for t, x in row]
        off += g.size
    assert off == f.size
    assert list(zip(f.src.tolist(), f.dst.tolist(), f.w.tolist(), f.fa.tolist(),
                    f.fb.tolist(), strict=True)) == links


@pytest.mark.parametrize("budget", [ranking.DUMMY_BUDGET, 0.05, -2.0])
def test_a_batch_is_ranked_as_each_unit_alone(monkeypatch: pytest.MonkeyPatch,
                                              budget: float) -> None:
    """``rank_batch`` gives every unit exactly the DAG ``layered.ranked`` makes of it
    alone: cycles broken, repeated edges summed, loops dropped, ports on layers of their
    own, trunks of dummies within the budget (or edges drawn straight), weighted links
    in the same order."""
    monkeypatch.setattr(ranking, "DUMMY_BUDGET", budget)
    units = [_unit(seed, ports=seed % 3 != 0) for seed in range(500, 560)]
    for a in units[::4]:
        a.edges.extend([(2, 2), a.edges[0]])  # a loop, and an edge twice
        a.weights.extend([1.0, 2.0])
        a.src_off.extend([None, None])
        a.dst_off.extend([None, None])
    r = batch_rank.rank_batch(units)
    dags = [layered.ranked(a.widths, a.edges, a.weights, a.top, a.bottom, a.src_off,
                           a.dst_off)[0] for a in units]
    assert any(g.back for g in dags) and any(g.chains for g in dags)
    assert any(g.straight for g in dags) == (budget < 1)
    for u, g in enumerate(dags):
        mine = r.unit_dag(u)
        assert list(mine.dag.items()) == list(g.dag.items())
        assert (mine.n, mine.back, mine.rank, mine.nranks, mine.width, mine.is_dummy,
                mine.chains, mine.straight, mine.up, mine.down) == (
            g.n, g.back, g.rank, g.nranks, g.width, g.is_dummy, g.chains, g.straight,
            g.up, g.down)


def test_a_unit_too_wide_for_the_batch_is_laid_out_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The widest unit over the transposition limit goes through the single engine;
    the rest, ranked again without it, get what a batch of their own gives them."""
    units = [_unit(seed) for seed in range(600, 600 + batch.BATCH_MIN + 2)]
    each = np.diff(batch_rank.rank_batch(units).base)
    sizes = sorted(each.tolist())
    assert sizes[-1] > sizes[-2]
    wide = int(each.argmax())
    monkeypatch.setattr(batch, "TRANSPOSE_MAX", int(sizes[-2]))
    got = batch.batched(units, None)
    a = units[wide]
    assert got[wide] == layered._layout_dag(a.widths, a.heights, a.edges, weights=a.weights,
                                            top=a.top, bottom=a.bottom, src_off=a.src_off,
                                            dst_off=a.dst_off)
    rest = units[:wide] + units[wide + 1:]
    assert got[:wide] + got[wide + 1:] == batch.batched(rest, None)
