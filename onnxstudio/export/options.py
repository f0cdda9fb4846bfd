"""What the user chose for one export, and the title-block facts taken from the model.

Qt-free so the CLI, the GUI dialog and tests build the same object.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from onnxstudio.errors import Cancelled, ExportError

if TYPE_CHECKING:
    from onnxstudio.model.graph import Model
    from onnxstudio.render.overlay import OverlayData

Format = Literal["svg", "png", "pdf", "dot", "json"]
Region = Literal["whole", "visible", "selection"]
ThemeChoice = Literal["light", "dark", "current"]
ExpandChoice = Literal["current", "all", "collapsed"]
Rect = tuple[float, float, float, float]  # x, y, width, height in layout units

FORMATS: tuple[Format, ...] = ("svg", "png", "pdf", "dot", "json")
PAPER_SIZES: tuple[str, ...] = ("A4", "A3", "A2", "Letter", "Legal", "Tabloid")

ProgressFn = Callable[[int, int], None]
"""Called with (done, total) work units; total is stable within one export."""
CancelFn = Callable[[], bool]
"""Polled between work units; returning True stops the export (nothing is written)."""


class ExportCancelled(ExportError, Cancelled):
    """The user cancelled; the destination file was left as it was."""

    def __init__(self) -> None:
        super().__init__("export cancelled")


@dataclass
class ExportOptions:
    """Everything that shapes an exported file apart from the layout itself."""

    format: Format | None = None  # None: taken from the destination's extension
    scale: float = 2.0  # PNG pixels per layout unit (2 = sharp on high-DPI and in print)
    region: Region = "whole"
    visible_rect: Rect | None = None  # the view's visible area, for region "visible"
    selection: Sequence[str] = ()  # box ids, for region "selection"
    direction: Literal["TB", "LR"] | None = None  # None: keep the view's / default
    expand: ExpandChoice = "current"
    theme: ThemeChoice = "light"
    current_theme: str = "light"  # the app's theme, used when theme == "current"
    title_block: bool = False
    show_names: bool = False  # node names under op types, as the view's toggle
    paginate: str | None = None  # PDF paper size ("A4", ...); None: one page sized to fit
    landscape: bool | None = None  # paginated PDF orientation; None: follow the diagram
    margin: float = 24.0  # layout units of empty border around the diagram
    tile: bool = False  # PNG too large for one image: write tiles instead of shrinking
    date: _dt.date | None = None  # title-block date; None: today
    overlay: OverlayData | None = None  # the canvas' heatmap / divergence colours, if kept

    def theme_name(self) -> str:
        return self.current_theme if self.theme == "current" else self.theme

    def validate(self) -> None:
        """Reject nonsense early with a message fit for a CLI line or a dialog."""
        if not (self.scale > 0 and self.scale <= 64):
            raise ExportError(f"scale must be between 0 and 64 (got {self.scale:g})")
        if self.format is not None and self.format not in FORMATS:
            raise ExportError(f"unknown format {self.format!r} (use {', '.join(FORMATS)})")
        if self.region == "visible" and self.visible_rect is None:
            raise ExportError("no visible region was given")
        if self.region == "selection" and not self.selection:
            raise ExportError("nothing is selected")
        if self.paginate is not None and self.paginate not in PAPER_SIZES:
            raise ExportError(
                f"unknown paper size {self.paginate!r} (use {', '.join(PAPER_SIZES)})"
            )


@dataclass
class TitleBlock:
    """Facts printed above the diagram so a figure can be traced to its model."""

    title: str
    rows: list[tuple[str, str]] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [f"{key}: {value}" for key, value in self.rows]


def _opset_text(opsets: dict[str, int]) -> str:
    names = {"": "ai.onnx"}
    return ", ".join(f"{names.get(d, d)} {v}" for d, v in sorted(opsets.items())) or "none"


def title_block_for(model: Model | None, date: _dt.date | None = None,
                    node_count: int | None = None) -> TitleBlock:
    """Model file, producer, opsets and date; tolerant of a missing model (tests, previews)."""
    day = (date or _dt.date.today()).isoformat()
    if model is None:
        return TitleBlock("ONNX model", [("Date", day)])
    producer = " ".join(p for p in (model.producer_name, model.producer_version) if p)
    rows = [
        ("File", str(model.path.name)),
        ("Producer", producer or "unknown"),
        ("Opsets", _opset_text(model.opset_imports)),
        ("Nodes", f"{node_count if node_count is not None else model.graph.node_count_total():,}"),
        ("Date", day),
    ]
    return TitleBlock(model.graph.name or model.path.stem, rows)


@dataclass
class ExportResult:
    """What was written, and anything the user should be told (scale reduced, ...)."""

    path: Path
    format: Format
    size: tuple[float, float] = (0.0, 0.0)  # pixels (PNG), points (PDF), units (SVG)
    pages: int = 1
    files: list[Path] = field(default_factory=list)  # every file written (tiles)
    notices: list[str] = field(default_factory=list)
