"""Qt-free render helpers: curves, text widths, hit testing."""

from __future__ import annotations

from pathlib import Path

from onnxstudio.layout.types import Box, Edge, GroupFrame, Layout
from onnxstudio.render.drawing import Font
from onnxstudio.render.geometry import arrowhead, end_direction, smooth_curve
from onnxstudio.render.hit_index import GraphIndex
from onnxstudio.render.text import elide, text_width


def test_smooth_curve_starts_and_ends_on_the_route() -> None:
    pts = [(0.0, 0.0), (0.0, 20.0), (50.0, 60.0), (50.0, 100.0)]
    start, segs = smooth_curve(pts)
    assert start == (0.0, 0.0)
    assert segs[-1][2] == (50.0, 100.0)
    ux, uy = end_direction(start, segs)
    assert abs(ux) < 1e-9 and uy > 0.99  # arrives straight down
    assert smooth_curve([(1.0, 1.0), (1.0, 1.0)]) == ((1.0, 1.0), [])


def test_a_long_straight_run_is_one_line_and_its_bends_are_drawn_as_before() -> None:
    """A skip connection down a column of layers: the run is one line segment, and the
    curves into and out of it depend only on the points around each bend, so they are
    the very segments a short run gets."""
    def route(run: int) -> list[tuple[float, float]]:
        column = [(40.0, 30.0 + 10.0 * k) for k in range(run)]
        return [(0.0, 0.0), *column, (40.0 + 25.0, 40.0 + 10.0 * run)]

    start, short = smooth_curve(route(5))
    long_start, long = smooth_curve(route(200))
    assert long_start == start and len(long) == len(short) <= 7
    assert long[:3] == short[:3] and long[-3:] == [
        tuple((x, y + 1950.0) for x, y in seg) for seg in short[-3:]]
    c1, c2, end = long[3]  # the run: a line from where the bend's curve ends
    assert c1 == long[2][2] and c2 == end and c1[0] == end[0] == 40.0


def test_long_routes_are_smoothed_from_their_runs_ends_to_the_same_curve(monkeypatch) -> None:
    """The middle of a straight run along an axis is left out before smoothing (a skip
    connection's 200 points become a few): on random routes of runs, bends, repeats
    and near-repeats, the curve is exactly the one smoothed from every point."""
    import random

    from onnxstudio.render import geometry

    rng = random.Random(7)

    def route() -> list[tuple[float, float]]:
        x, y = rng.choice([0.0, 10.5]), rng.choice([0.0, 3.3])
        pts = [(x, y)]
        while len(pts) < geometry.THIN_FROM + 20:
            n, kind = rng.choice([1, 2, 3, 4, 7, 8, 9, 30]), rng.random()
            for _ in range(n):
                if kind < 0.4:
                    y += rng.choice([1, -1]) * rng.choice([1.0, 7.5]) if n < 3 else 2.5
                elif kind < 0.8:
                    x += 1.5 if n > 2 else rng.uniform(-3, 3)
                elif kind < 0.9:
                    x += 1e-8  # within the repeat tolerance
                else:
                    x, y = x + rng.uniform(-5, 5), y + rng.uniform(-5, 5)
                pts.append((x, y))
        return pts

    routes = [route() for _ in range(3000)]
    thinned = [smooth_curve(r) for r in routes]
    monkeypatch.setattr(geometry, "THIN_FROM", 10**9)
    assert [smooth_curve(r) for r in routes] == thinned
    column = [(0.0, 0.0), *((40.0, 30.0 + 10.0 * k) for k in range(200)), (65.0, 2050.0)]
    assert len(geometry._thinned(column)) == 9  # its bend in, 4 + 3 of the run, its bend out


def test_a_label_sits_halfway_along_its_route_whatever_repeats_in_it() -> None:
    from onnxstudio.render.geometry import polyline_midpoint

    assert polyline_midpoint([(0, 0), (0, 10)]) == ((0.0, 5.0), (0.0, 1.0))
    bent = [(0.0, 0.0), (0.0, 30.0), (40.0, 30.0)]  # 70 long: halfway is 5 into the run
    assert polyline_midpoint(bent) == ((5.0, 30.0), (1.0, 0.0))
    repeated = [(0.0, 0.0), (0.0, 30.0), (1e-7, 30.0), (0.0, 30.0 + 1e-7), (40.0, 30.0)]
    assert polyline_midpoint(repeated) == polyline_midpoint(bent)
    assert polyline_midpoint([(3.0, 4.0), (3.0, 4.0)]) == ((3.0, 4.0), (0.0, 1.0))
    assert polyline_midpoint([]) == ((0.0, 0.0), (0.0, 1.0))


def test_arrowhead_points_along_direction() -> None:
    tip, left, right = arrowhead((10.0, 10.0), (0.0, 1.0))
    assert tip == (10.0, 10.0)
    assert left[1] < 10.0 and right[1] < 10.0


def test_a_straight_edge_is_drawn_to_the_same_bits_as_any_route() -> None:
    """straight_edge is the general path (smooth, trim, arrowhead) unrolled for two
    points: the same numbers exactly, and None where the points coincide."""
    import random

    from onnxstudio.render.geometry import straight_edge, trim_end

    rng = random.Random(11)
    for _ in range(2000):
        a = (rng.choice([0.0, 12.5, rng.uniform(-500, 500)]), rng.uniform(-500, 500))
        b = (rng.choice([a[0], rng.uniform(-500, 500)]), rng.choice([a[1], rng.uniform(-9, 9)]))
        start, segs = smooth_curve([a, b])
        fast = straight_edge(a, b, 6.0)
        if not segs or len(segs) != 1:
            assert fast is None
            continue
        way = end_direction(start, segs)
        assert fast == (start, trim_end(start, segs, 6.0, way), arrowhead(segs[-1][2], way))
    assert straight_edge((1.0, 1.0), (1.0, 1.0 + 1e-9), 6.0) is None


def test_text_width_and_elide() -> None:
    font = Font(10.0)
    assert text_width("MatMul", Font(11.0, bold=True)) > text_width("MatMul", Font(11.0))
    long = "/encoder/layer.11/attention/self/MatMul_1"
    cut = elide(long, font, 80.0)
    assert "…" in cut and text_width(cut, font) <= 80.0
    assert cut.startswith("/enc") and cut.endswith("_1")
    assert elide("Add", font, 100.0) == "Add"


def _layout() -> Layout:
    a = Box("a", "node", 0, 0, 100, 30, "Conv")
    b = Box("b", "node", 0, 100, 100, 30, "Relu")
    c = Box("c", "node", 200, 100, 100, 30, "Sigmoid")
    edges = [
        Edge("a", "b", "x", "", [(50, 30), (50, 100)]),
        Edge("a", "c", "x", "", [(50, 30), (250, 100)]),
    ]
    frame = GroupFrame("/g", "g", -10, -30, 330, 170, 3, ["a", "b", "c"])
    return Layout("TB", 320, 140, [a, b, c], [frame], edges)


def test_index_queries() -> None:
    idx = GraphIndex(_layout())
    assert idx.box_at(50, 15) == "a"
    assert idx.box_at(150, 15) is None
    assert sorted(idx.boxes_in((0, 90, 400, 50))) == ["b", "c"]
    assert idx.edge_near(51, 60, 3) == 0
    assert idx.edge_near(150, 65, 3) == 1
    assert idx.edge_near(150, 15, 3) is None
    hood = idx.neighbours("a")
    assert hood.outgoing == (0, 1) and hood.boxes == {"b", "c"}
    assert idx.neighbours("b").incoming == (0,)
    assert idx.group_label_at(100, -20) == "/g"
    assert idx.group_label_at(100, 50) is None
    assert idx.group_at(100, 50) == "/g"


def test_an_index_for_painting_only_answers_what_painting_asks() -> None:
    """An export's index skips edge segments and adjacency; what a paint asks (boxes,
    edges and frames in a rectangle) it answers as the full index does."""
    layout = _layout()
    full, paint = GraphIndex(layout), GraphIndex(layout, picking=False)
    for rect in ((0, 90, 400, 50), (40, 20, 20, 20), (-100, -100, 1000, 1000), None):
        assert paint.box_indices_in(rect).tolist() == full.box_indices_in(rect).tolist()
        assert paint.edge_indices_in(rect, 5).tolist() == full.edge_indices_in(rect, 5).tolist()
        assert paint.group_indices_in(rect).tolist() == full.group_indices_in(rect).tolist()
    assert not hasattr(paint, "seg_edge") and paint.centre("a") == full.centre("a")


def test_index_and_painter_accept_empty_and_unrouted_layouts() -> None:
    from onnxstudio.render.scene_painter import GraphPainter
    from tests.render_support import RecordingSurface

    empty = Layout("TB", 0, 0)
    idx = GraphIndex(empty)
    assert idx.box_at(0, 0) is None and idx.edge_near(0, 0) is None
    assert idx.boxes_in((0, 0, 10, 10)) == [] and idx.neighbours("x").boxes == frozenset()
    GraphPainter(empty).paint(RecordingSurface())
    a = Box("a", "node", 0, 0, 100, 30, "Conv")
    b = Box("b", "node", 0, 100, 100, 30, "Relu")
    unrouted = Layout("TB", 100, 130, [a, b], [], [Edge("a", "b", "x", "1×3")])
    idx = GraphIndex(unrouted)
    assert idx.edge_near(50, 60, 2) == 0  # falls back to centre-to-centre
    c = Box("c", "node", 200, 100, 100, 30, "Tanh")
    mixed = Layout("TB", 300, 130, [a, b, c], [], [
        Edge("a", "c", "x", "", [(50.0, 30.0), (250.0, 100.0)]), Edge("a", "b", "x", ""),
        Edge("b", "c", "y", "", [(100.0, 115.0), (150.0, 140.0), (200.0, 115.0)])])
    idx = GraphIndex(mixed)
    assert idx.route_points().tolist() == [2, 0, 3]  # the middle one has none of its own
    assert [idx.edge_near(150, 65, 2), idx.edge_near(50, 60, 2), idx.edge_near(175, 127.5, 2)
            ] == [0, 1, 2]
    rec = RecordingSurface()
    GraphPainter(unrouted).paint(rec)
    assert rec.count("path") >= 1 and "1×3" in rec.texts()


def test_prepare_smooths_long_routes_before_the_first_paint(monkeypatch) -> None:
    """A skip connection bends at every layer it passes; its curve is computed where the
    layout is built (off the GUI thread), and the paint reuses it."""
    from onnx import TensorProto, helper

    from onnxstudio.layout.build import build_layout
    from onnxstudio.model.reader import build_model
    from onnxstudio.render import scene_painter
    from onnxstudio.render.scene_painter import LONG_ROUTE_POINTS, GraphPainter
    from tests.builders import make_model

    depth = 2 * LONG_ROUTE_POINTS
    nodes = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"r{i}")
             for i in range(depth)]
    nodes[0].input[0] = "x"
    nodes.append(helper.make_node("Add", ["x", f"v{depth}"], ["y"], name="skip"))
    graph = helper.make_graph(
        nodes, "skip", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    layout = build_layout(build_model(make_model(graph), Path("skip.onnx")))
    long_ones = [i for i, e in enumerate(layout.edges) if len(e.points) >= LONG_ROUTE_POINTS]
    assert long_ones  # the skip edge from x to the Add runs past every Relu
    painter = GraphPainter(layout).prepare()
    smoothed: list[int] = []
    monkeypatch.setattr(scene_painter, "smooth_curve",
                        lambda pts: smoothed.append(len(pts)) or smooth_curve(pts))
    start, segments = painter.curve(long_ones[0])
    assert segments and start == layout.edges[long_ones[0]].points[0]
    for i in long_ones:
        painter.curve(i)
    assert smoothed == []  # every long route was ready: the paint smooths none of them
