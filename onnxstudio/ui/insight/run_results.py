"""The run panel's answer: what was fed (thumbnail and the decided preprocessing), latency,
top-k bars, image outputs, every output's statistics and values, a detector's overlay, a
folder's table, and presets tried side by side."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QAction, QGuiApplication, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.runner.pipeline import RunOutcome
from onnxstudio.runner.postprocess import OutputView
from onnxstudio.runner.preprocess import PRESET_FORMULAS, PRESETS
from onnxstudio.ui.insight.detection_view import DetectionView
from onnxstudio.ui.insight.folder_view import FolderView
from onnxstudio.ui.insight.verdict_view import VerdictView
from onnxstudio.ui.widgets.images import qimage_from_array
from onnxstudio.ui.widgets.series_plot import SeriesPlot
from onnxstudio.ui.widgets.share_bar import ShareBar
from onnxstudio.ui.widgets.wrapping import breakable, plain

THUMB = 160


def _table(rows: int, columns: int, headers: list[str] | None = None) -> QTableWidget:
    """A read-only result table, hidden until it has something to show."""
    t = QTableWidget(rows, columns)
    if headers:
        t.setHorizontalHeaderLabels(headers)
    t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    t.verticalHeader().setVisible(False)
    t.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
    t.setMinimumHeight(80)
    t.hide()
    return t


class RunResults(QWidget):
    """Shows a run's outcomes (one at a time, picked in a combo when there are several)."""

    presetChosen = Signal(str)  # double-clicked in the side-by-side presets table

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._outcomes: list[RunOutcome] = []
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(self._build_fed())
        self.outcome_combo = QComboBox()
        self.outcome_combo.hide()
        lay.addWidget(self.outcome_combo)
        self.latency_label = QLabel()
        lay.addWidget(self.latency_label)
        self.verdict_view = VerdictView()
        self.verdict_view.setChosen.connect(self.outcome_combo.setCurrentIndex)
        lay.addWidget(self.verdict_view)
        self._build_presets(lay)
        self.detection_view = DetectionView()
        lay.addWidget(self.detection_view)
        self.folder_view = FolderView()
        lay.addWidget(self.folder_view)
        self._build_outputs(lay)
        self.outcome_combo.currentIndexChanged.connect(self._show_outcome)
        self.presets_table.cellDoubleClicked.connect(self._use_preset_row)

    def _build_fed(self) -> QHBoxLayout:
        fed = QHBoxLayout()
        self.thumbnail = QLabel()
        self.thumbnail.setFixedSize(QSize(THUMB, THUMB))
        self.thumbnail.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.thumbnail.setFrameShape(QFrame.Shape.StyledPanel)
        self.fed_label = QLabel()
        self.fed_label.setWordWrap(True)
        # Long tokens (metadata keys, "Image.NominalPixelRange=NominalRange_0_255") wrap
        # at their separators rather than run past the dock's edge; the break points
        # would be copied along with a selection, so Copy gives the plain text instead.
        self.fed_label.setSizePolicy(QSizePolicy.Policy.Ignored,
                                     QSizePolicy.Policy.Preferred)
        self.fed_label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.fed_label.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        copy = QAction("Copy", self.fed_label)
        copy.triggered.connect(
            lambda: QGuiApplication.clipboard().setText(plain(self.fed_label.text())))
        self.fed_label.addAction(copy)
        fed.addWidget(self.thumbnail)
        fed.addWidget(self.fed_label, 1)
        return fed

    def _build_presets(self, lay: QVBoxLayout) -> None:
        self.presets_row = QWidget()
        prow = QHBoxLayout(self.presets_row)
        prow.setContentsMargins(0, 0, 0, 0)
        self.presets_label = QLabel()
        self.presets_label.setWordWrap(True)
        self.presets_button = QPushButton("Compare presets")
        self.presets_button.setToolTip("Run this image under each likely preset and show "
                                       "their top-1 side by side")
        prow.addWidget(self.presets_label, 1)
        prow.addWidget(self.presets_button)
        self.presets_row.hide()
        lay.addWidget(self.presets_row)
        self.presets_table = _table(0, 3, ["Preset", "Top-1", "Score"])
        self.presets_table.setObjectName("presets-table")
        self.presets_table.setToolTip("Double-click a preset to use it for this model")
        self.presets_table.horizontalHeader().setSectionResizeMode(
            1, QHeaderView.ResizeMode.Stretch)
        lay.addWidget(self.presets_table)

    def _build_outputs(self, lay: QVBoxLayout) -> None:
        self.top_caption = QLabel()
        self.top_caption.setWordWrap(True)
        lay.addWidget(self.top_caption)
        self.top_table = _table(0, 3, ["Label", "Probability", "Score"])
        self.top_table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        lay.addWidget(self.top_table)
        self.images_box = QWidget()
        self.images_layout = QHBoxLayout(self.images_box)
        self.images_layout.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.images_box)
        self.series_caption = QLabel()
        lay.addWidget(self.series_caption)
        self.series_plot = SeriesPlot()
        lay.addWidget(self.series_plot)
        self._show_series(None)
        self.outputs_table = _table(0, 5, ["Output", "Kind", "Type / shape", "Statistics",
                                           "Why this kind"])
        self.outputs_table.horizontalHeader().setSectionResizeMode(
            4, QHeaderView.ResizeMode.Stretch)
        lay.addWidget(self.outputs_table)
        self.values_table = _table(0, 0)
        lay.addWidget(self.values_table)
        lay.addStretch(1)

    # ----------------------------------------------------------------- showing
    def answer(self) -> QWidget | None:
        """What the user ran the model for, as shown: the folder's table, the
        detections, the top-k table, the output images or else the outputs."""
        for w in (self.verdict_view, self.folder_view, self.detection_view, self.top_table,
                  self.images_box, self.series_plot, self.outputs_table):
            if not w.isHidden():
                return w
        return None

    def outcomes(self) -> list[RunOutcome]:
        return list(self._outcomes)

    def show_outcomes(self, outcomes: list[RunOutcome]) -> None:
        """A finished run: the first outcome shown, the others a pick away."""
        self.folder_view.hide()
        self._show_presets_table(outcomes)
        self._outcomes = list(outcomes)
        self.outcome_combo.blockSignals(True)
        self.outcome_combo.clear()
        self.outcome_combo.addItems([o.source for o in outcomes])
        self.outcome_combo.setVisible(len(outcomes) > 1)
        self.outcome_combo.blockSignals(False)
        self.verdict_view.show_outcomes(outcomes)
        self._show_outcome(0)

    def clear(self) -> None:
        self._outcomes = []
        self.detection_view.show_outcome(None)
        self.folder_view.hide()
        self.verdict_view.hide()
        self.presets_row.hide()
        self.outcome_combo.clear()
        self.outcome_combo.hide()
        self.thumbnail.clear()
        self.thumbnail.hide()
        self._show_series(None)
        self.fed_label.clear()
        self.latency_label.clear()
        self.top_caption.clear()
        for t in (self.top_table, self.outputs_table, self.values_table, self.presets_table):
            t.setRowCount(0)
            t.hide()
        self._clear_images()

    def _clear_images(self) -> None:
        while self.images_layout.count():
            item = self.images_layout.takeAt(0)
            w = item.widget() if item is not None else None
            if w is not None:
                w.deleteLater()

    def _show_outcome(self, index: int) -> None:
        if not 0 <= index < len(self._outcomes):
            return
        out = self._outcomes[index]
        self._show_fed(out)
        text = f"Latency {out.latency_ms:.2f} ms"
        if out.benchmark is not None:
            b = out.benchmark
            text += (f" — benchmark {len(b.times_ms)} runs: median {b.median_ms:.2f} ms, "
                     f"p90 {b.p90_ms:.2f} ms")
        self.latency_label.setText(text)
        self._show_top(out.classification())
        self._show_images([v for v in out.views if v.image is not None])
        self._show_series(next((v for v in out.views if v.series), None))
        self._show_outputs(out.views)
        self.detection_view.show_outcome(out)
        pre = out.preprocessed
        alternatives = pre.plan.alternatives if pre is not None else ()
        self.presets_row.setVisible(bool(alternatives) and not self.presets_table.isVisible())
        if alternatives:
            self.presets_label.setText("The preprocessing is a guess here. Try: "
                                       + ", ".join(f"{a} ({PRESET_FORMULAS[a]})"
                                                   for a in alternatives))

    def _show_fed(self, out: RunOutcome) -> None:
        """What went in: the preprocessed picture and the reasons for each choice."""
        pre = out.preprocessed
        if pre is not None:
            pix = QPixmap.fromImage(qimage_from_array(pre.preview))
            self.thumbnail.show()
            self.thumbnail.setPixmap(pix.scaled(THUMB, THUMB, Qt.AspectRatioMode.KeepAspectRatio,
                                                Qt.TransformationMode.SmoothTransformation))
            reasons = "\n".join(pre.plan.reasons)
            text = ("Fed " + "\n".join(f.describe() for f in out.fed)
                    + f"\n{pre.plan.preset}, {pre.plan.channels.upper()}, "
                    f"{pre.plan.layout.upper()}, {pre.plan.size[0]}×"
                    f"{pre.plan.size[1]} {pre.plan.resize}\n{reasons}")
        else:
            self.thumbnail.clear()
            text = f"Fed ({out.source}):\n" + "\n".join(f.describe() for f in out.fed)
        self.fed_label.setText(breakable(text))

    def _use_preset_row(self, row: int, _column: int) -> None:
        item = self.presets_table.item(row, 0)
        if item is not None:
            self.presetChosen.emit(item.text())

    def _show_presets_table(self, outcomes: list[RunOutcome]) -> None:
        """Outcomes of a side-by-side preset run ("caffe: cat.png", ...): their top-1."""
        tried = [o for o in outcomes if ": " in o.source and o.source.split(": ", 1)[0]
                 in PRESETS]
        t = self.presets_table
        if not tried or len(tried) != len(outcomes):
            t.setRowCount(0)
            t.hide()
            return
        t.setRowCount(len(tried))
        for row, o in enumerate(tried):
            label, score = o.top1() or ("—", 0.0)
            for col, text in enumerate((o.source.split(": ", 1)[0], label, f"{score:.3f}")):
                t.setItem(row, col, QTableWidgetItem(text))
        t.setMinimumHeight(min(200, 30 + 26 * len(tried)))
        t.show()

    def _show_top(self, view: OutputView | None) -> None:
        t = self.top_table
        t.setRowCount(0)
        if view is None:
            t.hide()
            self.top_caption.clear()
            return
        note = ", softmax applied" if view.softmax_applied else ""
        if view.kind == "token logits":
            self.top_caption.setText(f"Next-token predictions of {view.name}: top "
                                     f"{len(view.top)} at the last position{note}")
        else:
            self.top_caption.setText(f"Top {len(view.top)} of {view.name} "
                                     f"(labels: {view.labels_source}{note})")
        t.setRowCount(len(view.top))
        for row, entry in enumerate(view.top):
            text = entry.label if entry.label == str(entry.index) else \
                f"{entry.label}  [{entry.index}]"
            t.setItem(row, 0, QTableWidgetItem(text))
            t.setCellWidget(row, 1, ShareBar(entry.score))
            t.setItem(row, 2, QTableWidgetItem(f"{entry.score:.4g}"))
        t.setMinimumHeight(min(320, 30 + 26 * len(view.top)))
        t.show()

    def _show_images(self, views: list[OutputView]) -> None:
        self._clear_images()
        for v in views:
            assert v.image is not None
            box = QVBoxLayout()
            label = QLabel()
            label.setObjectName(f"output-image:{v.name}")
            pix = QPixmap.fromImage(qimage_from_array(v.image))
            label.setPixmap(pix.scaled(320, 320, Qt.AspectRatioMode.KeepAspectRatio,
                                       Qt.TransformationMode.SmoothTransformation))
            label.setToolTip(f"{v.name}: {v.summary}")
            holder = QWidget()
            holder.setLayout(box)
            caption = v.name if v.kind == "image" else \
                f"{v.name}: {v.kind}, one row per position"
            box.addWidget(QLabel(caption))
            box.addWidget(label)
            self.images_layout.addWidget(holder)
        self.images_box.setVisible(bool(views))

    def _show_series(self, view: OutputView | None) -> None:
        """One value per audio window (speech probability), as a line over time."""
        self.series_plot.setVisible(view is not None)
        self.series_caption.setVisible(view is not None)
        if view is None or view.series is None:
            return
        self.series_caption.setText(f"{view.name} per {view.series_step_s * 1000:.0f} ms "
                                    "window")
        self.series_plot.set_series(view.series, view.series_step_s, view.name)

    def _show_outputs(self, views: list[OutputView]) -> None:
        t = self.outputs_table
        t.setRowCount(len(views))
        for row, v in enumerate(views):
            stats = "  ".join(f"{k} {val:.4g}" for k, val in v.stats.items())
            for col, text in enumerate((v.name, v.kind, v.summary, stats, v.kind_reason)):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                t.setItem(row, col, item)
        t.show()
        readable = ("sequence", "map", "string", "embedding", "hidden state", "tensor")
        shown = next((v for kind in readable for v in views if v.kind == kind), None)
        vt = self.values_table
        if shown is None or not shown.table:
            vt.hide()
            return
        cols = max(len(r) for r in shown.table)
        vt.setColumnCount(cols)
        vt.setRowCount(len(shown.table))
        vt.setHorizontalHeaderLabels([f"{shown.name}"] + [""] * (cols - 1))
        for r, row_values in enumerate(shown.table):
            for c, text in enumerate(row_values):
                vt.setItem(r, c, QTableWidgetItem(text))
        vt.show()
