"""GraphPainter through its backends: pixels where boxes are, SVG structure, level of detail."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from onnxstudio.render.scene_painter import GraphPainter, PaintState
from onnxstudio.render.theme import DARK, LIGHT
from tests.conftest import REPO
from tests.render_support import RecordingSurface, demo_layout, grid_layout, render_svg

SVG_NS = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize("theme", [LIGHT, DARK], ids=lambda t: t.name)
def test_image_has_box_colours_on_boxes_and_background_elsewhere(qapp, theme) -> None:
    from PySide6.QtGui import QColor

    from tests.render_support import render_image

    layout = demo_layout()
    painter = GraphPainter(layout, theme)
    margin = 20.0
    image = render_image(painter, 1.0, margin=margin)
    assert image.width() == round(layout.width + 2 * margin)
    background = QColor(theme.canvas)
    conv = layout.box("n0")
    assert conv is not None
    # Header band of the Conv node carries the conv colour.
    px = image.pixelColor(int(conv.x + margin + 6), int(conv.y + margin + 4))
    assert px.name() == theme.node("conv").fill
    # Far from every item: background.
    assert image.pixelColor(5, 5) == background
    assert image.pixelColor(int(margin + 20), int(layout.height)) == background
    # The top band of every box (above its title text) is painted.
    for box in layout.boxes:
        cx, _ = box.center
        assert image.pixelColor(int(cx + margin), int(box.y + margin + 3)) != background, box.id


def _svg_image(svg: str, width: int, height: int):
    from PySide6.QtCore import QByteArray
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    image = QImage(width, height, QImage.Format.Format_ARGB32)
    image.fill(0)
    painter = QPainter(image)
    QSvgRenderer(QByteArray(svg.encode())).render(painter)
    painter.end()
    return image


def test_svg_stamps_draw_what_the_primitives_draw(qapp) -> None:
    """Boxes, labels, group titles and edges written once per look and translated must
    render as every shape written in place: a user sees the same diagram."""
    from onnxstudio.render.drawing import Surface
    from onnxstudio.render.svg_surface import SvgSurface

    class InPlace(SvgSurface):
        stamp = Surface.stamp
        edges = Surface.edges

    layout = demo_layout()
    painter = GraphPainter(layout, LIGHT)
    documents = []
    for surface in (SvgSurface(), InPlace()):
        painter.paint(surface, None, 1.0, PaintState(selected=frozenset({layout.boxes[1].id})))
        documents.append(surface.document(0, 0, layout.width, layout.height, "#ffffff"))
    stamped, in_place = documents
    assert stamped.count("transform=") > len(layout.boxes) and "transform=" not in in_place
    w, h = int(layout.width), int(layout.height)
    a, b = _svg_image(stamped, w, h), _svg_image(in_place, w, h)
    differ = sum(1 for y in range(0, h, 2) for x in range(0, w, 2)
                 if a.pixel(x, y) != b.pixel(x, y))
    assert differ < w * h / 4 * 0.002  # anti-aliasing of a hundredth's shift, no more


def test_svg_boxes_of_one_look_are_written_once_and_placed_by_their_translate() -> None:
    from onnxstudio.layout.types import Box

    layout = grid_layout(30)
    for k, count in enumerate((3, 5)):  # two collapsed groups alike but for their counts
        layout.boxes.append(Box(f"/blk{k}", "group", 900.0, 100.0 * k, 120.0, 44.0, "blk",
                                f"{count} nodes", category="group", expandable=True))
    root = ET.fromstring(render_svg(GraphPainter(layout, LIGHT), margin=0.0))
    nodes = {g.get("data-id"): g for g in root.iter(f"{SVG_NS}g") if g.get("class") == "node"}
    looks: dict[str, str] = {}
    for box in layout.boxes[:30]:
        g = nodes[box.id]
        x, y = map(float, re.fullmatch(r"translate\((\S+) (\S+)\)", g.get("transform")).groups())
        assert (x, y) == pytest.approx((box.x, box.y), abs=0.01)
        body = "".join(ET.tostring(child, encoding="unicode") for child in g
                       if child.tag != f"{SVG_NS}title")
        assert looks.setdefault(box.category, body) == body  # same look, same elements
        rect = g.find(f"{SVG_NS}rect")
        assert (rect.get("x"), rect.get("y")) == ("0", "0")
    assert len(looks) > 3
    groups = [g for g in root.iter(f"{SVG_NS}g") if g.get("class") == "group"]
    assert [[t.text for t in g.iter(f"{SVG_NS}text")] for g in groups] == [
        ["blk", "3 nodes"], ["blk", "5 nodes"]]


def test_svg_parses_and_has_a_group_per_node_with_op_type() -> None:
    layout = demo_layout()
    svg = render_svg(GraphPainter(layout, LIGHT))
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG_NS}svg"
    nodes = {g.get("data-id"): g for g in root.iter(f"{SVG_NS}g") if g.get("class") == "node"}
    op_boxes = [b for b in layout.boxes if b.kind == "node"]
    assert set(nodes) == {b.id for b in op_boxes}
    for box in op_boxes:
        g = nodes[box.id]
        assert g.get("data-op-type") == box.title
        assert g.get("data-name") == box.subtitle
        title = g.find(f"{SVG_NS}title")
        assert title is not None and box.title in (title.text or "")
        texts = [t.text for t in g.iter(f"{SVG_NS}text")]
        assert box.title in texts
    ids = [g.get("id") for g in root.iter(f"{SVG_NS}g")]
    assert len(ids) == len(set(ids))
    assert any(g.get("class") == "group" for g in root.iter(f"{SVG_NS}g"))
    assert sum(1 for g in root.iter(f"{SVG_NS}g") if g.get("class") == "edge") == len(layout.edges)


def test_svg_backend_needs_no_qt() -> None:
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['PySide6'] = None\n"
        "from tests.render_support import demo_layout\n"
        "from onnxstudio.render.scene_painter import GraphPainter\n"
        "from tests.render_support import render_svg\n"
        "assert render_svg(GraphPainter(demo_layout())).startswith('<?xml')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def test_svg_shift_moves_positions_not_sizes_and_numbers_stay_compact() -> None:
    """An export's sheet offset is added as the SVG is written: every position moves,
    widths, radii and stroke widths do not; repeated values read the same each time."""
    from onnxstudio.render.drawing import Font, Stroke
    from onnxstudio.render.svg_surface import SvgSurface

    svg = SvgSurface()
    svg.shift(24.0, 10.5)
    for _ in range(2):
        svg.rounded_rect(-24.0, 0.25, 100.0, 40.125, 4.0, "#ffffff80", Stroke("#000000", 1.5))
        svg.path((0.0, 0.0), [((0.0, 0.0), (1.0, 2.0), (1.0, 2.0)),
                              ((1.0, 3.0), (2.0, 4.0), (5.0, 6.0))], Stroke("#000000"))
        svg.polygon([(0.0, 0.0), (1.0, 1.0), (-1.0, 1.0)], "#123456")
        svg.text(-24.0, -10.5, "a<b", Font(11.0, bold=True), "#000000", "middle")
    first, second = svg.parts[:4], svg.parts[4:]
    assert first == second
    rect, path, polygon, text = first
    assert rect == ('<rect x="0" y="10.75" width="100" height="40.12" rx="4" fill="#ffffff"'
                    ' fill-opacity="0.5" stroke="#000000" stroke-width="1.5"/>')
    assert 'd="M24 10.5L25 12.5C25 13.5 26 14.5 29 16.5"' in path
    assert 'points="24,10.5 25,11.5 23,11.5"' in polygon
    assert text == ('<text x="0" y="0" font-size="11" font-weight="bold" text-anchor="middle"'
                    ' fill="#000000">a&lt;b</text>')


def _edge_items(svg_text: str) -> list[tuple[str, list[float], list[str]]]:
    """Per edge item: its tag without the translate, its numbers (route, then arrowhead)
    moved by the translate, and its text."""
    items = []
    for item in re.findall(r"<g [^>]*>.*?</g>", svg_text, flags=re.S):
        tag = item[:item.index(">") + 1]
        at = re.search(r' transform="translate\(([^ ]+) ([^)]+)\)"', tag)
        dx, dy = (float(at.group(1)), float(at.group(2))) if at else (0.0, 0.0)
        numbers: list[float] = []
        for data in re.findall(r' (?:d|points)="([^"]*)"', item):
            found = [float(v) for v in re.findall(r"-?[\d.]+(?:e[-+]?\d+)?|nan|inf", data)]
            numbers += [v + (dx if i % 2 == 0 else dy) for i, v in enumerate(found)]
        items.append((tag.replace(at.group(0), "") if at else tag, numbers, item))
    return items


@pytest.mark.parametrize("shift", [(0.0, 0.0), (24.0, 10.5), (-0.004, 0.1)])
def test_svg_edge_batch_draws_what_its_primitives_draw(shift) -> None:
    """SvgSurface writes a batch of edges as shapes kept once and translated; each must
    land where path and polygon put it, to the hundredth the file keeps (trailing zeros,
    negative zero, rounding, huge values; an edge with nan or inf is written as they
    write it), and repeated shapes are written once."""
    import random

    from onnxstudio.render.drawing import Stroke, Surface
    from onnxstudio.render.svg_surface import SvgSurface

    rng = random.Random(7)
    values = [0.0, -0.0, -0.004, 0.005, 0.015, 2.675, 1.1, 12.5, -12.5, 100.0, 0.1 + 0.2,
              1e7 + 0.125, -3.999, 1e-9, 1e18, float("nan"), float("inf")]
    values += [rng.uniform(-2000, 2000) for _ in range(300)]
    values += [round(rng.uniform(0, 500), rng.choice((0, 1, 2, 3))) for _ in range(300)]

    def point() -> tuple[float, float]:
        return rng.choice(values), rng.choice(values)

    batch = []
    for i in range(60):
        start = point()
        route, cur = [], start
        for _ in range(rng.randint(1, 6)):
            end = point()
            route.append((cur, end, end) if rng.random() < 0.5 else (point(), point(), end))
            cur = end
        stroke = Stroke("#888888", 1.2, (4.0, 3.0) if i % 3 == 0 else None)
        batch.append((f"edge{i}", f"v{i}", start, route, stroke, [point(), point(), point()],
                      "#888888"))
    # one shape in two places, as a hundred layers repeat their edges
    for i, (x, y) in enumerate([(10.0, 20.0), (310.25, -19.5)], 60):
        route = [((x, y), (x + 4.0, y + 30.0), (x + 4.0, y + 30.0)),
                 ((x + 4.0, y + 40.0), (x + 8.0, y + 45.0), (x + 8.0, y + 60.0))]
        arrow = [(x + 8.0, y + 67.0), (x + 4.5, y + 60.0), (x + 11.5, y + 60.0)]
        batch.append((f"edge{i}", "same", (x, y), route, Stroke("#888888", 1.2), arrow,
                      "#888888"))
    bulk, one_by_one = SvgSurface(), SvgSurface()
    for svg in (bulk, one_by_one):
        svg.shift(*shift)
    bulk.edges(batch)
    Surface.edges(one_by_one, batch)
    drawn = _edge_items("\n".join(bulk.parts))
    expected = _edge_items("\n".join(one_by_one.parts))
    assert len(drawn) == len(expected) == len(batch)
    odd = 0
    for (tag, numbers, item), (want_tag, want, want_item) in zip(drawn, expected, strict=True):
        assert tag == want_tag and len(numbers) == len(want)
        if not all(math.isfinite(v) and abs(v) < 1e15 for v in want):
            odd += 1
            assert item == want_item
            continue
        assert numbers == pytest.approx(want, abs=0.0101, rel=0)
    assert 0 < odd < len(batch)
    text = "\n".join(bulk.parts)
    assert "L" in text and "C" in text
    same = [bulk.parts[i + 1] for i, part in enumerate(bulk.parts) if 'data-name="same"' in part]
    assert len(same) == 2 and same[0] is same[1]  # kept once, written twice


def test_level_of_detail_drops_text_but_keeps_boxes() -> None:
    painter = GraphPainter(demo_layout(), LIGHT)
    full = RecordingSurface()
    painter.paint(full, None, 1.0)
    assert full.count("text") > 20
    small = RecordingSurface()
    painter.paint(small, None, 0.3)
    assert small.count("text") == 0
    assert small.count("rounded_rect") >= len(painter.layout.boxes)
    tiny = RecordingSurface()
    painter.paint(tiny, None, 0.05)
    assert tiny.count("text") == 0
    drawn = sum(len(args[0]) for name, args in tiny.calls if name == "rects")
    assert drawn >= len(painter.layout.boxes)


def test_only_visible_items_are_drawn() -> None:
    layout = grid_layout(400, columns=20)
    painter = GraphPainter(layout, LIGHT)
    rec = RecordingSurface()
    painter.paint(rec, (0.0, 0.0, 400.0, 200.0), 1.0)
    drawn = [args[0] for name, args in rec.calls if name == "begin_item" and args[1] == "node"]
    assert 0 < len(drawn) < 20
    assert "n0" in drawn and "n399" not in drawn


def test_names_shown_on_demand() -> None:
    layout = demo_layout()
    painter = GraphPainter(layout, LIGHT)
    off = RecordingSurface()
    painter.paint(off, None, 1.0, PaintState(show_names=False))
    on = RecordingSurface()
    painter.paint(on, None, 1.0, PaintState(show_names=True))
    conv = layout.box("n0")
    assert conv is not None
    assert conv.subtitle not in off.texts()
    assert conv.subtitle in on.texts()


def test_selection_and_hover_add_rings() -> None:
    painter = GraphPainter(demo_layout(), LIGHT)
    plain = RecordingSurface()
    painter.paint(plain, None, 1.0)
    marked = RecordingSurface()
    painter.paint(marked, None, 1.0, PaintState(selected=frozenset({"n0"}), hovered="n1"))
    rings = [
        args for name, args in marked.calls if name == "rounded_rect" and args[6] is not None
    ]
    colours = {args[6].color for args in rings}
    assert LIGHT.selection in colours and LIGHT.hover in colours


def test_edge_labels_do_not_depend_on_the_painted_area() -> None:
    """Scrolling repaints thin strips; a label must be placed the same in every strip."""
    layout = demo_layout()
    painter = GraphPainter(layout, LIGHT)

    def labels(rect):
        rec = RecordingSurface()
        painter.paint(rec, rect, 1.0)
        return {(args[2], args[0], args[1]) for name, args in rec.calls if name == "text"
                and args[3].size == 9.0}

    full = labels(None)
    assert len(full) >= 8
    strips = set()
    for y in range(0, int(layout.height), 37):
        strips |= labels((0.0, float(y), layout.width, 37.0))
    assert strips == full
    texts = [t for t, _, _ in full]
    # Four edges carry 1×64×112×112, but Relu's fan-out of two is one tensor: three labels.
    assert texts.count("1×64×112×112") == 3


def test_prepare_first_places_the_labels_of_the_first_view_only() -> None:
    """A layout task places the labels of the area a view shows first (its tiles), a
    later task the rest: the first paint of that area shows its labels, and the whole
    placement then holds exactly the labels it had, at the same spots."""
    from onnxstudio.render.edge_labels import TILE

    layout = grid_layout(22_000, columns=40)
    painter = GraphPainter(layout, LIGHT).prepare_first((0.0, 0.0, 800.0, 400.0))
    first = painter.labels.placed_in((0.0, 0.0, 1.0, 1.0))
    assert not first.complete and first.done == {(0 << 32) + 0 + 2**31}
    early = first.labels
    assert len(early.edge) and (early.x1 <= TILE).all() and (early.y1 <= TILE).all()
    rec = RecordingSurface()
    painter.paint(rec, (0.0, 0.0, 800.0, 400.0), 1.0)
    assert any(name == "text" and args[2] == "1×8" for name, args in rec.calls)
    painter.prepare_rest()
    whole = painter.labels.placed()
    assert len(whole.edge) > 10 * len(early.edge)
    mine = np.isin(whole.edge, early.edge)
    assert (whole.edge[mine] == early.edge).all() and (whole.x0[mine] == early.x0).all()
    assert (whole.y0[mine] == early.y0).all()


def test_prepare_with_a_focus_does_the_first_paint_of_that_area_ahead() -> None:
    """After an expand, the view keeps its anchor box where it was: the layout task
    smooths the routes and places the labels of that area (a fifth of the first
    paint of expanded dag100k), and the paint draws exactly what it would have."""
    from onnxstudio.render.scene_painter import Focus

    layout = grid_layout(22_000, columns=40)
    anchor = layout.boxes[len(layout.boxes) // 2]
    focus = Focus(anchor.id, 30.0, -20.0, 900.0, 500.0)
    cx, cy = anchor.center
    area = (cx - 30.0 - 450.0, cy + 20.0 - 250.0, 900.0, 500.0)
    ahead = GraphPainter(layout, LIGHT)
    ahead.prepare_first(ahead.focus_area(focus))
    shown = ahead.index.edge_indices_in(area, margin=60.0).tolist()
    assert shown and all(i in ahead._drawn for i in shown)
    assert len(ahead._drawn) < len(layout.edges) // 10  # that area only
    placed = ahead.labels.placed_in((0.0, 0.0, 1.0, 1.0))
    assert placed.done and not placed.complete

    painted, plain = RecordingSurface(), RecordingSurface()
    ahead.paint(painted, area, 1.0)
    assert ahead.labels.placed_in((0.0, 0.0, 1.0, 1.0)).done == placed.done  # no new tile
    GraphPainter(layout, LIGHT).prepare().paint(plain, area, 1.0)
    assert painted.calls == plain.calls and painted.count("text") > 10


def test_a_bound_surface_paints_like_a_fresh_one(qapp) -> None:
    """The canvas keeps one QtSurface and binds it to each paint's QPainter; the surface
    skips setting the pen, brush or font it set last, so a new painter must start from
    nothing (else it draws with its own defaults: a black pen, no brush)."""
    from PySide6.QtGui import QImage, QPainter

    from onnxstudio.render.drawing import Font, Stroke
    from onnxstudio.render.qt_surface import QtSurface

    stroke = Stroke("#c04020", 3.0, None)
    font = Font(14.0, bold=True)

    def paint(surface_for) -> QImage:
        image = QImage(120, 60, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(0xFFFFFFFF)
        painter = QPainter(image)
        surface = surface_for(painter)
        surface.rounded_rect(10.0, 10.0, 100.0, 40.0, 6.0, "#2060c0", stroke)
        surface.text(20.0, 38.0, "Conv", font, "#ffffff")
        painter.end()
        return image

    kept: list[QtSurface] = []

    def bound(painter: QPainter) -> QtSurface:
        if kept:
            kept[0].bind(painter)
        else:
            kept.append(QtSurface(painter))
        return kept[0]

    first = paint(bound)
    assert paint(bound) == first == paint(QtSurface)


def test_edges_entering_a_group_keep_their_shape_label(tmp_path) -> None:
    """Halfway along an edge entering an expanded group lies the group's frame: the label
    goes further along the edge rather than vanishing."""
    from onnxstudio.layout.build import build_layout
    from onnxstudio.layout.state import default_state
    from tests.builders import save, tiny_mlp
    from tests.test_layout_cache import opened

    model = opened(save(tiny_mlp(), tmp_path / "mlp.onnx"))
    state = default_state(model.graph)
    state.groups |= {"/layer1", "/head"}
    layout = build_layout(model.graph, state, "TB")
    assert {g.id for g in layout.groups} == {"/layer1", "/head"}
    rec = RecordingSurface()
    GraphPainter(layout, LIGHT).paint(rec, None, 1.0)
    texts = [args[2] for name, args in rec.calls if name == "text"]
    assert "batch×4" in texts  # x entering /layer1
    assert "batch×3" in texts  # y leaving /head


def test_node_names_shown_above_boxes_leave_edge_labels_clear() -> None:
    """With View ▸ Node Names, each name is written just above its box; the shape labels
    of MNIST's edges are placed clear of those names, and still all shown."""
    from onnxstudio.layout.build import build_layout
    from onnxstudio.layout.state import default_state
    from onnxstudio.render.edge_labels import name_caption
    from tests.conftest import shared_model
    from tests.test_layout_cache import opened

    model = opened(shared_model("zoo/mnist/mnist.onnx"))
    layout = build_layout(model.graph, default_state(model.graph), "TB")
    painter = GraphPainter(layout, LIGHT)
    shifts = painter.labels.caption_shifts()  # names start past the arrows entering
    names = [name_caption(b, shifts.get(b.id, 0.0)) for b in layout.boxes
             if b.kind == "node" and b.subtitle]
    rec = RecordingSurface()
    painter.paint(rec, None, 1.0, PaintState(show_names=True))
    backdrops, kind = [], ""
    for name, args in rec.calls:  # the labels' (the names above boxes have one too)
        kind = args[1] if name == "begin_item" else kind
        if name == "rect" and args[4] == LIGHT.edge_label_bg and kind == "edge-label":
            backdrops.append(args[:4])
    assert len(backdrops) == len(painter.labels.placed(False).edge) >= 10

    def overlaps(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
        return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] \
            and b[1] < a[1] + a[3]

    assert not [r for r in backdrops if any(overlaps(r, n) for n in names)]


def test_edge_labels_side_by_side_keep_a_gap() -> None:
    """SqueezeNet's fire modules: the labels of the two edges entering a Concat were
    placed 4 px apart on one line and read as one ("1×64×55×55-1×64×55×55"); labels on
    a line now keep LABEL_GAP apart."""
    from onnxstudio.layout.build import build_layout
    from onnxstudio.layout.state import default_state
    from onnxstudio.model.open import load_model
    from tests.conftest import shared_model

    model = load_model(shared_model("zoo/onnx_light/light_squeezenet.onnx"))  # shapes too
    layout = build_layout(model.graph, default_state(model.graph), "TB")
    placed = GraphPainter(layout, LIGHT).labels.placed(False)
    rects = list(zip(placed.x0.tolist(), placed.y0.tolist(), placed.x1.tolist(),
                     placed.y1.tolist(), strict=True))
    assert len(rects) >= 50
    close = [(a, b) for i, a in enumerate(rects) for b in rects[i + 1:]
             if a[1] < b[3] and b[1] < a[3]  # on one line
             and max(a[0], b[0]) - min(a[2], b[2]) < 6.0]  # closer than 6 px side by side
    assert not close


def test_a_painter_and_its_layout_are_freed_by_reference_counting(qapp) -> None:
    """A closed tab's drawing must go when the tab lets go of it, not at the next full
    collection (issue 32: the painter's edge labels held its bound ``_centre_line``, a
    cycle that kept the closed layout alive and cost the close a full collection)."""
    import gc
    import weakref

    from tests.render_support import render_image

    layout = demo_layout()
    painter = GraphPainter(layout).prepare()
    render_image(painter, 1.0)  # every label placed, every route drawn
    gone = weakref.ref(painter), weakref.ref(layout)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        del painter, layout
        assert [ref() is None for ref in gone] == [True, True]
    finally:
        if was_enabled:
            gc.enable()
