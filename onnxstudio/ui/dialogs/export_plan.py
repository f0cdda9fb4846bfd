"""What the export dialog decides before anything is written: a tall graph is exported
the way it can be read (PNG tiles, PDF pages of paper), and the dialog says so.

BERT-12 as one PNG was 440 × 16,384 px with no readable text, and as one PDF page a
ribbon with 0.5 pt text; the defaults now switch to tiles and pages when that would
happen, and the dialog's lines say what will be written.
"""

from __future__ import annotations

from onnxstudio.export.options import ExportOptions
from onnxstudio.export.pdf import PT_PER_UNIT, one_page_fit, one_page_readable, plan_pages
from onnxstudio.export.raster import png_size
from onnxstudio.export.sheet import plan_sheet
from onnxstudio.layout.sizing import TITLE_FONT_PX
from onnxstudio.layout.types import Layout
from onnxstudio.model.graph import Model
from onnxstudio.render.scene_painter import lod

DEFAULT_PAPER = "A4"


def png_needs_tiles(layout: Layout, model: Model | None, options: ExportOptions) -> bool:
    """Whether one image within the side limit would be too small for its text."""
    plan = png_size(layout, model, ExportOptions(**{**vars(options), "tile": False}))
    return plan.notice is not None and not lod(plan.scale)[1]


def pdf_default_paper(layout: Layout, model: Model | None,
                      options: ExportOptions) -> str | None:
    """None (one page) when one page keeps text printable, else ``DEFAULT_PAPER``."""
    sheet = plan_sheet(layout, model, options)
    return None if one_page_readable(sheet) else DEFAULT_PAPER


def pdf_pages_text(layout: Layout, model: Model | None, options: ExportOptions) -> str:
    """One line for the dialog: how many pages, or how small one page's text is."""
    sheet = plan_sheet(layout, model, options)
    if options.paginate is None:
        fit = one_page_fit(sheet)
        points = TITLE_FONT_PX * PT_PER_UNIT * fit
        text = (f"one page of {sheet.width * PT_PER_UNIT * fit / 72:,.1f} × "
                f"{sheet.height * PT_PER_UNIT * fit / 72:,.1f} in")
        return text if one_page_readable(sheet) else (
            f"{text}, its text {points:.1g} pt: too small to read; choose pages of paper")
    pages = plan_pages(layout, sheet, options, options.paginate)
    count = len(pages.windows)
    return (f"{count:,} page{'s' if count != 1 else ''} of {options.paginate}, text at "
            f"{TITLE_FONT_PX * pages.unit:.1f} pt (pages with nothing on them are left out)")
