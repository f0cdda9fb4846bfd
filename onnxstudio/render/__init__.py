"""Render layer: draws a laid-out graph for the canvas and for every export.

API (stable; export/ and ui/ build on it):

- ``theme``: ``Theme``, ``LIGHT``, ``DARK``, ``theme_named(name)``.
- ``drawing``: ``Surface`` (the primitives), ``Stroke``, ``Font``.
- ``scene_painter``: ``GraphPainter(layout, theme).paint(surface, visible_rect, scale,
  state)`` and ``PaintState`` (selection, hover, names on/off, edge labels on/off).
- ``hit_index``: ``GraphIndex(layout)`` — ``box_at``, ``boxes_in``, ``edge_near``,
  ``group_label_at``, ``neighbours``; Qt-free numpy.
- ``qt_surface``: ``QtSurface(QPainter)`` for the canvas, PNG and PDF.
- ``svg_surface``: ``SvgSurface`` (Qt-free).
Whole-drawing exports (title block, regions, pages) are ``export/``'s job.

Importing this package does not import Qt; only ``qt_surface`` does.
"""
