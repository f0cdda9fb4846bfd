"""The Compare panel's choices: configurations A and B, an optional model for side B, the
tolerance, Compare, and whether the graph is coloured by divergence.

The form remembers its choices (QSettings), marks a tolerance that is not a number, and
answers `options()`; the panel decides what a click on Compare does.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.errors import InputError
from onnxstudio.runner.compare import RunConfig, parse_config
from onnxstudio.runner.tolerance import tolerance_choice
from onnxstudio.ui.insight.compare_options import (
    DEFAULT_A,
    DEFAULT_B,
    DEFAULT_TOLERANCE,
    CompareOptions,
    config_choices,
    config_text,
)
from onnxstudio.ui.settings import app_settings, store

COMBO_CAP = 300  # widest the A / B combos get, however wide the dock
TOLERANCE_CAP = 140
TOLERANCE_HELP = (
    "A value differs when max |a − b| > tolerance × max(1, max |a|): an absolute bound for "
    "small values, a relative one for large values, so one threshold serves logits and raw "
    "activations alike. Scientific notation works (1e-3, 5e-5); 0 asks for bit-exact equality; "
    "auto follows each value's dtype (1e-3 for float32, 2e-3 for float16, which keeps ~3 "
    "significant digits).")


class CompareForm(QWidget):
    """A, B, model B, tolerance, the Compare button and the colour toggle."""

    compareClicked = Signal()  # the button, or Enter in the tolerance
    colourToggled = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model_b: Path | None = None
        self.folder: Path | None = None  # the open model's, where "Other model…" starts
        self._restoring = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._build_form())
        layout.addLayout(self._build_actions())
        self._restore_settings()
        self._connect()

    def _build_form(self) -> QFormLayout:
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
        return form

    def _build_actions(self) -> QHBoxLayout:
        actions = QHBoxLayout()
        self.compare_button = QPushButton("Compare")
        self.compare_button.setDefault(True)
        self.compare_button.setToolTip("Run the input on A and B and compare every value")
        self.colour_check = QCheckBox("Colour graph by divergence")
        self.colour_check.setChecked(True)
        self.colour_check.setToolTip("Tint each node by how far its outputs differ")
        actions.addWidget(self.compare_button)
        actions.addWidget(self.colour_check, 1)
        return actions

    @staticmethod
    def _config_combo() -> QComboBox:
        combo = QComboBox()
        for config in config_choices():
            combo.addItem(config_text(config), config.label)
        # Long provider names must not widen the dock: the popup still shows them whole.
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(14)
        combo.setMaximumWidth(COMBO_CAP)
        return combo

    def _connect(self) -> None:
        self.compare_button.clicked.connect(self.compareClicked)
        self.tolerance_edit.returnPressed.connect(self.compareClicked)
        self.tolerance_edit.textChanged.connect(self.mark_tolerance)
        self.tolerance_edit.editingFinished.connect(self.save_settings)
        self.a_combo.currentIndexChanged.connect(self.save_settings)
        self.b_combo.currentIndexChanged.connect(self.save_settings)
        self.colour_check.toggled.connect(self._on_colour)
        self.model_b_button.clicked.connect(self._pick_model_b)
        self.clear_model_b_button.clicked.connect(lambda: self.set_model_b(None))

    # ----------------------------------------------------------------- choices
    def options(self) -> CompareOptions:
        """The current choices; InputError when the tolerance text is not a number ≥ 0."""
        return CompareOptions(self._config(self.a_combo), self._config(self.b_combo),
                              tolerance_choice(self.tolerance_edit.text()), self.model_b)

    def set_model_b(self, path: str | Path | None) -> None:
        """Run side B on this file (a quantised or edited copy); None: the same model."""
        self.model_b = Path(path) if path else None
        self.model_b_label.setText(self.model_b.name if self.model_b else "same model")
        self.model_b_label.setToolTip(str(self.model_b) if self.model_b else
                                      "Both sides run the open model")
        self.clear_model_b_button.setEnabled(self.model_b is not None)

    def mark_tolerance(self) -> None:
        """A tolerance that is not a number ≥ 0 turns red as it is typed."""
        try:
            tolerance_choice(self.tolerance_edit.text())
            self.tolerance_edit.setStyleSheet("")
        except InputError:
            self.tolerance_edit.setStyleSheet("QLineEdit { background: #fde2e1; "
                                              "color: #6b1510; }")

    def _on_colour(self, on: bool) -> None:
        self.save_settings()
        self.colourToggled.emit(on)

    def _pick_model_b(self) -> None:
        s = app_settings()
        start = str(s.value("compare/model_b_dir", "")) or str(self.folder or "")
        file, _ = QFileDialog.getOpenFileName(self, "Model for side B (values matched by name)",
                                              start, "ONNX models (*.onnx);;All files (*)")
        if file:
            s.setValue("compare/model_b_dir", str(Path(file).parent))
            self.set_model_b(file)

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

    def save_settings(self) -> None:
        if self._restoring:
            return
        values = {"compare/a": self.a_combo.currentData(),
                  "compare/b": self.b_combo.currentData(),
                  "compare/colour": self.colour_check.isChecked()}
        try:
            tolerance_choice(self.tolerance_edit.text())
            values["compare/tolerance"] = self.tolerance_edit.text().strip()
        except InputError:
            pass  # keep the last good value
        store(values)

    def choose(self, a: RunConfig, b: RunConfig) -> None:
        """Show A and B as a comparison started elsewhere (a failing test set) ran them."""
        self._select(self.a_combo, a.label, DEFAULT_A)
        self._select(self.b_combo, b.label, DEFAULT_B)

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
