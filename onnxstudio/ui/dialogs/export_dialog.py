"""File → Export…: choose a file and options, then export in the background with Cancel.

The main window calls :func:`start_export`. The flow: a save dialog whose filters name
the formats (the chosen extension decides the format), a confirmation before replacing
an existing file, an options dialog (scale, region, theme, title block, paper...), then
the export itself on a worker thread behind a progress dialog. The last folder and
format are remembered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QRectF, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QMessageBox,
    QProgressDialog,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.errors import ExportError
from onnxstudio.export.formats import (
    DESCRIPTIONS,
    export_layout,
    format_for_path,
)
from onnxstudio.export.options import (
    PAPER_SIZES,
    ExportOptions,
    ExportResult,
    Rect,
)
from onnxstudio.layout.types import Layout
from onnxstudio.model.graph import Model
from onnxstudio.ui.dialogs import export_plan
from onnxstudio.ui.dialogs.export_destination import (
    LAST_FOLDER_KEY,
    LAST_FORMAT_KEY,
    choose_destination,
    confirm_replace,
)
from onnxstudio.ui.settings import app_settings, store
from onnxstudio.ui.tasks import TaskContext, TaskRunner

LAST_SCALE_KEY = "export/png_scale"

_running: set[ExportFlow] = set()  # flows stay alive until they end, whoever holds them


@dataclass
class ViewSnapshot:
    """What the export takes from the graph view at the moment the user asks."""

    theme: str = "light"
    visible_rect: Rect | None = None
    selection: list[str] = field(default_factory=list)
    show_names: bool = False
    expand_state: Any = None  # layout.state.ExpandState of the tab, when known
    overlay: Any = None  # render.overlay.OverlayData the canvas is coloured by, if any


def snapshot_view(view: Any) -> ViewSnapshot:
    """Read a GraphView (or any object with the same methods) without depending on it."""
    snap = ViewSnapshot()
    if view is None:
        return snap
    theme = getattr(view, "theme", None)
    theme = theme() if callable(theme) else theme
    snap.theme = getattr(theme, "name", theme if isinstance(theme, str) else "light")
    rect = getattr(view, "visible_scene_rect", None)
    if callable(rect):
        r: QRectF = rect()
        snap.visible_rect = (r.x(), r.y(), r.width(), r.height())
    selected = getattr(view, "selected_ids", None)
    if callable(selected):
        snap.selection = list(selected())
    snap.show_names = bool(getattr(view, "show_names", False))
    overlay = getattr(view, "overlay", None)
    shown = overlay() if callable(overlay) else None
    snap.overlay = getattr(shown, "data", None)
    holder: Any = view
    while holder is not None and snap.expand_state is None:  # the tab that owns the view
        snap.expand_state = getattr(holder, "state", None) if hasattr(holder, "relayout") else None
        holder = holder.parent() if hasattr(holder, "parent") else None
    return snap


class ExportOptionsDialog(QDialog):
    """Scale, region, theme, title block and paper for one export to ``path``."""

    def __init__(self, parent: QWidget | None, path: Path, layout: Layout, model: Model | None,
                 view: ViewSnapshot) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export Options")
        self.fmt = format_for_path(path)
        self._layout, self._model, self._view = layout, model, view
        form = QFormLayout()
        form.addRow("File:", QLabel(f"{path.name}  ({DESCRIPTIONS[self.fmt]})"))
        self._add_view_rows(form, layout, view)
        self._add_drawing_rows(form, view)
        self._add_png_rows(form)
        self._add_pdf_rows(form)
        self._advise_direction()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        box = QVBoxLayout(self)
        box.addLayout(form)
        box.addWidget(buttons)

    def _add_view_rows(self, form: QFormLayout, layout: Layout, view: ViewSnapshot) -> None:
        """What is drawn: region, groups, direction and colours (every format)."""
        self.region = QComboBox()
        self.region.addItem("Whole graph", "whole")
        self.region.addItem("Visible area", "visible")
        self.region.addItem(f"Selection ({len(view.selection)} items)", "selection")
        if view.visible_rect is None:
            self._disable_item(self.region, 1)
        if not view.selection:
            self._disable_item(self.region, 2)
        form.addRow("Region:", self.region)

        self.expand = QComboBox()
        self.expand.addItem("As shown", "current")
        self.expand.addItem("Expand all groups", "all")
        self.expand.addItem("Collapse all groups", "collapsed")
        form.addRow("Groups:", self.expand)

        self.direction = QComboBox()
        self.direction.addItem(f"As shown ({layout.direction})", None)
        self.direction.addItem("Top to bottom", "TB")
        self.direction.addItem("Left to right", "LR")
        form.addRow("Direction:", self.direction)
        self.direction_note = QLabel()
        self.direction_note.setWordWrap(True)
        self.direction_note.hide()
        form.addRow("", self.direction_note)

        self.theme = QComboBox()
        self.theme.addItem("Light (for print)", "light")
        self.theme.addItem(f"Current ({view.theme})", "current")
        self.theme.addItem("Dark", "dark")
        form.addRow("Colours:", self.theme)

    def _add_drawing_rows(self, form: QFormLayout, view: ViewSnapshot) -> None:
        """Title block, node names and the canvas overlay: only drawn formats have them."""
        self.title = QCheckBox("Model file, producer, opsets and date above the diagram")
        if self.fmt in ("svg", "png", "pdf"):
            form.addRow("Title block:", self.title)
            self.names = QCheckBox("Show node names under operator types")
            self.names.setChecked(view.show_names)
            form.addRow("Names:", self.names)
        overlay_title = getattr(view.overlay, "title", "") or "overlay"
        self.heat = QCheckBox(f"Keep the canvas' colours ({overlay_title})")
        self.heat.setChecked(True)
        if self.fmt in ("svg", "png", "pdf") and view.overlay is not None:
            form.addRow("Overlay:", self.heat)

    def _advise_direction(self) -> None:
        """An image or one page too long for its text: the other direction when it fits
        better (a wide fan-out turned), said under the Direction box either way."""
        if self.fmt not in ("png", "pdf") or not export_plan.limited(
                self._layout, self._model, self.options()):
            return
        direction, note = export_plan.direction_advice(self._layout)
        if direction is not None:
            self.direction.setCurrentIndex(self.direction.findData(direction))
        self.direction_note.setText(note)
        self.direction_note.setVisible(bool(note))
        update = self._update_size if self.fmt == "png" else self._update_pages
        self.direction.currentIndexChanged.connect(update)
        update()

    def _add_png_rows(self, form: QFormLayout) -> None:
        """Scale (remembered), tiling and the resulting pixel size, updated as they change."""
        self.scale = QDoubleSpinBox()
        self.scale.setRange(0.1, 16.0)
        self.scale.setSingleStep(0.5)
        self.scale.setDecimals(2)
        self.scale.setSuffix(" ×")
        self.scale.setValue(float(str(app_settings().value(LAST_SCALE_KEY, 2.0) or 2.0)))
        self.size_label = QLabel()
        self.size_label.setWordWrap(True)
        self.tile = QCheckBox("Split into tiles instead of reducing the scale")
        if self.fmt == "png":
            form.addRow("Scale:", self.scale)
            form.addRow("", self.tile)
            form.addRow("Size:", self.size_label)
            self.scale.valueChanged.connect(self._update_size)
            self.region.currentIndexChanged.connect(self._update_size)
            self.title.toggled.connect(self._update_size)
            self.tile.toggled.connect(self._update_size)
            # too small to read as one image: tiles by default, said on the Size line
            self.tile.setChecked(export_plan.png_needs_tiles(
                self._layout, self._model, self.options()))
            self._update_size()

    def _add_pdf_rows(self, form: QFormLayout) -> None:
        self.paper = QComboBox()
        self.paper.addItem("One page, sized to the diagram", None)
        for name in PAPER_SIZES:
            self.paper.addItem(f"Pages of {name}", name)
        self.pages_label = QLabel()
        self.pages_label.setWordWrap(True)
        if self.fmt == "pdf":
            form.addRow("Pages:", self.paper)
            form.addRow("", self.pages_label)
            # one page too small to read (a tall graph's ribbon): pages of paper instead
            paper = export_plan.pdf_default_paper(self._layout, self._model, self.options())
            self.paper.setCurrentIndex(max(0, self.paper.findData(paper)))
            for changed in (self.paper.currentIndexChanged, self.region.currentIndexChanged,
                            self.title.toggled):
                changed.connect(self._update_pages)
            self._update_pages()

    @staticmethod
    def _disable_item(combo: QComboBox, index: int) -> None:
        item = combo.model().item(index)  # type: ignore[attr-defined]
        if item is not None:
            item.setEnabled(False)

    def options(self) -> ExportOptions:
        v = self._view
        return ExportOptions(
            format=self.fmt, scale=self.scale.value(), region=self.region.currentData(),
            visible_rect=v.visible_rect, selection=tuple(v.selection),
            direction=self.direction.currentData(), expand=self.expand.currentData(),
            theme=self.theme.currentData(), current_theme=v.theme,
            title_block=self.title.isChecked() and self.fmt in ("svg", "png", "pdf"),
            show_names=self.fmt in ("svg", "png", "pdf") and self.names.isChecked(),
            paginate=self.paper.currentData()
            if self.fmt == "pdf" and hasattr(self, "paper") else None,
            tile=hasattr(self, "tile") and self.tile.isChecked(),
            overlay=v.overlay if self.fmt in ("svg", "png", "pdf") and self.heat.isChecked()
            else None)

    def _update_pages(self, *_: object) -> None:
        try:
            text = export_plan.pdf_pages_text(self._layout, self._model, self.options())
        except ExportError as exc:
            text = str(exc)
        self.pages_label.setText(text + self._turned())

    def _update_size(self, *_: object) -> None:
        from onnxstudio.export.raster import MAX_SIDE, png_size

        chosen = self.direction.currentData()
        if chosen is not None and chosen != self._layout.direction:
            # laid out that way only when exporting: the size is the turned estimate
            w, h = (v * self.scale.value() for v in export_plan.turned_extent(self._layout))
            over = (f"; over the {MAX_SIDE:,} px limit per side, so reduced or tiled"
                    if max(w, h) > MAX_SIDE else "")
            self.size_label.setText(f"about {w:,.0f} × {h:,.0f} px "
                                    f"{export_plan.NAMES[chosen]}{over}")
            return
        try:
            plan = png_size(self._layout, self._model, self.options())
        except ExportError as exc:
            self.size_label.setText(str(exc))
            return
        text = f"{plan.width:,} × {plan.height:,} px"
        if plan.notice:
            text += f" — {plan.notice}"
        self.size_label.setText(text)

    def _turned(self) -> str:
        """The sizes above are measured on the layout shown; a turned one is laid out
        only when exporting, so the lines say which one they describe."""
        chosen = self.direction.currentData()
        if chosen is None or chosen == self._layout.direction:
            return ""
        return (f" (measured {export_plan.NAMES[self._layout.direction]}; "
                f"{export_plan.NAMES[chosen]} is laid out when exporting)")


class ExportFlow(QObject):
    """One export in the background: progress dialog, Cancel, and the outcome shown."""

    finished = Signal(object)  # ExportResult
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, parent: QWidget | None, model: Model | None, layout: Layout,
                 path: Path, options: ExportOptions, view: ViewSnapshot,
                 interactive: bool = True) -> None:
        super().__init__(parent)
        self.parent_widget, self.model, self.layout = parent, model, layout
        self.path, self.options, self.view = path, options, view
        self.interactive = interactive
        self.result: ExportResult | None = None
        self.error: str | None = None
        self.runner = TaskRunner(self)
        self.runner.progress.connect(self._on_progress)
        self.runner.finished.connect(self._on_finished)
        self.runner.failed.connect(self._on_failed)
        self.progress = QProgressDialog(f"Exporting {path.name}…", "Cancel", 0, 1000, parent)
        self.progress.setWindowTitle("Export Diagram")
        self.progress.setWindowModality(Qt.WindowModality.WindowModal)
        self.progress.setMinimumDuration(400)  # small graphs finish before it shows
        self.progress.setAutoClose(False)
        self.progress.setAutoReset(False)
        self.progress.canceled.connect(self.cancel)

    def start(self) -> None:
        model, layout, path, options = self.model, self.layout, self.path, self.options
        state = self.view.expand_state

        def work(context: TaskContext) -> ExportResult:
            drawn = layout
            relayout = options.expand != "current" or (
                options.direction is not None and options.direction != layout.direction)
            try:
                if relayout and model is not None:
                    from onnxstudio.export.build import layout_for_export

                    context.progress("Laying out", 0.0)
                    drawn = layout_for_export(
                        model, options, state, layout.direction, cancel=context.cancelled,
                        progress=lambda fraction: context.progress("Laying out", fraction))
                return export_layout(
                    drawn, model, path, options,
                    progress=lambda done, total: context.progress("Exporting", done / total),
                    cancel=context.cancelled)
            except MemoryError as exc:
                raise ExportError(f"{path.name}: out of memory; try a smaller scale, "
                                  "SVG or PDF") from exc

        self.progress.setValue(0)
        _running.add(self)
        self.runner.start(work, quiet_gc=True)  # see tasks._Runnable: no full collections

    def _end(self) -> None:
        self.progress.reset()
        self.progress.hide()
        self.progress.deleteLater()
        _running.discard(self)

    def cancel(self) -> None:
        if self.runner.busy:
            self.runner.cancel()  # the worker stops at its next check; nothing is written
            self._end()
            self.cancelled.emit()

    def _on_progress(self, stage: str, fraction: float) -> None:
        self.progress.setLabelText(f"{stage} {self.path.name}…")
        self.progress.setValue(int(fraction * 1000))

    def _on_finished(self, result: ExportResult) -> None:
        self._end()
        self.result = result
        remembered: dict[str, object] = {LAST_FOLDER_KEY: str(self.path.parent),
                                         LAST_FORMAT_KEY: result.format}
        if result.format == "png":
            remembered[LAST_SCALE_KEY] = self.options.scale
        store(remembered)
        # No modal here: the dialog said before writing what a notice would repeat, and
        # the window's status line says where the file went.
        self.finished.emit(result)

    def _on_failed(self, message: str) -> None:
        self._end()
        self.error = message
        if self.interactive:
            QMessageBox.warning(self.parent_widget, "Export Failed", message)
        self.failed.emit(message)


def start_export(parent: QWidget | None, model: Model | None, layout: Layout | None,
                 graph_view_state: Any = None, path: str | Path | None = None,
                 options: ExportOptions | None = None) -> ExportFlow | None:
    """File → Export… (Ctrl+E). ``graph_view_state`` is the tab's GraphView (or a
    ViewSnapshot); ``path``/``options`` skip the dialogs (tests, "export again").

    Returns the running flow (its ``finished``/``failed``/``cancelled`` signals tell the
    outcome), or None when the user backed out.
    """
    if layout is None:
        return None
    view = (graph_view_state if isinstance(graph_view_state, ViewSnapshot)
            else snapshot_view(graph_view_state))
    dest = Path(path) if path is not None else choose_destination(parent, model)
    if dest is None:
        return None
    try:
        format_for_path(dest, options.format if options else None)
    except ExportError as exc:
        QMessageBox.warning(parent, "Export Diagram", str(exc))
        return None
    if path is None and not confirm_replace(parent, dest):
        return None
    if options is None:
        dialog = ExportOptionsDialog(parent, dest, layout, model, view)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        options = dialog.options()
    flow = ExportFlow(parent, model, layout, dest, options, view, interactive=path is None)
    flow.start()
    return flow
