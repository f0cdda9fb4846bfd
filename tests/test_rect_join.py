"""rect_join answers "does a spot meet a box / straddle a frame" for all spots at once;
it must give what comparing every spot with every rectangle gives."""

from __future__ import annotations

import numpy as np

from onnxstudio.render.rect_join import covering, straddling


def _rects(rng: np.random.Generator, n: int, size: float, spread: float) -> np.ndarray:
    xy = rng.uniform(-spread / 4, spread, (n, 2)).round(1)
    wh = rng.uniform(0.0, size, (n, 2)).round(1)
    return np.concatenate([xy, wh], axis=1)


def _brute(spots: np.ndarray, others: np.ndarray, straddle: bool) -> np.ndarray:
    out = []
    for x, y, w, h in spots.tolist():
        hit = False
        for ox, oy, ow, oh in others.tolist():
            overlaps = x < ox + ow and ox < x + w and y < oy + oh and oy < y + h
            inside = ox <= x and x + w <= ox + ow and oy <= y and y + h <= oy + oh
            hit = hit or (overlaps and not (straddle and inside))
        out.append(hit)
    return np.array(out, dtype=bool)


def test_spots_meeting_boxes_and_straddling_frames_match_the_brute_force_answer() -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        spots = _rects(rng, 300, 60.0, 2000.0)
        boxes = _rects(rng, 200, 150.0, 2000.0)
        frames = _rects(rng, 30, 900.0, 2000.0)
        assert (covering(spots, boxes) == _brute(spots, boxes, False)).all()
        assert (straddling(spots, frames) == _brute(spots, frames, True)).all()
        assert covering(spots, boxes).any() and straddling(spots, frames).any()


def test_touching_is_not_meeting_and_nothing_meets_nothing() -> None:
    spot = np.array([[0.0, 0.0, 10.0, 10.0]])
    beside = np.array([[10.0, 0.0, 5.0, 5.0]])  # shares an edge only
    around = np.array([[-5.0, -5.0, 30.0, 30.0]])  # wholly contains the spot
    assert not covering(spot, beside)[0] and covering(spot, around)[0]
    assert not straddling(spot, around)[0] and straddling(spot, np.array([[5.0, 5.0, 50, 50]]))[0]
    assert covering(spot, np.zeros((0, 4))).tolist() == [False]
    assert straddling(np.zeros((0, 4)), around).tolist() == []
