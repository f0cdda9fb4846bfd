"""The run panel's choices: preprocessing (remembered per model, by content) and the
session (remembered for every model), turned into the options a run request carries."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.errors import InputError
from onnxstudio.runner.choices import REMEMBERED, model_key
from onnxstudio.runner.inputs import TensorSpec
from onnxstudio.runner.preprocess import (
    CHANNELS,
    LAYOUTS,
    PRESET_FORMULAS,
    PRESETS,
    RESIZES,
    PreprocessOptions,
)
from onnxstudio.runner.qt_worker import OPTIMIZATION_LEVELS, SessionConfig, available_providers
from onnxstudio.runner.synthetic import DIMS_SYNTAX, default_dim_sizes, format_dim_sizes
from onnxstudio.runner.synthetic import parse_dim_sizes as parse_dims
from onnxstudio.ui.insight.run_inputs import is_image_model
from onnxstudio.ui.settings import app_settings, store

AUTO = "auto"


def _model_key(path: Path) -> str:
    """Settings follow the file's content: a renamed or copied model keeps its choices."""
    try:
        return model_key(path)[:16]
    except OSError:
        return "missing"


def combo(items: Sequence[str]) -> QComboBox:
    c = QComboBox()
    c.addItems(list(items))
    return c


def spin(lo: int, hi: int, value: int, special: str | None = None) -> QSpinBox:
    s = QSpinBox()
    s.setRange(lo, hi)
    s.setValue(value)
    if special:
        s.setSpecialValueText(special)
    return s


class RunChoices(QWidget):
    """The Preprocessing and Session boxes; every change is saved as it is made."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._model: Path | None = None
        self._labels_file: Path | None = None
        self._restoring = False
        self._remembered = False  # the preset shown was restored for this model
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self._build_preprocessing())
        lay.addWidget(self._build_session())
        self._connect()
        self._restore_session_settings()

    def _build_preprocessing(self) -> QGroupBox:
        pre = QGroupBox("Preprocessing")
        pre.setToolTip("The model's metadata and input shape decide first; "
                       "anything chosen here overrides them and is remembered per model")
        form = QFormLayout(pre)
        self.pre_form = form
        self.preset_combo = combo([AUTO, *PRESETS])
        for i, name in enumerate(PRESETS, start=1):
            self.preset_combo.setItemData(i, PRESET_FORMULAS[name], Qt.ItemDataRole.ToolTipRole)
        self.channels_combo = combo([AUTO, *CHANNELS])
        self.layout_combo = combo([AUTO, *LAYOUTS])
        self.resize_combo = combo([AUTO, *RESIZES])
        size_row = QHBoxLayout()
        self.height_spin = spin(0, 8192, 0, AUTO)
        self.width_spin = spin(0, 8192, 0, AUTO)
        size_row.addWidget(self.height_spin)
        size_row.addWidget(QLabel("×"))
        size_row.addWidget(self.width_spin)
        self.topk_spin = spin(1, 100, 5)
        labels_row = QHBoxLayout()
        self.labels_source = QLabel("labels: automatic")
        self.labels_button = QPushButton("Labels file…")
        labels_row.addWidget(self.labels_source, 1)
        labels_row.addWidget(self.labels_button)
        self.dims_edit = QLineEdit()
        self.dims_edit.setPlaceholderText("batch=1, sequence=512")
        self.dims_edit.setToolTip(f"Sizes for symbolic dimensions: {DIMS_SYNTAX}")
        form.addRow("Preset", self.preset_combo)
        form.addRow("Channels", self.channels_combo)
        form.addRow("Layout", self.layout_combo)
        form.addRow("Size (H × W)", size_row)
        form.addRow("Resize", self.resize_combo)
        form.addRow("Top k", self.topk_spin)
        form.addRow(labels_row)
        form.addRow("Dims", self.dims_edit)
        return pre

    def _build_session(self) -> QGroupBox:
        ses = QGroupBox("Session")
        sform = QFormLayout(ses)
        self.provider_combo = combo(available_providers())
        self.optimization_combo = combo(list(OPTIMIZATION_LEVELS))
        self.optimization_combo.setCurrentText("all")
        self.threads_spin = spin(0, 256, 0, AUTO)
        sform.addRow("Execution provider", self.provider_combo)
        sform.addRow("Graph optimisation", self.optimization_combo)
        sform.addRow("Threads", self.threads_spin)
        return ses

    def _connect(self) -> None:
        self.labels_button.clicked.connect(self._pick_labels)
        for w in (self.preset_combo, self.channels_combo, self.layout_combo, self.resize_combo):
            w.currentTextChanged.connect(self._save_model_settings)
        self.preset_combo.currentTextChanged.connect(self._forget_remembered)
        for s in (self.height_spin, self.width_spin, self.topk_spin):
            s.valueChanged.connect(self._save_model_settings)
        self.dims_edit.editingFinished.connect(self._save_model_settings)
        self.provider_combo.currentTextChanged.connect(self._save_session_settings)
        self.optimization_combo.currentTextChanged.connect(self._save_session_settings)
        self.threads_spin.valueChanged.connect(self._save_session_settings)

    # ----------------------------------------------------------------- the model
    def set_model(self, path: Path | None, specs: Sequence[TensorSpec]) -> None:
        """Restore this model's choices and show only the controls its inputs use."""
        self._model = path
        self._restore_model_settings()
        image = is_image_model(specs)
        for row in range(4):  # preset, channels, layout, size
            self.pre_form.setRowVisible(row, image)
        self.pre_form.setRowVisible(self.resize_combo, image)
        defaults = format_dim_sizes(default_dim_sizes(list(specs)))
        self.dims_edit.setPlaceholderText(defaults or "no symbolic dimensions")
        self.dims_edit.setToolTip(f"Sizes for symbolic dimensions of random/zero inputs: "
                                  f"{DIMS_SYNTAX}. Empty: {defaults or 'nothing to set'}")

    def use_preset(self, name: str) -> None:
        """The user picked a preset (e.g. from the side-by-side table): remembered."""
        self.preset_combo.setCurrentText(name)

    def set_labels_file(self, path: str | Path | None) -> None:
        self._labels_file = Path(path) if path else None
        self._show_labels_file()
        self._save_model_settings()

    def _show_labels_file(self) -> None:
        self.labels_source.setText(f"labels: {self._labels_file.name}" if self._labels_file
                                   else "labels: automatic")

    def _pick_labels(self) -> None:
        file, _ = QFileDialog.getOpenFileName(self, "Labels file (one class per line)", "",
                                              "Text (*.txt *.json *.names);;All files (*)")
        if file:
            self.set_labels_file(file)

    # ----------------------------------------------------------------- what a run gets
    def options(self) -> PreprocessOptions:
        def pick(c: QComboBox) -> str | None:
            text = c.currentText()
            return None if text == AUTO else text

        h, w = self.height_spin.value(), self.width_spin.value()
        return PreprocessOptions(preset=pick(self.preset_combo),
                                 channels=pick(self.channels_combo),
                                 layout=pick(self.layout_combo),
                                 size=(h or w or 224, w or h or 224) if (h or w) else None,
                                 resize=pick(self.resize_combo),
                                 source=REMEMBERED if self._remembered else "")

    def session_config(self) -> SessionConfig:
        return SessionConfig(self.provider_combo.currentText(),
                             self.optimization_combo.currentText(), self.threads_spin.value())

    def top_k(self) -> int:
        return self.topk_spin.value()

    def labels_file(self) -> Path | None:
        return self._labels_file

    def dim_sizes(self) -> dict[str, int]:
        """Raises ValueError naming the field for unusable Dims text."""
        try:
            return parse_dims(self.dims_edit.text())
        except InputError as exc:
            raise ValueError(str(exc).replace("dims:", "Dims:")) from exc

    def _forget_remembered(self) -> None:
        if not self._restoring:
            self._remembered = False

    # ----------------------------------------------------------------- settings
    def _restore_session_settings(self) -> None:
        s = app_settings()
        self._restoring = True
        provider = str(s.value("runner/provider", ""))
        if provider and self.provider_combo.findText(provider) >= 0:
            self.provider_combo.setCurrentText(provider)
        level = str(s.value("runner/optimization", "all"))
        if self.optimization_combo.findText(level) >= 0:
            self.optimization_combo.setCurrentText(level)
        self.threads_spin.setValue(int(str(s.value("runner/threads", 0) or 0)))
        self._restoring = False

    def _save_session_settings(self) -> None:
        if self._restoring:
            return
        store({"runner/provider": self.provider_combo.currentText(),
               "runner/optimization": self.optimization_combo.currentText(),
               "runner/threads": self.threads_spin.value()})

    def _restore_model_settings(self) -> None:
        self._restoring = True
        try:
            group = f"runner/models/{_model_key(self._model)}/" if self._model else None
            s = app_settings()

            def get(key: str, default: str) -> str:
                return str(s.value(group + key, default)) if group else default

            self.preset_combo.setCurrentText(get("preset", AUTO))
            self._remembered = self.preset_combo.currentText() != AUTO
            self.channels_combo.setCurrentText(get("channels", AUTO))
            self.layout_combo.setCurrentText(get("layout", AUTO))
            self.resize_combo.setCurrentText(get("resize", AUTO))
            self.height_spin.setValue(int(get("height", "0") or 0))
            self.width_spin.setValue(int(get("width", "0") or 0))
            self.topk_spin.setValue(int(get("top_k", "5") or 5))
            self.dims_edit.setText(get("dims", ""))
            labels = get("labels_file", "")
            self._labels_file = Path(labels) if labels else None
            self._show_labels_file()
        finally:
            self._restoring = False

    def _save_model_settings(self) -> None:
        if self._restoring or self._model is None:
            return
        group = f"runner/models/{_model_key(self._model)}/"
        store({group + key: value for key, value in (
            ("path", str(self._model)), ("preset", self.preset_combo.currentText()),
            ("channels", self.channels_combo.currentText()),
            ("layout", self.layout_combo.currentText()),
            ("resize", self.resize_combo.currentText()), ("height", self.height_spin.value()),
            ("width", self.width_spin.value()), ("top_k", self.topk_spin.value()),
            ("dims", self.dims_edit.text()), ("labels_file", str(self._labels_file or "")))})
