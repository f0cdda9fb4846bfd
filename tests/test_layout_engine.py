"""The flat layered engine (layout_dag) and the crossing metrics, on plain inputs."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from onnxstudio.layout.layered import LayoutCancelled, layout_dag
from onnxstudio.layout.metrics import count_segment_crossings
from tests.layout_checks import on_border, overlapping_pairs


def random_graph(n: int, extra: int, seed: int) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    edges = [(i, min(n - 1, i + rng.randint(1, 5))) for i in range(n - 1)]
    edges += [(rng.randrange(n), rng.randrange(n)) for _ in range(extra)]
    return edges


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_overlaps_and_edges_touch_boxes(seed: int) -> None:
    n = 200
    rng = random.Random(seed)
    widths = [rng.uniform(40, 200) for _ in range(n)]
    heights = [rng.uniform(20, 90) for _ in range(n)]
    edges = random_graph(n, 80, seed)
    res = layout_dag(widths, heights, edges)
    rects = {str(i): (res.x[i], res.y[i], widths[i], heights[i]) for i in range(n)}
    assert not overlapping_pairs(rects)
    for (u, v), route in zip(edges, res.routes, strict=True):
        if u == v:
            continue
        assert on_border(rects[str(u)], route[0])
        assert on_border(rects[str(v)], route[-1])
    assert res.width >= max(res.x[i] + widths[i] for i in range(n)) - 1e-6


def test_cycles_are_broken_and_marked() -> None:
    edges = [(0, 1), (1, 2), (2, 3), (3, 1), (2, 0)]
    res = layout_dag([50.0] * 4, [30.0] * 4, edges)
    assert sum(res.reversed) >= 1
    for (u, v), rev in zip(edges, res.reversed, strict=True):
        # a forward edge goes down a layer, a reversed one up
        assert (res.rank[v] > res.rank[u]) != rev
    assert res.reversed[edges.index((3, 1))] or res.reversed[edges.index((2, 0))]


def test_main_chain_with_side_branch_is_straight() -> None:
    """Single-input nodes sit exactly under their input: the spine stays one line."""
    edges = [(i, i + 1) for i in range(5)] + [(2, 6), (6, 7)]
    widths = [80.0, 120.0, 60.0, 100.0, 80.0, 140.0, 90.0, 70.0]
    res = layout_dag(widths, [30.0] * 8, edges)
    centres = {round(res.x[i] + widths[i] / 2, 6) for i in range(6)}
    assert len(centres) == 1
    assert res.x[6] + widths[6] / 2 not in centres  # the branch goes beside it


def test_deterministic() -> None:
    edges = random_graph(300, 150, 7)
    a = layout_dag([60.0] * 300, [30.0] * 300, edges)
    b = layout_dag([60.0] * 300, [30.0] * 300, edges)
    assert a == b


def test_long_edges_capped() -> None:
    """A hub feeding every node of a long chain: the dummy budget keeps it bounded."""
    n = 400
    edges = [(i, i + 1) for i in range(1, n - 1)] + [(0, i) for i in range(2, n)]
    res = layout_dag([50.0] * n, [20.0] * n, edges)
    assert all(len(r) >= 2 for r in res.routes)
    rects = {str(i): (res.x[i], res.y[i], 50.0, 20.0) for i in range(n)}
    assert not overlapping_pairs(rects)


def test_ports_fixed() -> None:
    res = layout_dag([100.0, 100.0], [30.0, 30.0], [(0, 1)], src_off=[20.0], dst_off=[70.0])
    assert res.routes[0][0][0] == pytest.approx(res.x[0] + 20.0)
    assert res.routes[0][-1][0] == pytest.approx(res.x[1] + 70.0)


def test_top_and_bottom_ports_get_their_own_layers() -> None:
    # 0, 1 are entries, 4 is an exit; 2 -> 3 is the content
    edges = [(0, 2), (1, 3), (2, 3), (3, 4), (2, 4)]
    res = layout_dag([0.0, 0.0, 60.0, 60.0, 0.0], [0.0, 0.0, 30.0, 30.0, 0.0], edges,
                     top=[0, 1], bottom=[4])
    assert res.rank[0] == res.rank[1] == 0
    assert min(res.rank[2], res.rank[3]) >= 1
    assert res.rank[4] > max(res.rank[2], res.rank[3])


def test_cancel() -> None:
    edges = random_graph(200, 200, 3)
    with pytest.raises(LayoutCancelled):
        layout_dag([50.0] * 200, [20.0] * 200, edges, cancel=lambda: True)


def _brute(seg: np.ndarray) -> int:
    def orient(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
        return float(np.sign((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])))

    count = 0
    for i, j in itertools.combinations(range(len(seg)), 2):
        s, t = seg[i], seg[j]
        if (orient(s[:2], s[2:], t[:2]) * orient(s[:2], s[2:], t[2:]) < 0
                and orient(t[:2], t[2:], s[:2]) * orient(t[:2], t[2:], s[2:]) < 0):
            count += 1
    return count


@pytest.mark.parametrize("seed", [0, 1])
def test_crossings_match_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    seg = rng.uniform(0, 1000, (250, 4))
    seg[:100, 2:] = seg[:100, :2] + rng.uniform(-30, 30, (100, 2))  # mix short and long
    assert count_segment_crossings(seg) == _brute(seg) > 0


def test_crossings_skip_shared_endpoints_and_same_route() -> None:
    seg = np.array([[0, 0, 10, 10], [0, 10, 10, 0], [5, -5, 5, 20]], dtype=float)
    assert count_segment_crossings(seg) == 3
    ends = np.array([[0, 1], [0, 2], [3, 4]])
    assert count_segment_crossings(seg, ends=ends) == 2  # 0 and 1 share box 0
    assert count_segment_crossings(seg, group=np.array([0, 0, 1])) == 2


def test_crossings_fast_on_100k_segments() -> None:
    """Not a timing assertion: it must simply finish (an O(E^2) pass would not)."""
    rng = np.random.default_rng(0)
    start = rng.uniform(0, 20000, (100_000, 2))
    seg = np.hstack([start, start + rng.uniform(-60, 60, (100_000, 2))])
    assert count_segment_crossings(seg) > 0
