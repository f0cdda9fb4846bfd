"""Render layer: draws a laid-out graph for the canvas and for every export.

API (stable; export/ and ui/ build on it):

- ``theme``: ``Theme``, ``LIGHT``, ``DARK``, ``theme_named(name)``.
- ``drawing``: ``Surface`` (the primitives), ``Stroke``, ``Font``, ``RecordingSurface``.
- ``scene_painter``: ``GraphPainter(layout, theme).paint(surface, visible_rect, scale,
  state)`` and ``PaintState`` (selection, hover, names on/off, edge labels on/off).
- ``hit_index``: ``GraphIndex(layout)`` — ``box_at``, ``boxes_in``, ``edge_near``,
  ``group_label_at``, ``neighbours``; Qt-free numpy.
- ``qt_surface``: ``QtSurface(QPainter)``, ``render_image(painter, scale) -> QImage``,
  ``render_pdf(painter, path)``.
- ``svg_surface``: ``SvgSurface``, ``render_svg(painter) -> str`` (Qt-free).

Importing this package does not import Qt; only ``qt_surface`` does.
"""
