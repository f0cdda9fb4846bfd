"""Pick the format from the file name and dispatch one export; the single entry point.

``export_layout`` is what the CLI and the GUI worker call. DOT, JSON and SVG never import
Qt; PNG and PDF import the QPainter backend lazily. Importing this module loads no layout,
model or numpy: the CLI export picks the format and starts its shape-inference fork
before those imports.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from onnxstudio.errors import ExportError
from onnxstudio.export.atomic import atomic_write, check_destination, protected_paths
from onnxstudio.export.options import (
    FORMATS,
    CancelFn,
    ExportCancelled,
    ExportOptions,
    ExportResult,
    Format,
    ProgressFn,
    title_block_for,
)

if TYPE_CHECKING:
    from onnxstudio.layout.types import Layout
    from onnxstudio.model.graph import Model

EXTENSIONS: dict[str, Format] = {
    ".svg": "svg", ".png": "png", ".pdf": "pdf", ".dot": "dot", ".gv": "dot", ".json": "json",
}
DESCRIPTIONS: dict[Format, str] = {
    "svg": "SVG vector image", "png": "PNG image", "pdf": "PDF document",
    "dot": "Graphviz DOT source", "json": "Layout as JSON",
}
# SVG is written as text by render's own writer: a CLI export of it skips the 0.3 s of
# importing PySide6 and starting a QGuiApplication.
QT_FORMATS: frozenset[Format] = frozenset({"png", "pdf"})


def format_for_path(path: str | Path, explicit: str | None = None) -> Format:
    """The explicit format if given, else the one the extension names."""
    if explicit:
        fmt = explicit.lower().lstrip(".")
        if fmt not in FORMATS:
            raise ExportError(f"unknown format {explicit!r} (use {', '.join(FORMATS)})")
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix not in EXTENSIONS:
        shown = suffix or "no extension"
        raise ExportError(f"{Path(path).name}: cannot tell the format from {shown} "
                          f"(use .svg, .png, .pdf, .dot or .json, or --format)")
    return EXTENSIONS[suffix]


def needs_qt(fmt: Format) -> bool:
    return fmt in QT_FORMATS


def _check_cancel(cancel: CancelFn | None) -> None:
    if cancel is not None and cancel():
        raise ExportCancelled()


def export_layout(layout: Layout, model: Model | None, path: str | Path,
                  options: ExportOptions | None = None, progress: ProgressFn | None = None,
                  cancel: CancelFn | None = None) -> ExportResult:
    """Write ``layout`` to ``path``; raises ExportError (ExportCancelled on cancel).

    PNG/PDF need a QGuiApplication to exist (fonts); the caller creates it.
    """
    options = options or ExportOptions()
    options.validate()
    fmt = format_for_path(path, options.format)
    protect = protected_paths(model)
    dest = check_destination(path, protect)
    _check_cancel(cancel)
    result = ExportResult(path=dest, format=fmt, files=[dest])
    if fmt == "json":
        from onnxstudio.export.region import crop_layout
        from onnxstudio.layout.serialize import layout_to_dict

        data = layout_to_dict(crop_layout(layout, options))
        atomic_write(dest, json.dumps(data, ensure_ascii=False), protect)
    elif fmt == "dot":
        from onnxstudio.export.dot import layout_to_dot
        from onnxstudio.export.region import crop_layout
        from onnxstudio.render.theme import theme_named

        name = model.graph.name if model is not None and model.graph.name else "model"
        title = None
        if options.title_block:
            block = title_block_for(model, options.date)
            title = [block.title, *block.lines()]
        text = layout_to_dot(crop_layout(layout, options), name, theme_named(options.theme_name()),
                             title)
        atomic_write(dest, text, protect)
    elif fmt == "png":
        from onnxstudio.export.raster import export_png

        export_png(layout, model, dest, options, result, protect, progress, cancel)
    elif fmt == "svg":
        from onnxstudio.export.svg import export_svg

        export_svg(layout, model, dest, options, result, protect, progress, cancel)
    else:
        from onnxstudio.export.pdf import export_pdf

        export_pdf(layout, model, dest, options, result, protect, progress, cancel)
    if progress is not None and fmt in ("json", "dot"):
        progress(1, 1)
    return result
