"""Test scaffolding for render/: hand-made layouts, a surface that records its calls, and
whole-drawing renderers (the product paints through export/ and the canvas instead).

``demo_layout()`` shows every kind of item once (inputs/outputs, operator categories,
detail lines, a residual branch, an expanded group frame, a collapsed group, an
expandable node, a back edge); ``grid_layout(n)`` makes big synthetic drawings for speed
tests. Importing this module does not import Qt (``render_image`` imports it when called).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from onnxstudio.layout.sizing import box_size
from onnxstudio.layout.types import Box, BoxKind, Edge, GroupFrame, Layout
from onnxstudio.render.drawing import Surface
from onnxstudio.render.scene_painter import GraphPainter, PaintState
from onnxstudio.render.svg_surface import SvgSurface

if TYPE_CHECKING:
    from PySide6.QtGui import QImage


W = 150.0
GAP_Y = 40.0


def _node(
    bid: str,
    title: str,
    cat: str,
    x: float,
    y: float,
    details: list[str] | None = None,
    kind: BoxKind = "node",
    subtitle: str = "",
    expandable: bool = False,
) -> Box:
    details = details or []
    h = box_size(title, details)[1]
    if kind == "group":
        h = 38.0
    return Box(
        bid,
        kind,
        x,
        y,
        W,
        h,
        title,
        subtitle or f"/model/{title.lower()}_{bid}",
        details,
        cat,
        expandable,
    )


def _link(a: Box, b: Box, value: str, label: str = "", back: bool = False, dx: float = 0.0) -> Edge:
    x0, y0 = a.x + a.width / 2 + dx, a.y + a.height
    x1, y1 = b.x + b.width / 2 + dx, b.y
    if abs(x0 - x1) < 1e-6:
        pts = [(x0, y0), (x1, y1)]
    else:
        ym = (y0 + y1) / 2
        pts = [(x0, y0), (x0, y0 + 12), ((x0 + x1) / 2, ym), (x1, y1 - 12), (x1, y1)]
    return Edge(a.id, b.id, value, label, pts, back)


def demo_layout() -> Layout:
    """A small drawing exercising every item kind; ~700x900 units."""
    x0 = 250.0
    boxes: list[Box] = []
    y = 20.0

    def add(box: Box) -> Box:
        nonlocal y
        boxes.append(box)
        y = box.y + box.height + GAP_Y
        return box

    inp = add(_node("in:input", "input", "io", x0, y, ["float32[1×3×224×224]"], kind="input"))
    conv = add(
        _node("n0", "Conv", "conv", x0, y, ["W ⟨64×3×7×7⟩", "kernel_shape = 7,7", "strides = 2,2"])
    )
    bn = add(_node("n1", "BatchNormalization", "norm", x0, y, ["epsilon = 1e-05"]))
    relu = add(_node("n2", "Relu", "activation", x0, y))
    gtop = y - 8.0
    pool = add(_node("n3", "MaxPool", "pool", x0, y, ["kernel_shape = 3,3"]))
    side = _node("n4", "Reshape", "shape", x0 + 200.0, pool.y, ["shape ⟨4⟩"])
    boxes.append(side)
    add_ = add(_node("n5", "Add", "math", x0, y))
    group = GroupFrame(
        "/model/block1",
        "block1",
        x0 - 20.0,
        gtop - 22.0,
        410.0,
        (y - GAP_Y + 12.0) - (gtop - 22.0),
        3,
        ["n3", "n4", "n5"],
        0,
        "scope",
    )
    loop = add(_node("n6", "Loop", "control", x0, y, ["body: 12 nodes"], expandable=True))
    q = add(_node("n7", "QuantizeLinear", "quant", x0, y))
    custom = add(_node("n8", "FusedGelu", "custom", x0, y, ["domain = com.microsoft"]))
    coll = add(
        _node(
            "/model/block2",
            "block2",
            "group",
            x0,
            y,
            kind="group",
            subtitle="24 nodes",
            expandable=True,
        )
    )
    out = add(_node("out:logits", "logits", "io", x0, y, ["float32[1×1000]"], kind="output"))
    edges = [
        _link(inp, conv, "input", "1×3×224×224"),
        _link(conv, bn, "c0", "1×64×112×112"),
        _link(bn, relu, "b0", "1×64×112×112"),
        _link(relu, pool, "r0", "1×64×112×112"),
        _link(relu, side, "r0", "1×64×112×112"),
        _link(pool, add_, "p0", "1×64×56×56"),
        _link(side, add_, "s0", "1×64×56×56"),
        _link(add_, loop, "a0", "1×64×56×56"),
        _link(loop, q, "l0", ""),
        _link(q, custom, "q0", "1×64×56×56"),
        _link(custom, coll, "f0", "1×2048"),
        _link(coll, out, "logits", "1×1000"),
    ]
    back_pts = [
        (q.x + q.width, q.y + q.height / 2),
        (q.x + q.width + 40, q.y),
        (loop.x + loop.width + 40, loop.y + loop.height),
        (loop.x + loop.width, loop.y + 10),
    ]
    edges.append(Edge(q.id, loop.id, "state", "", back_pts, back=True))
    height = out.y + out.height + 20.0
    return Layout("TB", 700.0, height, boxes, [group], edges)


def grid_layout(n: int, columns: int = 0) -> Layout:
    """``n`` boxes on a grid, each linked to the one below: a big, cheap test drawing."""
    cats = ("conv", "activation", "norm", "pool", "shape", "math", "control", "quant", "other")
    columns = columns or max(1, int(n**0.5))
    boxes = []
    for i in range(n):
        c, r = i % columns, i // columns
        boxes.append(
            Box(
                f"n{i}",
                "node",
                c * 180.0,
                r * 70.0,
                140.0,
                36.0,
                "Conv",
                f"node_{i}",
                ["k = 3"],
                cats[i % len(cats)],
            )
        )
    edges = []
    for i in range(n - columns):
        a, b = boxes[i], boxes[i + columns]
        edges.append(Edge(a.id, b.id, f"v{i}", "1×8", [(a.x + 70, a.y + 36), (b.x + 70, b.y)]))
    rows = (n + columns - 1) // columns
    return Layout("TB", columns * 180.0, rows * 70.0, boxes, [], edges)


class RecordingSurface(Surface):
    """Keeps every call as ``(name, args)``: lets tests count text or boxes drawn."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def count(self, name: str) -> int:
        return sum(1 for call, _ in self.calls if call == name)

    def texts(self) -> list[str]:
        return [args[2] for call, args in self.calls if call == "text"]

    def begin_item(self, item_id: str, kind: str, name: str = "", op_type: str = "") -> None:
        self.calls.append(("begin_item", (item_id, kind, name, op_type)))

    def end_item(self) -> None:
        self.calls.append(("end_item", ()))

    def rect(self, x, y, w, h, fill, stroke) -> None:
        self.calls.append(("rect", (x, y, w, h, fill, stroke)))

    def rounded_rect(self, x, y, w, h, radius, fill, stroke) -> None:
        self.calls.append(("rounded_rect", (x, y, w, h, radius, fill, stroke)))

    def path(self, start, segments, stroke) -> None:
        self.calls.append(("path", (start, list(segments), stroke)))

    def polygon(self, points, fill, stroke=None) -> None:
        self.calls.append(("polygon", (list(points), fill, stroke)))

    def text(self, x, y, text, font, color, anchor="start") -> None:
        self.calls.append(("text", (x, y, text, font, color, anchor)))

    def rects(self, boxes, fill, stroke) -> None:
        self.calls.append(("rects", (list(boxes), fill, stroke)))

    def lines(self, segments, stroke) -> None:
        self.calls.append(("lines", (segments.tolist(), stroke)))


def edge_labels_drawn(painter: GraphPainter,
                      area: tuple[float, float, float, float] | None
                      ) -> set[tuple[str, str, float, float]]:
    """(edge item, text, x, baseline) of every edge label ``painter`` draws in ``area``
    at 1:1 (None: everything): what a screen's views and an export are compared by."""
    rec = RecordingSurface()
    painter.paint(rec, area, 1.0)
    out, item = set(), ("", "")
    for name, args in rec.calls:
        if name == "begin_item":
            item = (args[0], args[1])
        elif name == "text" and item[1] == "edge-label":
            out.add((item[0], args[2], args[0], args[1]))
    return out


def render_svg(
    graph: GraphPainter,
    state: PaintState | None = None,
    margin: float = 20.0,
    transparent: bool = False,
) -> str:
    """The whole drawing as an SVG document (zoom 1, full detail)."""
    surface = SvgSurface()
    graph.paint(surface, None, 1.0, state)
    x, y, w, h = graph.bounds(margin)
    return surface.document(x, y, w, h, None if transparent else graph.theme.canvas)


def render_image(
    graph: GraphPainter,
    scale: float = 1.0,
    state: PaintState | None = None,
    margin: float = 20.0,
    transparent: bool = False,
    max_pixels: int = 200_000_000,
) -> QImage:
    """The whole drawing as an ARGB image at ``scale`` (reduced to stay under ``max_pixels``)."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter

    from onnxstudio.render.qt_surface import QtSurface, qcolor

    bx, by, bw, bh = graph.bounds(margin)
    pixels = bw * bh * scale * scale
    if pixels > max_pixels:
        scale *= (max_pixels / pixels) ** 0.5
    width, height = max(1, int(bw * scale + 0.5)), max(1, int(bh * scale + 0.5))
    image = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent if transparent else qcolor(graph.theme.canvas))
    painter = QPainter(image)
    try:
        painter.scale(scale, scale)
        painter.translate(-bx, -by)
        graph.paint(QtSurface(painter), None, scale, state)
    finally:
        painter.end()
    return image
