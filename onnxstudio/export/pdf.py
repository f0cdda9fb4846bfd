"""PDF export through QPdfWriter and the QPainter surface: vector, text kept as text.

One page sized to the diagram, or, on request, the diagram spread over pages of a paper
size. The one Qt module of export/ besides raster.py.
"""

from __future__ import annotations

import ctypes
import functools
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QMarginsF, QPointF, QRectF, QSizeF
from PySide6.QtGui import QFont, QPageLayout, QPageSize, QPainter, QPdfWriter

from onnxstudio.errors import ExportError
from onnxstudio.export.atomic import atomic_path
from onnxstudio.export.options import (
    CancelFn,
    ExportCancelled,
    ExportOptions,
    ExportResult,
    ProgressFn,
    Rect,
)
from onnxstudio.export.sheet import (
    PageGrid,
    Sheet,
    item_count,
    occupied,
    paint_state,
    plan_sheet,
)
from onnxstudio.export.surfaces import WatchSurface
from onnxstudio.render.qt_surface import QtSurface, qcolor
from onnxstudio.render.scene_painter import GraphPainter

if TYPE_CHECKING:
    from onnxstudio.layout.types import Layout
    from onnxstudio.model.graph import Model

PT_PER_UNIT = 72.0 / 96.0  # one layout unit is one CSS pixel, 1/96 inch
MAX_PAGE_PT = 14_400.0  # 200 in: the largest page PDF viewers (Acrobat) accept
PAGE_MARGIN_MM = 10.0
MIN_PRINT_SCALE = 0.6  # below this, text gets too small on paper: tile across instead
PAGE_OVERLAP = 24.0  # layout units repeated on neighbouring pages, so nothing is lost at cuts


def _paper(name: str) -> QPageSize:
    ids = {"A4": QPageSize.PageSizeId.A4, "A3": QPageSize.PageSizeId.A3,
           "A2": QPageSize.PageSizeId.A2, "Letter": QPageSize.PageSizeId.Letter,
           "Legal": QPageSize.PageSizeId.Legal, "Tabloid": QPageSize.PageSizeId.Tabloid}
    return QPageSize(ids[name])


def export_pdf(layout: Layout, model: Model | None, dest: Path, options: ExportOptions,
               result: ExportResult, protect: list[Path], progress: ProgressFn | None = None,
               cancel: CancelFn | None = None) -> None:
    sheet = plan_sheet(layout, model, options)
    graph = GraphPainter(layout, sheet.theme)
    state = paint_state(options, layout, model)
    with atomic_path(dest, protect) as tmp:
        writer = QPdfWriter(str(tmp))
        writer.setCreator("onnxstudio")
        writer.setTitle(sheet.title.title if sheet.title else dest.stem)
        writer.setResolution(72)  # painter units are points
        if options.paginate is None:
            fit = one_page_fit(sheet)
            unit = PT_PER_UNIT * fit
            # PDF pages are whole points: round up and let the background fill the rest.
            page_w, page_h = math.ceil(sheet.width * unit), math.ceil(sheet.height * unit)
            writer.setPageSize(QPageSize(QSizeF(page_w, page_h), QPageSize.Unit.Point, "",
                                         QPageSize.SizeMatchPolicy.ExactMatch))
            writer.setPageMargins(QMarginsF(0, 0, 0, 0), QPageLayout.Unit.Point)
            if fit < 1.0:
                result.notices.append(
                    f"the diagram is {max(sheet.width, sheet.height) * PT_PER_UNIT / 72:,.0f} "
                    "in long, "
                    f"over the 200 in page limit of PDF viewers; drawn at {fit:.0%} on one "
                    "page (vector: zoom in for detail), or paginate onto paper")
            windows: list[Rect] = [(0.0, 0.0, sheet.width, sheet.height)]
            content = QRectF(0, 0, page_w, page_h)
        else:
            pages = plan_pages(layout, sheet, options, options.paginate)
            writer.setPageLayout(pages.page)
            windows, unit, content = pages.windows, pages.unit, pages.content
        painter = QPainter()
        if not painter.begin(writer):
            raise ExportError(f"{dest.name}: the PDF writer could not start")
        total = item_count(layout) * len(windows) + 1
        try:
            for n, (wx, wy, ww, wh) in enumerate(windows):
                if n:
                    writer.newPage()
                if cancel is not None and cancel():
                    raise ExportCancelled()
                painter.save()
                painter.setClipRect(content)
                painter.translate(content.x(), content.y())
                painter.scale(unit, unit)
                painter.translate(-wx, -wy)
                painter.fillRect(QRectF(wx, wy, ww + 2 / unit, wh + 2 / unit),
                                 qcolor(sheet.theme.canvas))
                surface = QtSurface(painter)
                if sheet.title is not None and wy < sheet.margin + sheet.band:
                    sheet.paint_title(surface)
                if sheet.clip:
                    painter.setClipRect(QRectF(*sheet.diagram_rect()))
                painter.translate(sheet.dx, sheet.dy)
                watch = WatchSurface(surface, progress, cancel, base=n * item_count(layout),
                                     total=total)
                graph.paint(watch, sheet.layout_rect((wx, wy, ww, wh)), max(unit, 1.0), state)
                painter.restore()
                if len(windows) > 1:
                    _page_number(painter, writer, n + 1, len(windows), sheet)
        finally:
            _end_without_gil(painter)
    if progress is not None:
        progress(total, total)
    result.pages = len(windows)
    rect = writer.pageLayout().fullRect(QPageLayout.Unit.Point)
    result.size = (rect.width(), rect.height())


def _end_without_gil(painter: QPainter) -> None:
    """``painter.end()``, which writes the whole PDF (BERT-96's one page: ~1 s of zlib),
    with the GIL released: PySide holds it through the call, so the window, waiting for
    the GIL, froze for the whole write. Through ctypes, which releases it, where the
    symbol is found (Linux's Qt); ``painter.end()`` elsewhere."""
    end = _native_end()
    if end is None:
        painter.end()
        return
    (address,) = shiboken6.getCppPointer(painter)
    end(address)


@functools.cache
def _native_end() -> Callable[[int], bool] | None:
    if not hasattr(os, "RTLD_NOLOAD"):
        return None
    try:  # only the Qt already loaded (NOLOAD): never a second copy of Qt
        qt_gui = ctypes.CDLL("libQt6Gui.so.6", mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        function = qt_gui["_ZN8QPainter3endEv"]  # QPainter::end(), Itanium C++ ABI
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_void_p]
    function.restype = ctypes.c_bool
    return function


@dataclass(frozen=True)
class PagePlan:
    """Pages of a paper size: the page layout, the sheet windows shown (only those with
    something on them) and the points per layout unit."""

    page: QPageLayout
    windows: list[Rect]
    unit: float
    content: QRectF


def plan_pages(layout: Layout, sheet: Sheet, options: ExportOptions, paper: str) -> PagePlan:
    """Pages of ``paper``: fit the width if text stays readable, else tile across; a page
    with nothing on it is left out. Decided before writing, so the dialog can say it."""
    landscape = options.landscape if options.landscape is not None else (
        sheet.width > sheet.height)
    orientation = (QPageLayout.Orientation.Landscape if landscape
                   else QPageLayout.Orientation.Portrait)
    margins = QMarginsF(*(PAGE_MARGIN_MM,) * 4)
    page = QPageLayout(_paper(paper), orientation, margins, QPageLayout.Unit.Millimeter)
    content = page.paintRect(QPageLayout.Unit.Point)
    content.setHeight(content.height() - 14)  # room for the page number
    unit = min(PT_PER_UNIT, content.width() / sheet.width)
    unit = max(unit, MIN_PRINT_SCALE * PT_PER_UNIT)
    win_w, win_h = content.width() / unit, content.height() / unit
    step_w, step_h = win_w - PAGE_OVERLAP, win_h - PAGE_OVERLAP
    cols = 1 if sheet.width <= win_w else math.ceil((sheet.width - PAGE_OVERLAP) / step_w)
    rows = 1 if sheet.height <= win_h else math.ceil((sheet.height - PAGE_OVERLAP) / step_h)
    grid = PageGrid(win_w, win_h, step_w, step_h, cols, rows)
    return PagePlan(page, occupied(layout, sheet, grid), unit,
                    QRectF(0, 0, content.width(), content.height()))


def one_page_fit(sheet: Sheet) -> float:
    """The shrink of a one-page PDF: 1, or less to stay within viewers' 200 in."""
    return min(1.0, MAX_PAGE_PT / (max(sheet.width, sheet.height) * PT_PER_UNIT))


def one_page_readable(sheet: Sheet) -> bool:
    """Whether one page keeps text printable (else pages of paper are the default)."""
    return one_page_fit(sheet) >= MIN_PRINT_SCALE


def _page_number(painter: QPainter, writer: QPdfWriter, page: int, pages: int,
                 sheet: Sheet) -> None:
    rect = writer.pageLayout().paintRect(QPageLayout.Unit.Point)
    font = QFont("DejaVu Sans")
    font.setPixelSize(8)
    painter.setFont(font)
    painter.setPen(qcolor(sheet.theme.group_count))
    label = f"{sheet.title.title + ' — ' if sheet.title else ''}page {page} of {pages}"
    painter.drawText(QPointF(0, rect.height() - 2), label)
