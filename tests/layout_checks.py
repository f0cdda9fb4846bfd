"""Geometric invariants every Layout must satisfy, shared by the layout tests."""

from __future__ import annotations

from onnxstudio.layout.types import Layout

Rect = tuple[float, float, float, float]
EPS = 0.01


def _overlap(a: Rect, b: Rect) -> bool:
    return (a[0] < b[0] + b[2] - EPS and b[0] < a[0] + a[2] - EPS
            and a[1] < b[1] + b[3] - EPS and b[1] < a[1] + a[3] - EPS)


def overlapping_pairs(rects: dict[str, Rect]) -> list[tuple[str, str]]:
    """Pairs of rectangles that overlap (sweep over x, so large levels stay quick)."""
    items = sorted(rects.items(), key=lambda kv: kv[1][0])
    bad: list[tuple[str, str]] = []
    active: list[tuple[str, Rect]] = []
    for key, r in items:
        active = [(k, a) for k, a in active if a[0] + a[2] > r[0] + EPS]
        bad.extend((k, key) for k, a in active if _overlap(a, r))
        active.append((key, r))
    return bad


def check_layout(layout: Layout) -> None:
    """No overlaps among siblings at any level, members inside their frame,
    every edge starting on its source box and ending on its target box."""
    rect: dict[str, Rect] = {b.id: (b.x, b.y, b.width, b.height) for b in layout.boxes}
    frames = {g.id: (g.x, g.y, g.width, g.height) for g in layout.groups}
    assert len(rect) == len(layout.boxes), "duplicate box ids"
    inside: set[str] = set()
    for g in layout.groups:
        members = {m: rect.get(m) or frames[m] for m in g.members}
        inside.update(g.members)
        assert not overlapping_pairs(members), f"overlap inside {g.id}"
        for m, r in members.items():
            assert r[0] >= g.x - EPS and r[1] >= g.y - EPS, f"{m} sticks out of {g.id}"
            assert r[0] + r[2] <= g.x + g.width + EPS, f"{m} sticks out of {g.id}"
            assert r[1] + r[3] <= g.y + g.height + EPS, f"{m} sticks out of {g.id}"
    top = {k: v for k, v in {**rect, **frames}.items() if k not in inside}
    assert not overlapping_pairs(top), "overlap at top level"
    assert not overlapping_pairs(rect), "overlapping node boxes"
    for e in layout.edges:
        assert len(e.points) >= 2, f"edge {e.source}->{e.target} has no route"
        assert on_border(rect[e.source], e.points[0]), f"{e.source}->{e.target} start"
        assert on_border(rect[e.target], e.points[-1]), f"{e.source}->{e.target} end"


def on_border(r: Rect, p: tuple[float, float], tol: float = 0.6) -> bool:
    x, y, w, h = r
    px, py = p
    within_x = x - tol <= px <= x + w + tol
    within_y = y - tol <= py <= y + h + tol
    on_h = within_x and (abs(py - y) <= tol or abs(py - y - h) <= tol)
    on_v = within_y and (abs(px - x) <= tol or abs(px - x - w) <= tol)
    return on_h or on_v
