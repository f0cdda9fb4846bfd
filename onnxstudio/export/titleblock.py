"""The optional title block (model file, producer, opsets, date) drawn above the diagram.

Drawn through the same render ``Surface`` as the graph, so it comes out identical in
SVG, PNG and PDF and uses the theme's colours.
"""

from __future__ import annotations

from onnxstudio.export.options import TitleBlock
from onnxstudio.render.drawing import Font, Stroke, Surface
from onnxstudio.render.text import text_width
from onnxstudio.render.theme import Theme

TITLE_FONT = Font(size=18.0, bold=True)
ROW_FONT = Font(size=12.0)
KEY_FONT = Font(size=12.0, bold=True)
PAD = 12.0
ROW_HEIGHT = 18.0
TITLE_HEIGHT = 26.0
GAP_BELOW = 20.0  # space between the block and the diagram


def block_size(block: TitleBlock) -> tuple[float, float]:
    """Width and height of the drawn block, in layout units (excluding GAP_BELOW)."""
    key_w = max((text_width(k + ":", KEY_FONT) for k, _ in block.rows), default=0.0)
    val_w = max((text_width(v, ROW_FONT) for _, v in block.rows), default=0.0)
    width = max(text_width(block.title, TITLE_FONT), key_w + 10 + val_w) + 2 * PAD
    height = 2 * PAD + TITLE_HEIGHT + ROW_HEIGHT * len(block.rows)
    return width, height


def band_height(block: TitleBlock | None) -> float:
    """Vertical space the block takes above the diagram (0 without a block)."""
    return 0.0 if block is None else block_size(block)[1] + GAP_BELOW


def draw_title_block(surface: Surface, block: TitleBlock, theme: Theme, x: float, y: float,
                     ) -> None:
    """Draw the block with its top-left corner at (x, y)."""
    width, height = block_size(block)
    key_w = max((text_width(k + ":", KEY_FONT) for k, _ in block.rows), default=0.0)
    surface.begin_item("title-block", "title", block.title, "")
    surface.rounded_rect(x, y, width, height, 4.0, theme.node_body,
                         Stroke(theme.group_border, 1.0))
    baseline = y + PAD + TITLE_FONT.size
    surface.text(x + PAD, baseline, block.title, TITLE_FONT, theme.node_body_text)
    baseline += TITLE_HEIGHT - TITLE_FONT.size + ROW_FONT.size + 4
    for key, value in block.rows:
        surface.text(x + PAD, baseline, key + ":", KEY_FONT, theme.group_label)
        surface.text(x + PAD + key_w + 10, baseline, value, ROW_FONT, theme.node_body_text)
        baseline += ROW_HEIGHT
    surface.end_item()
