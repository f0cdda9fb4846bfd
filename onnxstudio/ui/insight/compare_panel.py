"""The compare dock: one input on two configurations, and where their values part ways.

The panel only gathers choices (A, B, optional model B, tolerance), emits them as
`CompareOptions`, and shows the `Comparison` it is handed; the window runs the comparison on
a worker thread and colours the canvas. It never imports onnxruntime (import-linter).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import (
    QModelIndex,
    Qt,
    Signal,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.errors import InputError
from onnxstudio.model.formatting import format_number, shape_text
from onnxstudio.model.graph import Model
from onnxstudio.runner.compare import Comparison, RunConfig, parse_config
from onnxstudio.runner.tolerance import format_tolerance, tolerance_choice
from onnxstudio.ui.insight.compare_options import (
    DEFAULT_A,
    DEFAULT_B,
    DEFAULT_TOLERANCE,
    CompareOptions,
    config_choices,
    config_text,
)
from onnxstudio.ui.insight.compare_table import (
    NODE_ID_ROLE,
    DifferenceTableModel,
    DifferenceView,
)
from onnxstudio.ui.settings import app_settings
from onnxstudio.ui.widgets.banner import ErrorBanner
from onnxstudio.ui.widgets.responsive import SideBySide
from onnxstudio.ui.widgets.wrapping import breakable, plain

COMBO_CAP = 300  # widest the A / B combos get, however wide the dock
TOLERANCE_CAP = 140
STACKED_TABLE_MIN = 200  # the intermediates table's height in one scrolling column
WIDE_TABLE_MIN = 90  # beside the controls: the dock may be short


TOLERANCE_HELP = (
    "A value differs when max |a − b| > tolerance × max(1, max |a|): an absolute bound for "
    "small values, a relative one for large values, so one threshold serves logits and raw "
    "activations alike. Scientific notation works (1e-3, 5e-5); 0 asks for bit-exact equality; "
    "auto follows each value's dtype (1e-3 for float32, 2e-3 for float16, which keeps ~3 "
    "significant digits).")
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


class ComparePanel(QWidget):
    """Dock content: choose A, B and a tolerance, press Compare, read where values diverge."""

    compareRequested = Signal(object)  # CompareOptions
    nodeActivated = Signal(str)  # node id, "n12"
    colourToggled = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ComparePanel")
        self._model: Path | None = None
        self._nodes: dict[int, tuple[str, str]] = {}
        self._model_b: Path | None = None
        self._result: Comparison | None = None
        self._requested: CompareOptions | None = None
        self._busy = False
        self._restoring = False
        self._build()
        self._restore_settings()
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
        self._nodes = {n.index: (n.name, n.op_type) for n in model.graph.nodes} \
            if model is not None else {}
        self._requested = None
        self.banner.hide()
        self.set_result(None)
        self._update_enabled()

    def set_model_b(self, path: str | Path | None) -> None:
        """Run side B on this file (a quantised or edited copy); None: the same model."""
        self._model_b = Path(path) if path else None
        self.model_b_label.setText(self._model_b.name if self._model_b else "same model")
        self.model_b_label.setToolTip(str(self._model_b) if self._model_b else
                                      "Both sides run the open model")
        self.clear_model_b_button.setEnabled(self._model_b is not None)

    def set_busy(self, busy: bool, message: str = "") -> None:
        """While the worker compares: indeterminate progress, Compare disabled."""
        self._busy = busy
        self.progress.setVisible(busy)
        self.status_label.setText(message or ("Comparing…" if busy else ""))
        self.status_label.setVisible(bool(self.status_label.text()))
        self._update_enabled()

    def set_result(self, result: Comparison | None) -> None:
        """Show a comparison (None clears it and brings back the explanation)."""
        self._result = result
        if result is not None:
            self.banner.hide()
        self._show_result()

    def result(self) -> Comparison | None:
        return self._result

    def show_error(self, message: str) -> None:
        """Non-modal: a banner at the top; the controls stay usable."""
        self.banner.show_message(message)

    def error_text(self) -> str:
        return self.banner.message()

    def options(self) -> CompareOptions:
        """The current choices; InputError when the tolerance text is not a number ≥ 0."""
        return CompareOptions(self._config(self.a_combo), self._config(self.b_combo),
                              tolerance_choice(self.tolerance_edit.text()), self._model_b)

    def colour_by_divergence(self) -> bool:
        return self.colour_check.isChecked()

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
        outer = QVBoxLayout(self)
        outer.setContentsMargins(6, 6, 6, 6)
        self.banner = ErrorBanner()
        outer.addWidget(self.banner)
        # Choices, verdict and jump on one side, the tables on the other: above them in a
        # side dock, a column to their left in a wide (bottom) dock.
        side = QWidget()
        lay = QVBoxLayout(side)
        lay.setContentsMargins(0, 0, 0, 0)

        self._build_choices(lay)
        lay.addWidget(self._build_verdict())
        main = self._build_results()
        self.layout_switch = SideBySide(side, main)
        self.layout_switch.arranged.connect(self._arranged)
        outer.addWidget(self.layout_switch, 1)

    def _build_choices(self, lay: QVBoxLayout) -> None:
        """A and B, model B, tolerance, Compare, and the progress under them."""
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.a_combo = self._config_combo()
        self.b_combo = self._config_combo()
        self.a_combo.setToolTip("Side A: the baseline")
        self.b_combo.setToolTip("Side B: compared against A, on the same input")
        model_row = QHBoxLayout()
        model_row.setContentsMargins(0, 0, 0, 0)
        self.model_b_label = QLabel("same model")
        self.model_b_label.setSizePolicy(QSizePolicy.Policy.Ignored,
                                         QSizePolicy.Policy.Preferred)
        self.model_b_button = QPushButton("Other model…")
        self.model_b_button.setToolTip("Run side B on another copy of the model (e.g. a "
                                       "quantised one); values are matched by name")
        self.clear_model_b_button = QToolButton()
        self.clear_model_b_button.setText("✕")
        self.clear_model_b_button.setAutoRaise(True)
        self.clear_model_b_button.setToolTip("Back to the same model on both sides")
        self.clear_model_b_button.setEnabled(False)
        model_row.addWidget(self.model_b_label, 1)
        model_row.addWidget(self.model_b_button)
        model_row.addWidget(self.clear_model_b_button)
        self.tolerance_edit = QLineEdit(DEFAULT_TOLERANCE)
        self.tolerance_edit.setToolTip(TOLERANCE_HELP)
        self.tolerance_edit.setPlaceholderText("auto, or e.g. 1e-3")
        self.tolerance_edit.setMaximumWidth(TOLERANCE_CAP)
        form.addRow("A", self.a_combo)
        form.addRow("B", self.b_combo)
        form.addRow("Model B", model_row)
        form.addRow("Tolerance", self.tolerance_edit)
        lay.addLayout(form)

        actions = QHBoxLayout()
        self.compare_button = QPushButton("Compare")
        self.compare_button.setDefault(True)
        self.compare_button.setToolTip("Run the input on A and B and compare every value")
        self.colour_check = QCheckBox("Colour graph by divergence")
        self.colour_check.setChecked(True)
        self.colour_check.setToolTip("Tint each node by how far its outputs differ")
        actions.addWidget(self.compare_button)
        actions.addWidget(self.colour_check, 1)
        lay.addLayout(actions)

        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.setMaximumHeight(10)
        self.progress.setTextVisible(False)
        self.progress.hide()
        lay.addWidget(self.progress)
        self.status_label = QLabel()
        self.status_label.setWordWrap(True)
        self.status_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.status_label.hide()
        lay.addWidget(self.status_label)

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

    def _config_combo(self) -> QComboBox:
        combo = QComboBox()
        for config in config_choices():
            combo.addItem(config_text(config), config.label)
        # Long provider names must not widen the dock: the popup still shows them whole.
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(14)
        combo.setMaximumWidth(COMBO_CAP)
        return combo

    def _connect(self) -> None:
        self.compare_button.clicked.connect(self._on_compare)
        self.tolerance_edit.returnPressed.connect(self._on_compare)
        self.tolerance_edit.textChanged.connect(self._mark_tolerance)
        self.tolerance_edit.editingFinished.connect(self._save_settings)
        self.a_combo.currentIndexChanged.connect(self._save_settings)
        self.b_combo.currentIndexChanged.connect(self._save_settings)
        self.colour_check.toggled.connect(self._on_colour)
        self.model_b_button.clicked.connect(self._pick_model_b)
        self.clear_model_b_button.clicked.connect(lambda: self.set_model_b(None))
        self.jump_button.clicked.connect(self._jump)
        self.graph_order_button.clicked.connect(self.intermediates_view.graph_order)
        self.only_exceeding_check.toggled.connect(
            self.intermediates_view.proxy.set_only_exceeding)
        for view in (self.outputs_view, self.intermediates_view):
            view.rowActivated.connect(self._activate)
            view.selectionModel().currentRowChanged.connect(self._show_details)

    # ----------------------------------------------------------------- settings
    def _restore_settings(self) -> None:
        s = app_settings()
        self._restoring = True
        try:
            self._select(self.a_combo, str(s.value("compare/a", DEFAULT_A)), DEFAULT_A)
            self._select(self.b_combo, str(s.value("compare/b", DEFAULT_B)), DEFAULT_B)
            text = str(s.value("compare/tolerance", DEFAULT_TOLERANCE))
            try:
                tolerance_choice(text)
            except InputError:
                text = DEFAULT_TOLERANCE
            self.tolerance_edit.setText(text)
            colour = s.value("compare/colour", True)
            self.colour_check.setChecked(str(colour).lower() not in ("false", "0"))
        finally:
            self._restoring = False

    def _save_settings(self) -> None:
        if self._restoring:
            return
        s = app_settings()
        s.setValue("compare/a", self.a_combo.currentData())
        s.setValue("compare/b", self.b_combo.currentData())
        try:
            tolerance_choice(self.tolerance_edit.text())
            s.setValue("compare/tolerance", self.tolerance_edit.text().strip())
        except InputError:
            pass  # keep the last good value
        s.setValue("compare/colour", self.colour_check.isChecked())

    @staticmethod
    def _select(combo: QComboBox, label: str, default: str) -> None:
        """Choose the entry for a config label; a provider no longer available falls back."""
        try:
            wanted = parse_config(label).label
        except InputError:
            wanted = default
        index = combo.findData(wanted)
        combo.setCurrentIndex(index if index >= 0 else max(0, combo.findData(default)))

    @staticmethod
    def _config(combo: QComboBox) -> RunConfig:
        return parse_config(str(combo.currentData()))

    # ----------------------------------------------------------------- actions
    def _on_compare(self) -> None:
        if self._busy:
            return
        if self._model is None:
            self.show_error("Open a model first, then compare")
            return
        try:
            options = self.options()
        except InputError as exc:
            self._mark_tolerance()
            self.show_error(str(exc))
            return
        self.banner.hide()
        self._save_settings()
        self._requested = options
        self.compareRequested.emit(options)

    def _mark_tolerance(self) -> None:
        try:
            tolerance_choice(self.tolerance_edit.text())
            self.tolerance_edit.setStyleSheet("")
        except InputError:
            self.tolerance_edit.setStyleSheet("QLineEdit { background: #fde2e1; "
                                              "color: #6b1510; }")

    def _on_colour(self, on: bool) -> None:
        self._save_settings()
        self.colourToggled.emit(on)

    def _pick_model_b(self) -> None:
        s = app_settings()
        start = str(s.value("compare/model_b_dir", "")) or \
            (str(self._model.parent) if self._model else "")
        file, _ = QFileDialog.getOpenFileName(self, "Model for side B (values matched by name)",
                                              start, "ONNX models (*.onnx);;All files (*)")
        if file:
            s.setValue("compare/model_b_dir", str(Path(file).parent))
            self.set_model_b(file)

    def _jump(self) -> None:
        fd = self._result.first_divergence if self._result else None
        if fd is None:
            return
        view = self.intermediates_view
        for row, node in enumerate(view.node_ids()):
            if node == fd.id:
                view.selectRow(row)
                view.scrollTo(view.proxy.index(row, 0))
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
        self.compare_button.setEnabled(self._model is not None and not self._busy)

    # ----------------------------------------------------------------- results
    def _show_result(self) -> None:
        r = self._result
        self.hint.setVisible(r is None)
        self.results.setVisible(r is not None)
        self.verdict_box.setVisible(r is not None)
        self.outputs_view.source.set_rows(r.outputs if r else [], self._nodes)
        first = r.first_divergence.value if r and r.first_divergence else None
        self.intermediates_view.source.set_rows(r.intermediates if r else [], self._nodes, first)
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
        exceeding = sum(d.exceeds for d in r.intermediates)
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
        model_b = self._requested.model_b if self._requested else self._model_b
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
            return "diverged", (f"First divergence: {node} — output {value}{numbers} "
                                f"(tolerance {tol}; {sides})")
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

