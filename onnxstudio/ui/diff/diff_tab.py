"""A diff tab: two models side by side (or merged in one canvas), coloured by what changed.

The models are opened and compared off the GUI thread; each side is then an ordinary
ModelTab given its already loaded model, so zoom, expand, export and the inspector work
on it as on any tab, with the diff's colours as its overlay. The window asks
``active_tab()`` which side the user works on.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.layout.types import Direction
from onnxstudio.model.diff import ModelDiff, NodeDiff
from onnxstudio.model.diff_merge import ADDED_PREFIX
from onnxstudio.render.overlay import DIFF_FILLS, DIFF_STATUS, diff_overlay
from onnxstudio.ui.canvas.model_tab import ModelTab
from onnxstudio.ui.diff.changes_list import ChangesList
from onnxstudio.ui.diff.compute import Computed, compute
from onnxstudio.ui.diff.pair_details import PairDetails
from onnxstudio.ui.diff.sync import ViewSync
from onnxstudio.ui.tasks import TaskRunner, next_turn
from onnxstudio.ui.widgets.status import ElidedLabel


@dataclass
class _Sides:
    """A diff's two canvases and what keeps them together."""

    a: ModelTab
    b: ModelTab
    sync: ViewSync


def _captioned(tab: ModelTab, caption: str) -> QWidget:
    holder = QWidget()
    # a long file name is elided in the middle, never widening the pane: two exports of
    # one model differ at the end ("…_edited.onnx"), which a plain label cut off
    label = ElidedLabel(mode=Qt.TextElideMode.ElideMiddle)
    label.setText(caption)
    label.setStyleSheet("font-weight: 600;")
    label.setContentsMargins(6, 2, 6, 2)
    label.setToolTip(str(tab.path))  # the whole path
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    box = QVBoxLayout(holder)
    box.setContentsMargins(0, 0, 0, 0)
    box.setSpacing(0)
    box.addWidget(label)
    box.addWidget(tab, 1)
    return holder


class DiffTab(QWidget):
    """One tab comparing model A with model B."""

    loaded = Signal()  # the diff is computed and shown
    failed = Signal(str)
    activeChanged = Signal()  # the side the user works on changed
    canvasAdded = Signal(object)  # ModelTab: the merged canvas, made on first use
    closeRequested = Signal()

    def __init__(self, path_a: str | Path, path_b: str | Path, direction: Direction = "TB",
                 theme: str = "light", title: str = "",
                 cleanup: Callable[[], None] | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path_a, self.path_b = Path(path_a), Path(path_b)
        self.path = self.path_a
        self.title = title or f"{self.path_a.name} ↔ {self.path_b.name}"
        self.cleanup = cleanup
        self.direction, self.theme = direction, theme
        self.result: ModelDiff | None = None
        self.error: str | None = None
        self._computed: Computed | None = None
        self._starting = False  # ``start`` called, its worker not yet started
        self._pair: _Sides | None = None  # A and B, made by ``start``
        self.merged: ModelTab | None = None
        self._active: ModelTab | None = None

        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(0)
        box.addLayout(self._build_header())
        box.addWidget(self._build_body(), 1)
        self.sync_box.toggled.connect(self._set_sync)
        self._runner = TaskRunner(self)
        self._runner.progress.connect(self._on_progress)
        self._runner.finished.connect(self._on_computed)
        self._runner.failed.connect(self._on_failed)

    def _build_header(self) -> QHBoxLayout:
        """The summary of changes, Synchronise views, and the side-by-side/merged switch."""
        self.summary = QLabel("Comparing…")
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # a long summary wraps between its counts, never widening the window (cut at the
        # pane's edge, "37 added" read as "3" under the Synchronise box)
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.summary.setWordWrap(True)
        self.summary.setMinimumWidth(120)
        self.mode_sides = QPushButton("Side by side")
        self.mode_merged = QPushButton("Merged")
        modes = QButtonGroup(self)
        for button in (self.mode_sides, self.mode_merged):
            button.setCheckable(True)
            modes.addButton(button)
        self.mode_sides.setChecked(True)
        self.mode_merged.toggled.connect(self.set_merged)
        self.sync_box = QCheckBox("Synchronise views")
        self.sync_box.setChecked(True)
        self.sync_box.setToolTip("Pan, zoom and selection on one side follow on the other")
        header = QHBoxLayout()
        header.setContentsMargins(6, 4, 6, 4)
        header.addWidget(self.summary, 1)
        header.addWidget(self.sync_box)
        header.addWidget(self.mode_sides)
        header.addWidget(self.mode_merged)
        return header

    def _build_body(self) -> QSplitter:
        """The canvases (progress page, the two sides, or the merged graph) beside the
        changes list and the pair details."""
        self.sides = QSplitter(Qt.Orientation.Horizontal)  # A and B, once made
        self._merged_holder = QWidget()
        QVBoxLayout(self._merged_holder).setContentsMargins(0, 0, 0, 0)
        self._waiting = self._progress_page()
        self.canvas = QStackedWidget()
        for page in (self._waiting, self.sides, self._merged_holder):
            self.canvas.addWidget(page)

        self.changes = ChangesList()
        self.changes.activated.connect(self.jump_to)
        self.changes.defer_while = lambda: any(side.busy for side in self.tabs()[:2])
        self.details = PairDetails()
        right = self._right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.changes)
        right.addWidget(self.details)
        right.setSizes([300, 300])
        # shown a turn after the tab (``start``): polished and painted in the handler
        # that opened the tab, the list and the details doubled its first turn. An empty
        # page holds their place meanwhile (the stack's size is its largest page's), so
        # the window makes the same room for the tab as before.
        self._right_stack = QStackedWidget()
        self._right_stack.addWidget(QWidget())
        self._right_stack.addWidget(right)
        body = QSplitter(Qt.Orientation.Horizontal)
        body.addWidget(self.canvas)
        body.addWidget(self._right_stack)
        body.setStretchFactor(0, 3)
        body.setStretchFactor(1, 1)
        body.setSizes([900, 380])
        return body

    def _progress_page(self) -> QWidget:
        page = QWidget()
        self._stage = QLabel(f"Comparing {self.path_a.name} with {self.path_b.name}")
        self._stage.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._stage.setWordWrap(True)
        self._bar = QProgressBar()
        self._bar.setRange(0, 100)
        self._bar.setMaximumWidth(360)
        box = QVBoxLayout(page)
        box.addStretch(2)
        box.addWidget(self._stage)
        box.addWidget(self._bar)
        box.addStretch(3)
        return page

    # -- computing --------------------------------------------------------------------
    def start(self) -> None:
        """Compare the models: the tab shows its progress page this turn, its canvases
        are made the next, its changes list and pair details show the one after, and the
        worker starts last (all in the handler that opened the tab froze the window
        35-80 ms, a new thread taking the GIL in the middle of the tab's first paint)."""
        self.canvas.setCurrentWidget(self._waiting)
        self._starting = True
        steps: list[Callable[[], object]] = [
            self._make_sides, lambda: self._right_stack.setCurrentWidget(self._right),
            self._start_worker]
        for turns, step in enumerate(steps, 1):
            next_turn(self, partial(self._step, step), turns=turns)

    def _step(self, step: Callable[[], object]) -> None:
        if self._starting:  # not shut down meanwhile
            step()

    def _start_worker(self) -> None:
        self._starting = False
        a, b = self.path_a, self.path_b
        self._runner.start(lambda context: compute(a, b, context), quiet_gc=True)

    @property
    def busy(self) -> bool:
        return (self._starting or self._runner.busy
                or any(t.busy for t in self.tabs()))

    def cancel(self) -> None:
        self._starting = False
        self._runner.cancel()
        for tab in self.tabs():
            tab.cancel()

    def shutdown(self) -> None:
        """Stop all background work before the tab goes."""
        self._starting = False
        self._runner.cancel()
        for tab in self.tabs():
            tab.shutdown()

    def _on_progress(self, stage: str, fraction: float) -> None:
        self._stage.setText(stage)
        self._bar.setValue(int(fraction * 100))

    def _on_failed(self, message: str) -> None:
        self.error = message
        self._stage.setText(f"The comparison failed: {message}")
        self._bar.hide()
        self.summary.setText(html.escape(message))
        self.failed.emit(message)

    def _on_computed(self, computed: Computed) -> None:
        self._computed = computed
        result = self.result = computed.result
        # The colours were worked out on the worker, and each side folds them into its
        # layout there too: on the GUI thread they took 25-50 ms of BERT-96's diff.
        self.side_a.set_overlay(computed.overlays[0])
        self.side_b.set_overlay(computed.overlays[1])
        self.canvas.setCurrentWidget(self.sides)  # the sides' tasks lay out for their size
        self.side_a.start(result.a)
        self.side_b.start(result.b)
        self.changes.set_result(result, computed.described, computed.counts, computed.rows)
        counts = computed.counts
        same = " — identical" if computed.identical else ""
        key = " ".join(
            f"<span style='background:{fill}; color:{fill}'>&nbsp;■&nbsp;</span>"
            f"&nbsp;<b>{counts[status]:,}</b> {status}&nbsp;&nbsp;"
            for status, fill in zip(DIFF_STATUS, DIFF_FILLS, strict=True))
        self.summary.setText(f"{key}{same}")
        self.summary.setToolTip(f"{computed.ratio:.1%} of the nodes paired; "
                                f"compared in {result.seconds:.2f} s")
        self.loaded.emit()

    def _fit_sides(self) -> None:
        """Once both sides are drawn, each fits its pane (the synchronisation, which
        would move one to match the other's fit, waits until then)."""
        sides = (self.side_a, self.side_b)
        if any(side.layout_data is None for side in sides):
            return
        self.sync.waiting = True
        for side in sides:
            side.view.fit()  # opened fitted: only a pane resized since then moves
        self.sync.waiting = False

    # -- sides and selection ----------------------------------------------------------
    @property
    def side_a(self) -> ModelTab:
        return self._make_sides().a

    @property
    def side_b(self) -> ModelTab:
        return self._make_sides().b

    @property
    def sync(self) -> ViewSync:
        """Pan, zoom and selection of one side followed on the other."""
        return self._make_sides().sync

    def _make_sides(self) -> _Sides:
        """The two canvases (once; a turn after the tab shows, or when first asked for),
        each announced by ``canvasAdded``; A becomes the active one."""
        if self._pair is not None:
            return self._pair
        made = []
        for name, path in (("A", self.path_a), ("B", self.path_b)):
            side = ModelTab(path, self.direction, self.theme)
            side.setMinimumWidth(160)  # two canvases share the width; never widen the window
            side.view.show_legend = False  # the header's counts are the key
            side.view.minimap.allowed = False  # it covered a third of a narrow pane
            # each side's first paint shows it whole: opened as a single tab opens, a
            # long model's first paint drew its inputs' curves on the GUI thread (BERT-96
            # optimised: 45-130 ms), and the fit that followed painted it all again
            side.view.open_fitted = True
            side.loaded.connect(lambda _m: self._fit_sides())  # whole, never cut
            side.view.selectionChanged.connect(
                lambda ids, side=side: self._selected(side, ids))
            self.sides.addWidget(_captioned(side, f"{name} · {path.name}"))
            made.append(side)
        a, b = made
        sync = ViewSync(a.view, b.view, self._to_b, self._to_a, self)
        sync.enabled = self.sync_box.isChecked()
        self._pair = _Sides(a, b, sync)
        for side in made:
            self.canvasAdded.emit(side)
        self._set_active(a)
        return self._pair

    def _set_sync(self, on: bool) -> None:
        if self._pair is not None:
            self._pair.sync.enabled = on

    def tabs(self) -> list[ModelTab]:
        """Every canvas of this diff made so far (A, B, and the merged one once made)."""
        sides = [self._pair.a, self._pair.b] if self._pair else []
        return [*sides, *([self.merged] if self.merged else [])]

    def active_tab(self) -> ModelTab | None:
        """The canvas the user works on: the side last clicked, or the merged one (none
        in the turn the tab opens, before its sides are made)."""
        return self._active

    def _set_active(self, tab: ModelTab) -> None:
        if tab is not self._active:
            self._active = tab
            self.activeChanged.emit()

    def entry_for(self, tab: ModelTab, box_id: str) -> NodeDiff | None:
        if self.result is None:
            return None
        if tab is self.side_b:
            return self.result.by_b.get(box_id)
        if box_id.startswith(ADDED_PREFIX):
            return self.result.by_b.get(box_id[len(ADDED_PREFIX):])
        return self.result.by_a.get(box_id)

    def _to_b(self, box_id: str) -> str | None:
        entry = self.result.by_a.get(box_id) if self.result else None
        if entry is None:
            return box_id  # groups and graph inputs/outputs keep their ids
        return entry.b.id if entry.b is not None else None

    def _to_a(self, box_id: str) -> str | None:
        entry = self.result.by_b.get(box_id) if self.result else None
        if entry is None:
            return box_id
        return entry.a.id if entry.a is not None else None

    def _selected(self, tab: ModelTab, ids: list[str]) -> None:
        self._set_active(tab)
        entry = next((e for e in (self.entry_for(tab, i) for i in ids) if e is not None), None)
        self._show_details(entry)
        self.changes.select_entry(entry)

    def _show_details(self, entry: NodeDiff | None) -> None:
        absorbed = self.result.absorbed_by(entry) if entry and self.result else None
        self.details.show_entry(entry, absorbed)

    def jump_to(self, entry: NodeDiff) -> None:
        """Centre and select ``entry`` on every canvas that shows it (a list click)."""
        self._show_details(entry)
        wanted = {self.side_a: entry.a.id if entry.a else None,
                  self.side_b: entry.b.id if entry.b else None}
        if self.merged is not None:
            wanted[self.merged] = (entry.a.id if entry.a else
                                   ADDED_PREFIX + entry.b.id if entry.b else None)
        syncing, self.sync.enabled = self.sync.enabled, False
        try:
            for tab, node_id in wanted.items():
                if node_id is None:
                    tab.view.set_selection([], emit=False)
                    continue
                tab.reveal(node_id)
                # the side the user works on tells the window (its Node panel) too
                tab.view.set_selection([node_id], emit=tab is self._active)
        finally:
            self.sync.enabled = syncing

    # -- merged view -----------------------------------------------------------------
    def set_merged(self, merged: bool) -> None:
        """Show both models in one canvas (True) or side by side."""
        if self._computed is None:
            return
        if merged and self.merged is None:
            tab = self.merged = ModelTab(self.path_a, self.direction, self.theme)
            tab.setMinimumWidth(160)
            tab.view.show_legend = False
            tab.view.open_fitted = True
            tab.view.show_names = self.side_a.view.show_names
            tab.set_overlay(diff_overlay(f"Diff {self.path_a.name} + {self.path_b.name}",
                                         self._computed.merged_status))
            tab.view.selectionChanged.connect(lambda ids: self._selected(tab, ids))
            holder = self._merged_holder.layout()
            assert holder is not None
            holder.addWidget(_captioned(
                tab, f"A + B · {self.path_a.name} with what {self.path_b.name} adds"))
            tab.start(self._computed.merged)
            self.canvasAdded.emit(tab)
        self.mode_merged.setChecked(merged)
        self.sync_box.setEnabled(not merged)
        self.canvas.setCurrentWidget(self._merged_holder if merged else self.sides)
        self._set_active(self.merged if merged and self.merged else self.side_a)

    def set_theme(self, theme: str) -> None:
        self.theme = theme
        for tab in self.tabs():
            tab.set_theme(theme)

    def set_direction(self, direction: Direction) -> None:
        self.direction = direction
        for tab in self.tabs():
            tab.set_direction(direction)
