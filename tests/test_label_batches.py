"""The numpy forms of edge-label placement give the Python rules' answers to the bit:
the anchors of many bent routes at once (render/anchors.py) are ``polyline_midpoint``'s,
and the spots taken for a batch at once (render/label_choice.py) are those a greedy
taking them one by one, checking each against the labels taken before, takes."""

from __future__ import annotations

import random
from array import array

import numpy as np

from onnxstudio.render.anchors import polyline_anchors
from onnxstudio.render.geometry import polyline_midpoint
from onnxstudio.render.label_choice import first_free


def _routes(count: int, seed: int) -> list[list[tuple[float, float]]]:
    """Routes like a layout's: bends on a grid, long runs, repeated and near-repeated
    points (within 1e-6: dropped), a zero-length route, single points."""
    rng = random.Random(seed)
    routes = []
    for _ in range(count):
        x, y = rng.uniform(0, 1e4), rng.uniform(0, 1e6)
        points = []
        for _ in range(rng.choice([1, 3, 3, 4, 5, 6, 8, 12, 30, 120])):
            r = rng.random()
            if r < 0.1:
                pass  # the same point again
            elif r < 0.15:
                x += 1e-7
            elif r < 0.55:
                y += rng.choice([10.0, 25.5, rng.uniform(0, 100)])
            else:
                x += rng.choice([-20.0, 20.0, rng.uniform(-50, 50)])
            points.append((x, y))
        routes.append(points)
    routes.append([(5.0, 5.0), (5.0, 5.0)])
    return routes


def test_bent_routes_are_anchored_as_one_by_one() -> None:
    routes = _routes(3000, 7)
    packed = [array("d", [c for p in r for c in p]).tobytes() for r in routes]
    for share in (0.5, 0.25, 0.88):
        xs, ys, dxs, dys = polyline_anchors(packed, share)
        got = list(zip(xs.tolist(), ys.tolist(), dxs.tolist(), dys.tolist(), strict=True))
        want = [(x, y, dx, dy) for (x, y), (dx, dy) in
                (polyline_midpoint(r, share) for r in routes)]
        assert got == want


def _greedy(at: np.ndarray, free: np.ndarray, keys: np.ndarray, before: np.ndarray,
            gap: float) -> list[int]:
    """The rule as a loop: in order, a spot is taken when it is free, its key has none
    yet and it does not come within ``gap`` side by side of a spot taken before (or of
    ``before``)."""
    taken: list[int] = []
    earlier = before.tolist()
    shown: set[int] = set()
    for j, (x, y, w, h) in enumerate(at.tolist()):
        if not free[j] or keys[j] in shown:
            continue
        sx, sx1, y1 = x - gap, (x - gap) + (w + 2 * gap), y + h
        if any(sx < ox + ow and ox < sx1 and y < oy + oh and oy < y1
               for ox, oy, ow, oh in earlier + [at[k].tolist() for k in taken]):
            continue
        taken.append(j)
        shown.add(int(keys[j]))
    return taken


def test_a_batch_takes_the_spots_the_greedy_takes() -> None:
    rng = np.random.default_rng(3)
    for crowd in (300.0, 1000.0, 4000.0):  # from crowded to sparse
        n = 600
        at = np.stack((rng.uniform(0, crowd, n), rng.uniform(0, crowd, n),
                       rng.uniform(20, 90, n), np.full(n, 14.0)), axis=1)
        free = rng.random(n) > 0.2
        keys = np.repeat(np.arange(n // 3), 3)  # three tries per label
        before = at[:40] + np.array([3.0, 5.0, 0.0, 0.0])  # labels placed earlier
        for prior in (np.zeros((0, 4)), before):
            taken = first_free(at, free, keys, prior, 8.0).tolist()
            assert taken == _greedy(at, free, keys, prior, 8.0)
            assert len(taken) > 20
