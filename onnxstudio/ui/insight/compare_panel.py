"""The compare dock: one input on two configurations, and where their values part ways.

The panel only gathers choices (`CompareForm`: A, B, optional model B, tolerance), emits
them as `CompareOptions`, and shows the `Comparison` it is handed (verdict, outputs and
intermediates tables); the window runs the comparison on a worker thread, cancelled by the
panel's Cancel or Escape, and colours the canvas. It never imports onnxruntime.
"""

from __future__ import annotations

from operator import attrgetter
from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.errors import InputError
from onnxstudio.model.formatting import format_number, shape_text
from onnxstudio.model.graph import Model
from onnxstudio.runner.compare import Comparison
from onnxstudio.runner.tolerance import format_tolerance
from onnxstudio.ui.insight.compare_form import CompareForm
from onnxstudio.ui.insight.compare_options import CompareOptions
from onnxstudio.ui.insight.compare_table import (
    NODE_ID_ROLE,
    DifferenceTableModel,
    DifferenceView,
)
from onnxstudio.ui.insight.job_panel import JobPanel
from onnxstudio.ui.widgets.wrapping import breakable, plain

STACKED_TABLE_MIN = 200  # the intermediates table's height in one scrolling column
WIDE_TABLE_MIN = 90  # beside the controls: the dock may be short

EMPTY_HINT = (
    "Compare runs the same input through two configurations, A and B (two execution "
    "providers, optimised vs unoptimised, or onnxruntime vs onnx's reference evaluator; "
    "B may also run another copy of the model, e.g. a quantised one), and lists how far "
    "every output and intermediate value differs: max abs, max rel and cosine.\n\n"
    "The first node whose output differs beyond the tolerance is where to look: the panel "
    "names it and can jump to it in the graph.\n\n"
    "The input is the run panel's last one, or random inputs if nothing has run yet.")

DETAILS_HINT = "Select a row to see it in full; double-click or Enter selects its node."


_VERDICT_STYLES = {
    "ok": ("#e3f4e1", "#8cc084", "#1d4d18"),
    "diverged": ("#fde2e1", "#e0908a", "#6b1510"),
    "empty": ("#fdf3d8", "#d9b45a", "#5a4310"),
}


def node_names(model: Model) -> dict[int, tuple[str, str]]:
    """(name, op type) by node index, kept with the model: the compare task makes it on
    its worker, so the result's table finds it (built at the result on the GUI thread,
    it took dag100k's compare 80-120 ms)."""
    return model.memo("node_names", lambda: {
        n.index: (n.name, n.op_type) for n in model.graph.nodes})


class ComparePanel(JobPanel):
    """Dock content: choose A, B and a tolerance, press Compare, read where values diverge."""

    compareRequested = Signal(object)  # CompareOptions
    nodeActivated = Signal(str)  # node id, "n12"
    colourToggled = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ComparePanel")
        self._model: Path | None = None
        self._graph_model: Model | None = None  # names the nodes of a result
        self._result: Comparison | None = None
        self._requested: CompareOptions | None = None
        self._build()
        self._connect()
        self._show_result()
        self._update_enabled()

    # ----------------------------------------------------------------- public API
    def set_model(self, path: str | Path | None, model: Model | None = None) -> None:
        """A new model: forget the result (and model B, which was a copy of the old one).

        ``model`` (optional) names the nodes in the Intermediates table.
        """
        new = Path(path) if path else None
        if new != self._model:
            self.set_model_b(None)
        self._model = new
        self.form.folder = new.parent if new else None
        self._graph_model = model
        self._requested = None
        self.banner.hide()
        self.set_result(None)
        self._update_enabled()

    def set_model_b(self, path: str | Path | None) -> None:
        """Run side B on this file (a quantised or edited copy); None: the same model."""
        self.form.set_model_b(path)

    def set_busy(self, busy: bool, message: str = "") -> None:
        """While the worker compares: indeterminate progress and Cancel, Compare disabled."""
        super().set_busy(busy, message or ("Comparing…" if busy else ""))

    def set_result(self, result: Comparison | None) -> None:
        """Show a comparison (None clears it and brings back the explanation)."""
        self._result = result
        if result is not None:
            self.banner.hide()
        self._show_result()

    def result(self) -> Comparison | None:
        return self._result

    def options(self) -> CompareOptions:
        """The current choices; InputError when the tolerance text is not a number ≥ 0."""
        return self.form.options()

    def colour_by_divergence(self) -> bool:
        return self.form.colour_check.isChecked()

    def verdict_text(self) -> str:
        """The verdict as plain text ("" without a result)."""
        return plain(self.verdict_label.text()) if self._result else ""

    def verdict_state(self) -> str:
        """One of ok, diverged, empty (nothing compared); "" without a result."""
        return str(self.verdict_frame.property("state") or "") if self._result else ""

    def outputs_table(self) -> DifferenceView:
        return self.outputs_view

    def intermediates_table(self) -> DifferenceView:
        return self.intermediates_view

    # ----------------------------------------------------------------- building
    def _build(self) -> None:
        # Choices, verdict and jump on one side, the tables on the other: above them in a
        # side dock, a column to their left in a wide (bottom) dock.
        side = QWidget()
        lay = QVBoxLayout(side)
        lay.setContentsMargins(0, 0, 0, 0)
        self.form = CompareForm()
        lay.addWidget(self.form)
        lay.addWidget(self.job)
        lay.addWidget(self._build_verdict())
        self._frame(side, self._build_results()).arranged.connect(self._arranged)

    def _build_verdict(self) -> QWidget:
        # The verdict belongs with the choices it answers (empty without a result).
        self.verdict_box = QWidget()
        verdict = QVBoxLayout(self.verdict_box)
        verdict.setContentsMargins(0, 4, 0, 0)
        self.verdict_frame = QFrame()
        self.verdict_frame.setObjectName("compareVerdict")
        vf = QVBoxLayout(self.verdict_frame)
        vf.setContentsMargins(8, 6, 8, 6)
        self.verdict_label = QLabel()
        self.verdict_label.setWordWrap(True)
        self.verdict_label.setSizePolicy(QSizePolicy.Policy.Ignored,
                                         QSizePolicy.Policy.Preferred)
        self.verdict_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        vf.addWidget(self.verdict_label)
        verdict.addWidget(self.verdict_frame)
        jump_row = QHBoxLayout()
        self.source_label = QLabel()
        self.source_label.setEnabled(False)
        self.source_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.jump_button = QPushButton("Jump to first divergence")
        self.jump_button.setToolTip("Select the first node whose output exceeds the tolerance")
        jump_row.addWidget(self.source_label, 1)
        jump_row.addWidget(self.jump_button)
        verdict.addLayout(jump_row)
        self.warnings_label = QLabel()
        self.warnings_label.setWordWrap(True)
        self.warnings_label.setSizePolicy(QSizePolicy.Policy.Ignored,
                                          QSizePolicy.Policy.Preferred)
        self.warnings_label.setStyleSheet("color: #8a5a00")
        verdict.addWidget(self.warnings_label)
        return self.verdict_box

    def _build_results(self) -> QWidget:
        """The empty-state hint, then the outputs and intermediates tables."""
        main = QWidget()
        main_layout = QVBoxLayout(main)
        main_layout.setContentsMargins(0, 0, 0, 0)
        self.hint = QLabel(EMPTY_HINT)
        self.hint.setWordWrap(True)
        self.hint.setEnabled(False)  # muted, like the other panels' empty states
        self.hint.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        main_layout.addWidget(self.hint)
        main_layout.addStretch(0)

        self.results = QWidget()
        res = QVBoxLayout(self.results)
        res.setContentsMargins(0, 0, 0, 0)
        self.outputs_caption = QLabel("<b>Outputs</b>")
        res.addWidget(self.outputs_caption)
        self.outputs_view = DifferenceView(DifferenceTableModel(intermediates=False))
        self.outputs_view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # the model's order
        res.addWidget(self.outputs_view)

        mid_row = QHBoxLayout()
        self.intermediates_caption = QLabel("<b>Intermediates</b>")
        self.only_exceeding_check = QCheckBox("Only ✗")
        self.only_exceeding_check.setToolTip("Show only values beyond the tolerance")
        self.graph_order_button = QToolButton()
        self.graph_order_button.setText("Graph order")
        self.graph_order_button.setToolTip("Sort rows back into topological order")
        mid_row.addWidget(self.intermediates_caption, 1)
        mid_row.addWidget(self.only_exceeding_check)
        mid_row.addWidget(self.graph_order_button)
        res.addLayout(mid_row)
        self.intermediates_view = DifferenceView(DifferenceTableModel(intermediates=True))
        self.intermediates_view.graph_order()
        self.intermediates_view.setMinimumHeight(STACKED_TABLE_MIN)
        self.intermediates_view.setSizePolicy(QSizePolicy.Policy.Expanding,
                                              QSizePolicy.Policy.Expanding)
        res.addWidget(self.intermediates_view, 1)
        # Names are elided in a narrow dock: the selected row is spelled out here in full.
        self.details_label = QLabel(DETAILS_HINT)
        self.details_label.setWordWrap(True)
        self.details_label.setEnabled(False)
        details_policy = QSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        details_policy.setHeightForWidth(True)  # as many lines as the width needs, no more
        self.details_label.setSizePolicy(details_policy)
        self.details_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        res.addWidget(self.details_label)
        main_layout.addWidget(self.results, 1)
        return main

    def _arranged(self, wide: bool) -> None:
        """Side by side the table has the dock's height; stacked it must not be squeezed."""
        self.intermediates_view.setMinimumHeight(WIDE_TABLE_MIN if wide else STACKED_TABLE_MIN)

    def _connect(self) -> None:
        self.form.compareClicked.connect(self._on_compare)
        self.form.colourToggled.connect(self.colourToggled)
        self.jump_button.clicked.connect(self._jump)
        self.graph_order_button.clicked.connect(self.intermediates_view.graph_order)
        self.only_exceeding_check.toggled.connect(
            self.intermediates_view.source.set_only_exceeding)
        for view in (self.outputs_view, self.intermediates_view):
            view.rowActivated.connect(self._activate)
            view.selectionModel().currentRowChanged.connect(self._show_details)

    # ----------------------------------------------------------------- actions
    def _on_compare(self) -> None:
        if self.busy:
            return
        if self._model is None:
            self.show_error("Open a model first, then compare")
            return
        try:
            options = self.options()
        except InputError as exc:
            self.form.mark_tolerance()
            self.show_error(str(exc))
            return
        self.banner.hide()
        self.form.save_settings()
        self._requested = options
        self.compareRequested.emit(options)

    def _jump(self) -> None:
        fd = self._result.first_divergence if self._result else None
        if fd is None:
            return
        view = self.intermediates_view
        for row, node in enumerate(view.node_ids()):
            if node == fd.id:
                view.selectRow(row)
                view.scrollTo(view.source.index(row, 0))
                break
        self.nodeActivated.emit(fd.id)

    def _activate(self, index: QModelIndex) -> None:
        node = index.siblingAtColumn(0).data(NODE_ID_ROLE) if index.isValid() else None
        if node:
            self.nodeActivated.emit(str(node))

    def _show_details(self, current: QModelIndex, _previous: QModelIndex) -> None:
        text = current.siblingAtColumn(0).data(Qt.ItemDataRole.ToolTipRole) \
            if current.isValid() else None
        self.details_label.setEnabled(bool(text))
        if text:  # names may wrap at their separators; the numbers must not
            lines = str(text).split("\n")
            text = " · ".join([breakable(line) for line in lines[:2]] + lines[2:])
        self.details_label.setText(text or DETAILS_HINT)

    def _update_enabled(self) -> None:
        self.form.compare_button.setEnabled(self._model is not None and not self.busy)

    # ----------------------------------------------------------------- results
    def _node_names(self) -> dict[int, tuple[str, str]]:
        """(name, op type) by node index, built when a result needs it: not on every
        model switch (50 ms of GUI time on 100k nodes)."""
        return node_names(self._graph_model) if self._graph_model is not None else {}

    def _show_result(self) -> None:
        r = self._result
        self.hint.setVisible(r is None)
        self.results.setVisible(r is not None)
        self.verdict_box.setVisible(r is not None)
        nodes = self._node_names() if r else {}
        self.outputs_view.source.set_rows(r.outputs if r else [], nodes)
        first = r.first_divergence.value if r and r.first_divergence else None
        self.intermediates_view.source.set_rows(r.intermediates if r else [], nodes, first)
        self.details_label.setEnabled(False)
        self.details_label.setText(DETAILS_HINT)
        if r is None:
            self.verdict_label.clear()
            self.warnings_label.clear()
            self.source_label.clear()
            self.jump_button.setEnabled(False)
            return
        state, text = self._verdict(r)
        self.verdict_frame.setProperty("state", state)
        bg, border, fg = _VERDICT_STYLES[state]
        self.verdict_frame.setStyleSheet(
            f"#compareVerdict {{ background: {bg}; border: 1px solid {border}; "
            f"border-radius: 4px; }} #compareVerdict QLabel {{ color: {fg}; }}")
        self.verdict_label.setText(text)
        self.verdict_label.setToolTip(plain(text))
        self.jump_button.setEnabled(r.first_divergence is not None)
        self.source_label.setText(f"Input: {r.source}")
        self.source_label.setToolTip(f"Input: {r.source}\nModel: {r.model}")
        self.warnings_label.setText("\n".join(f"⚠ {breakable(w)}" for w in r.warnings))
        self.warnings_label.setVisible(bool(r.warnings))
        self.outputs_caption.setText(f"<b>Outputs</b> ({len(r.outputs)})")
        exceeding = sum(map(attrgetter("exceeds"), r.intermediates))  # no Python per row
        self.intermediates_caption.setText(
            f"<b>Intermediates</b> ({len(r.intermediates)}"
            + (f", {exceeding} ✗)" if exceeding else ")"))
        # Up to six output rows without scrolling; in a short dock down to two.
        rows = max(1, len(r.outputs))
        view = self.outputs_view
        frame = view.horizontalHeader().sizeHint().height() + 2 * view.frameWidth() + 2
        row = view.verticalHeader().defaultSectionSize()
        view.setMinimumHeight(frame + row * min(rows, 2))
        view.setMaximumHeight(frame + row * min(rows, 6))
        self.intermediates_view.fit_columns()
        self.intermediates_view.graph_order()

    def _verdict(self, r: Comparison) -> tuple[str, str]:
        model_b = self._requested.model_b if self._requested else self.form.model_b
        sides = f"A: {r.a.label}, B: {r.b.label}" + (f" on {model_b.name}" if model_b else "")
        tol = r.tolerance_note.removeprefix("tolerance ") or format_tolerance(r.tolerance)
        fd = r.first_divergence
        if fd is not None:
            d = next((x for x in r.intermediates if x.name == fd.value), None)
            name = breakable(fd.name)
            node = f"{fd.op_type} '{name}' ({fd.id})" if fd.name else f"{fd.op_type} ({fd.id})"
            numbers = ""
            if d is not None:
                numbers = (f": shapes {shape_text(d.shape_a)} vs {shape_text(d.shape_b)}"
                           if d.shape_a != d.shape_b else
                           f": max abs {format_number(d.max_abs, 3)}, "
                           f"max rel {format_number(d.max_rel, 3)}")
            value = breakable(fd.value)
            known = " — a known deviation of the reference evaluator (below)" \
                if fd.known else ""
            return "diverged", (f"First divergence: {node} — output {value}{numbers} "
                                f"(tolerance {tol}; {sides}){known}")
        bad = [d for d in r.outputs if d.exceeds]
        if bad:
            worst = max(bad, key=lambda d: d.max_abs)
            return "diverged", (f"{len(bad)} of {len(r.outputs)} outputs differ beyond {tol} "
                                f"(worst {breakable(worst.name)}: max abs "
                                f"{format_number(worst.max_abs, 3)}), "
                                f"but no compared intermediate value does ({sides})")
        if not r.outputs and not r.intermediates:
            return "empty", f"Nothing to compare: the two sides share no value name ({sides})"
        n = len(r.outputs)
        outputs = "The output" if n == 1 else f"All {n} outputs"
        values = f"{len(r.intermediates)} intermediate value" + \
            ("" if len(r.intermediates) == 1 else "s")
        return "ok", f"{outputs} and {values} agree within {tol} ({sides})"

