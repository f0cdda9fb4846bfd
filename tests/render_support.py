"""Test scaffolding for render/: whole-drawing renderers (the product paints through
export/ and the canvas instead). Importing this module does not import Qt
(``render_image`` imports it when called).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from onnxstudio.render.scene_painter import GraphPainter, PaintState
from onnxstudio.render.svg_surface import SvgSurface

if TYPE_CHECKING:
    from PySide6.QtGui import QImage


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
