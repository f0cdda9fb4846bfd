"""What the export dialog decides before anything is written: a tall graph is exported
the way it can be read (PNG tiles, PDF pages of paper, the direction that fits), and
the dialog says so.

BERT-12 as one PNG was 440 × 16,384 px with no readable text, and as one PDF page a
ribbon with 0.5 pt text; the defaults now switch to tiles and pages when that would
happen, and the dialog's lines say what will be written.
"""

from __future__ import annotations

from onnxstudio.export.options import ExportOptions
from onnxstudio.export.pdf import PT_PER_UNIT, one_page_fit, one_page_readable, plan_pages
from onnxstudio.export.raster import png_size
from onnxstudio.export.sheet import plan_sheet
from onnxstudio.layout.coords import NODE_SEP, RANK_SEP
from onnxstudio.layout.sizing import TITLE_FONT_PX
from onnxstudio.layout.types import Direction, Layout
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


def limited(layout: Layout, model: Model | None, options: ExportOptions) -> bool:
    """Whether one image or one page has to shrink the drawing to stay within its
    longest side: only then does the direction change how large the text comes out."""
    if options.format == "png":
        return png_size(layout, model, ExportOptions(**{**vars(options), "tile": False})
                        ).notice is not None
    return options.format == "pdf" and one_page_fit(plan_sheet(layout, model, options)) < 1.0


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


TURN_GAIN = 1.25  # the other direction is offered when its longest side is this much shorter
NAMES: dict[Direction, str] = {"TB": "top to bottom", "LR": "left to right"}


def turned_extent(layout: Layout) -> tuple[float, float]:
    """(width, height) the other direction would roughly take, from this layout's layers
    (boxes sharing a rank coordinate): layers laid side by side, each as long as its
    boxes stacked. No layout is run: the dialog opens at once, whatever the graph."""
    along = "y" if layout.direction == "TB" else "x"
    layers: dict[float, tuple[float, float, int]] = {}  # rank -> (depth, breadth, boxes)
    for b in layout.boxes:
        rank = round(b.y if along == "y" else b.x)
        depth, across = (b.width, b.height) if along == "y" else (b.height, b.width)
        d, s, n = layers.get(rank, (0.0, 0.0, 0))
        layers[rank] = (max(d, depth), s + across, n + 1)
    if not layers:
        return layout.height, layout.width
    ranks = sum(d for d, _s, _n in layers.values()) + RANK_SEP * (len(layers) - 1)
    breadth = max(s + NODE_SEP * (n - 1) for _d, s, n in layers.values())
    return (ranks, breadth) if along == "y" else (breadth, ranks)


def direction_advice(layout: Layout) -> tuple[Direction | None, str]:
    """The direction that fits better, if the other one does, and one line for the
    dialog. An image or one page is bounded by its longest side, so the direction with
    the shorter longest side gets the larger text: a wide fan-out reads better turned,
    while a tall chain of operators stays top to bottom (boxes are wider than tall, so
    left to right makes it a longer ribbon)."""
    now = max(layout.width, layout.height)
    turned = max(turned_extent(layout))
    other: Direction = "LR" if layout.direction == "TB" else "TB"
    if now <= 0 or turned <= 0:
        return None, ""
    if turned * TURN_GAIN <= now:
        return other, (f"{NAMES[other].capitalize()} chosen: it fits, with text about "
                       f"{now / turned:.1f}× larger than {NAMES[layout.direction]}")
    kept = f"{NAMES[layout.direction].capitalize()} kept: {NAMES[other]} would be"
    if turned < now * TURN_GAIN:
        return None, f"{kept} about as long"
    return None, f"{kept} about {turned / now:.1f}× longer"
