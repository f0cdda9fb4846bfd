"""PNG export at any scale, always of the whole sheet, never silently cropped.

An image side is capped at MAX_SIDE pixels (viewers and GPUs choke beyond ~16k); a
larger diagram is either drawn at a reduced scale, with a notice for the user, or split
into tiles at the requested scale. Memory stays bounded either way: the image is painted
in horizontal strips that are streamed into the PNG encoder as they are finished.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter

from onnxstudio.export.atomic import atomic_path
from onnxstudio.export.options import (
    CancelFn,
    ExportCancelled,
    ExportOptions,
    ExportResult,
    ProgressFn,
)
from onnxstudio.export.pngstream import PngStreamWriter
from onnxstudio.export.sheet import Sheet, paint_state, plan_sheet
from onnxstudio.export.surfaces import WatchSurface
from onnxstudio.render.qt_surface import QtSurface, qcolor
from onnxstudio.render.scene_painter import GraphPainter, PaintState, lod

if TYPE_CHECKING:
    from onnxstudio.layout.types import Layout
    from onnxstudio.model.graph import Model

MAX_SIDE = 16_384  # pixels per image side
STRIP_BYTES = 32 << 20  # one strip's QImage: bounds memory whatever the image size
SCREEN_DPI = 96.0  # one layout unit at scale 1 is one CSS pixel


@dataclass(frozen=True)
class Tile:
    """One output image: its pixel window in the whole picture, and where it goes."""

    row: int
    col: int
    x: int
    y: int
    width: int
    height: int


@dataclass(frozen=True)
class RasterPlan:
    scale: float  # the scale actually used
    width: int  # the whole picture, pixels
    height: int
    tiles: tuple[Tile, ...]
    notice: str | None  # set when the requested scale could not be honoured


def plan_raster(sheet: Sheet, options: ExportOptions, max_side: int = MAX_SIDE) -> RasterPlan:
    """Pixel size and tiling for the sheet at the requested scale, within ``max_side``."""
    scale = options.scale
    want_w, want_h = sheet.width * scale, sheet.height * scale
    notice = None
    if max(want_w, want_h) > max_side and not options.tile:
        fitted = max_side / max(sheet.width, sheet.height)
        fitted = math.floor(fitted * 1e6) / 1e6  # never round up past the cap
        w, h = max(1, round(sheet.width * fitted)), max(1, round(sheet.height * fitted))
        notice = (f"the diagram would be {round(want_w):,} × {round(want_h):,} px at scale "
                  f"{scale:g}, over the {max_side:,} px limit per side; exported whole at "
                  f"scale {fitted:.3g} ({w:,} × {h:,} px"
                  f"{', too small for text' if not lod(fitted)[1] else ''}). For full detail "
                  "use SVG or PDF, or tile the PNG")
        scale = fitted
    width, height = max(1, round(sheet.width * scale)), max(1, round(sheet.height * scale))
    cols, rows = math.ceil(width / max_side), math.ceil(height / max_side)
    tiles = tuple(
        Tile(r, c, c * max_side, r * max_side,
             min(max_side, width - c * max_side), min(max_side, height - r * max_side))
        for r in range(rows) for c in range(cols)
    )
    if len(tiles) > 1:
        notice = (f"the diagram is {width:,} × {height:,} px at scale {scale:g}; written as "
                  f"{rows} × {cols} tiles of at most {max_side:,} px")
    return RasterPlan(scale, width, height, tiles, notice)


def png_size(layout: Layout, model: Model | None, options: ExportOptions) -> RasterPlan:
    """What a PNG export would produce, without painting: for the dialog and tests."""
    return plan_raster(plan_sheet(layout, model, options), options, MAX_SIDE)


def tile_path(dest: Path, tile: Tile) -> Path:
    return dest.with_name(f"{dest.stem}-r{tile.row + 1}c{tile.col + 1}{dest.suffix}")


def _strip_rows(width: int) -> int:
    return max(16, min(2048, STRIP_BYTES // (4 * max(width, 1))))


def _paint_strip(image: QImage, graph: GraphPainter, sheet: Sheet, state: PaintState,
                 scale: float, x0: int, y0: int, rows: int, cancel: CancelFn | None) -> None:
    image.fill(qcolor(sheet.theme.canvas))
    painter = QPainter(image)
    try:
        painter.translate(-x0, -y0)
        painter.scale(scale, scale)
        surface = QtSurface(painter)
        window = (x0 / scale, y0 / scale, image.width() / scale, rows / scale)
        if sheet.title is not None and window[1] < sheet.margin + sheet.band:
            sheet.paint_title(surface)
        if sheet.clip:
            painter.setClipRect(QRectF(*sheet.diagram_rect()))
        painter.translate(sheet.dx, sheet.dy)
        watch = WatchSurface(surface, None, cancel, every=500)
        graph.paint(watch, sheet.layout_rect(window), scale, state)
    finally:
        painter.end()


def _write_tile(stream: object, graph: GraphPainter, sheet: Sheet, state: PaintState,
                plan: RasterPlan, tile: Tile, done: int, total: int,
                progress: ProgressFn | None, cancel: CancelFn | None) -> int:
    writer = PngStreamWriter(stream, tile.width, tile.height,  # type: ignore[arg-type]
                             dpi=SCREEN_DPI * plan.scale)
    strip = _strip_rows(tile.width)
    image = QImage(tile.width, min(strip, tile.height), QImage.Format.Format_ARGB32_Premultiplied)
    if image.isNull():
        raise MemoryError(f"cannot allocate a {tile.width} px wide strip")
    for top in range(0, tile.height, strip):
        if cancel is not None and cancel():
            raise ExportCancelled()
        rows = min(strip, tile.height - top)
        _paint_strip(image, graph, sheet, state, plan.scale, tile.x, tile.y + top, rows, cancel)
        bgra = np.frombuffer(image.constBits(), dtype=np.uint8)
        bgra = bgra.reshape(image.height(), image.bytesPerLine() // 4, 4)
        writer.write_rows(bgra[:rows, : tile.width, 2::-1])
        done += 1
        if progress is not None:
            progress(min(done, total - 1), total)
    writer.close()
    return done


def export_png(layout: Layout, model: Model | None, dest: Path, options: ExportOptions,
               result: ExportResult, protect: list[Path], progress: ProgressFn | None = None,
               cancel: CancelFn | None = None) -> None:
    """Write the PNG (or its tiles); fills ``result`` with size, files and notices."""
    sheet = plan_sheet(layout, model, options)
    plan = plan_raster(sheet, options, MAX_SIDE)
    graph = GraphPainter(layout, sheet.theme)
    state = paint_state(options, layout, model)
    total = sum(math.ceil(t.height / _strip_rows(t.width)) for t in plan.tiles) + 1
    paths = [dest] if len(plan.tiles) == 1 else [tile_path(dest, t) for t in plan.tiles]
    done = 0
    with contextlib.ExitStack() as stack:  # every tile lands, or none does
        for tile, path in zip(plan.tiles, paths, strict=True):
            tmp = stack.enter_context(atomic_path(path, protect))
            with open(tmp, "wb") as stream:
                done = _write_tile(stream, graph, sheet, state, plan, tile, done, total,
                                   progress, cancel)
    if progress is not None:
        progress(total, total)
    result.size = (plan.width, plan.height)
    result.files = paths
    result.path = paths[0] if len(paths) == 1 else dest
    if plan.notice:
        result.notices.append(plan.notice)
