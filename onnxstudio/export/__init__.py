"""Export layer: the laid-out graph as SVG, PNG, PDF (through render/), DOT and JSON.

Entry points (importing this package does not import Qt):

- ``formats.export_layout(layout, model, path, options, progress, cancel) -> ExportResult``
  writes one file atomically; the format follows the extension unless
  ``options.format`` says otherwise. PNG/PDF need a QGuiApplication
  (``qtapp.ensure_gui_app()`` makes a headless one).
- ``options.ExportOptions``: scale, region (whole/visible/selection), expand state,
  direction, theme, title block, PDF paper, PNG tiling.
- ``build.layout_for_export(model, options, current_state)``: the layout to draw.
- ``raster.png_size(layout, model, options)``: the PNG's pixel size before painting.
- ``atomic``: temp file + fsync + rename; never writes over the model or its data.
"""
