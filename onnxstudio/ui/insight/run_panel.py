"""The run dock: drop an image (or paste, pick, .npy, random), see the model's answer.

All work happens on the runner's worker thread (`onnxstudio.runner.qt_worker`); this widget
only gathers choices, remembers them (per model for preprocessing, globally for the session)
and displays outcomes. It never imports onnxruntime.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QGuiApplication, QImage, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.errors import InputError
from onnxstudio.runner.audio import audio_input
from onnxstudio.runner.choices import REMEMBERED, model_key
from onnxstudio.runner.folder import FolderItem, collect
from onnxstudio.runner.images import IMAGE_SUFFIXES, is_image_path
from onnxstudio.runner.inputs import TensorSpec, read_model_info
from onnxstudio.runner.pipeline import ImageSource, RunOutcome, RunRequest
from onnxstudio.runner.postprocess import OutputView
from onnxstudio.runner.preprocess import (
    CHANNELS,
    LAYOUTS,
    PRESET_FORMULAS,
    PRESETS,
    RESIZES,
    PreprocessOptions,
    image_input,
)
from onnxstudio.runner.qt_worker import (
    OPTIMIZATION_LEVELS,
    FolderRequest,
    FolderRow,
    RunController,
    SessionConfig,
    available_providers,
)
from onnxstudio.runner.synthetic import DIMS_SYNTAX, default_dim_sizes, format_dim_sizes
from onnxstudio.runner.synthetic import parse_dim_sizes as parse_dims
from onnxstudio.ui.insight.detection_view import DetectionView
from onnxstudio.ui.insight.folder_view import FolderView
from onnxstudio.ui.settings import app_settings
from onnxstudio.ui.widgets.banner import ErrorBanner
from onnxstudio.ui.widgets.images import array_from_qimage, qimage_from_array

AUTO = "auto"
THUMB = 160
IMAGE_FILTER = "Images ({})".format(" ".join(f"*{s}" for s in IMAGE_SUFFIXES))


def _model_key(path: Path) -> str:
    """Settings follow the file's content: a renamed or copied model keeps its choices."""
    try:
        return model_key(path)[:16]
    except OSError:
        return "missing"


def model_specs(path: Path, model: Any = None) -> list[TensorSpec]:
    """The model's real inputs, from the opened Model when there is one (no second parse)."""
    if model is not None:
        graph = model.graph
        return [TensorSpec(n, "tensor" if v.type.kind == "tensor" else v.type.kind,
                           "object" if v.type.dtype == "string" else v.type.dtype,
                           tuple(v.type.shape or ()))
                for n in graph.inputs if (v := graph.values.get(n)) is not None]
    try:
        return read_model_info(path).inputs
    except InputError:
        return []


class DropZone(QLabel):
    """The visible target; drops anywhere on the panel work the same."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Drop images or a folder here\n(PNG, JPEG, BMP, GIF, TIFF, WebP, .wav "
                         "or .npy)", parent)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setMinimumHeight(56)
        self.setStyleSheet("QLabel { border: 2px dashed palette(mid); border-radius: 6px; }")


class RunPanel(QWidget):
    """Dock content. Wire it with `set_model(path)` and route dropped images to `open_images`."""

    runFinished = Signal(object)  # list[RunOutcome]
    folder_finished = Signal(object)  # list[FolderRow] (also after a cancel or failure)
    runFailed = Signal(str)
    statusMessage = Signal(str)

    def __init__(self, parent: QWidget | None = None,
                 controller: RunController | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("RunPanel")
        self.setAcceptDrops(True)
        self.controller = controller or RunController(self)
        self._model: Path | None = None
        self._model_bytes: bytes | None = None  # an edited copy that runs instead
        self._labels_file: Path | None = None
        self._last: RunRequest | None = None
        self._outcomes: list[RunOutcome] = []
        self._restoring = False
        self._remembered = False  # the preset shown was restored for this model
        self._specs: list[TensorSpec] = []
        self._build()
        self._connect()
        self._restore_session_settings()
        self._update_enabled()

    # ----------------------------------------------------------------- public API
    def set_model(self, path: str | Path | None, model: Any = None,
                  model_bytes: bytes | None = None) -> None:
        """Show this model's remembered choices; its session is created on the first run.

        ``model_bytes``: the model as edited (unsaved), which runs instead of the file.
        """
        if self.controller.busy:
            self.controller.cancel()
        self._model = Path(path) if path else None
        self._model_bytes = model_bytes
        edited = " (as edited)" if model_bytes is not None else ""
        self.model_label.setText(f"{self._model.name}{edited}" if self._model
                                 else "No model open")
        self.model_label.setToolTip(str(self._model or ""))
        self._specs = model_specs(self._model, model) if self._model else []
        self._clear_results()
        self.hide_error()
        self._restore_model_settings()
        self._adapt_to_inputs()
        self._update_enabled()

    def _adapt_to_inputs(self) -> None:
        """Image controls only for an image-shaped input; the dims hint names this model's
        symbolic dimensions with the sizes random inputs would get."""
        specs = self._specs
        image = image_input(specs) is not None or not specs
        for row in range(4):  # preset, channels, layout, size
            self.pre_form.setRowVisible(row, image)
        self.pre_form.setRowVisible(self.resize_combo, image)
        self.open_button.setVisible(image)
        self.paste_button.setVisible(image)
        self.wav_button.setVisible(audio_input(specs) is not None)
        self.drop_zone.setText("Drop images or a folder here\n(PNG, JPEG, BMP, GIF, TIFF, WebP)"
                               if image else "Drop a .wav or .npy file here, or run "
                               "random inputs")
        defaults = format_dim_sizes(default_dim_sizes(specs))
        self.dims_edit.setPlaceholderText(defaults or "no symbolic dimensions")
        self.dims_edit.setToolTip(f"Sizes for symbolic dimensions of random/zero inputs: "
                                  f"{DIMS_SYNTAX}. Empty: {defaults or 'nothing to set'}")

    def model_path(self) -> Path | None:
        return self._model

    def open_images(self, paths: Iterable[str | Path]) -> bool:
        """Run on image files, a folder, a .wav or .npy files; False (with a message) if none
        could be used. A folder or several images fill the folder table."""
        files = [Path(p) for p in paths]
        folders = [p for p in files if p.is_dir()]
        npys = [p for p in files if p.suffix.lower() == ".npy"]
        wavs = [p for p in files if p.suffix.lower() == ".wav"]
        pics = [p for p in files if is_image_path(p)]
        others = [p for p in files if p not in npys + pics + wavs + folders]
        if not self._require_model():
            return False
        if others:
            self.show_error(f"{others[0].name}: not an image, folder, .wav or .npy file "
                            f"(supported: {', '.join(IMAGE_SUFFIXES)}, .wav, .npy)")
            if not (pics or npys or wavs or folders):
                return False
        if folders or len(pics) > 1:
            items = [i for f in folders for i in collect(f)]
            items += [FolderItem(p, p.name, None) for p in pics]
            return self.run_folder(items, folders[0].name if folders else f"{len(pics)} files")
        if pics:  # decoded on the worker thread: a bad file comes back as a message
            sources = [ImageSource(p.name, p) for p in pics]
            self._submit(RunRequest(self._model, images=sources))  # type: ignore[arg-type]
            return True
        if wavs:
            self._submit(RunRequest(self._model, audio=wavs[0]))  # type: ignore[arg-type]
            return True
        if npys:
            return self.open_npy(npys)
        return False

    def run_folder(self, items: list[FolderItem], where: str) -> bool:
        """Every image through the model, the table filling as they finish."""
        if not items:
            self.show_error(f"{where}: no images found (supported: {', '.join(IMAGE_SUFFIXES)})")
            return False
        request = RunRequest(self._model)  # type: ignore[arg-type]
        self._fill_request(request)
        self._clear_results()
        self.folder_view.start(len(items), where)
        self.hide_error()
        self.controller.submit(FolderRequest(request, items))
        return True

    def try_presets(self) -> bool:
        """The last image under each likely preset, top-1 side by side."""
        last = self._last
        shown = self._outcomes[0] if self._outcomes else None
        pre = shown.preprocessed if shown else None
        if last is None or not last.images or pre is None or not pre.plan.alternatives:
            return False
        self._submit(replace(last, images=last.images[:1], presets=pre.plan.alternatives),
                     remember=False)
        return True

    def open_npy(self, paths: Sequence[str | Path]) -> bool:
        """.npy inputs: one file feeds the only input; several are matched by file stem."""
        if not self._require_model():
            return False
        files = [Path(p) for p in paths]
        if len(files) == 1:
            self._submit(RunRequest(self._model, npy={"": files[0]}))  # type: ignore[arg-type]
        else:
            self._submit(RunRequest(self._model,  # type: ignore[arg-type]
                                    npy={p.stem: p for p in files}))
        return True

    def paste_image(self) -> bool:
        """Run on the clipboard's image (or the image files it holds)."""
        clip = QGuiApplication.clipboard()
        mime = clip.mimeData()
        if mime is not None and mime.hasUrls():
            local = [u.toLocalFile() for u in mime.urls() if u.isLocalFile()]
            if local:
                return self.open_images(local)
        img = clip.image()
        if img.isNull():
            self.show_error("The clipboard holds no image")
            return False
        if not self._require_model():
            return False
        src = ImageSource("clipboard image", rgb=array_from_qimage(img))
        self._submit(RunRequest(self._model, images=[src]))  # type: ignore[arg-type]
        return True

    def run_random(self, zeros: bool = False) -> bool:
        if not self._require_model():
            return False
        try:
            sizes = self._dim_sizes()
        except ValueError as exc:
            self.show_error(str(exc))
            return False
        self._submit(RunRequest(self._model, random=True,  # type: ignore[arg-type]
                                dim_sizes=sizes, zeros=zeros))
        return True

    def benchmark(self, runs: int | None = None) -> bool:
        """Repeat the last input N times; shows median and p90."""
        if self._last is None:
            self.show_error("Run the model once first, then benchmark that input")
            return False
        n = runs or self.bench_runs.value()
        self._submit(replace(self._last, benchmark_runs=n, presets=()), remember=False)
        return True

    def cancel(self) -> None:
        self.controller.cancel()

    def shutdown(self) -> None:
        """Stop the worker thread; call when the window closes."""
        self.controller.shutdown()

    def outcomes(self) -> list[RunOutcome]:
        return list(self._outcomes)

    def has_run(self) -> bool:
        """Whether there is a finished run whose input the inspection tools can reuse."""
        return self._last is not None and bool(self._outcomes)

    def inspection_request(self) -> RunRequest:
        """The last input (random inputs when there was none) with the current choices:
        what Profile, tensor capture and Compare feed, so they see what the user ran.

        Raises ValueError for unusable Dims text and when no model is open.
        """
        if self._model is None:
            raise ValueError("Open a model first")
        last = self._last
        if last is None or last.model != self._model:
            last = RunRequest(self._model, random=True, dim_sizes=self._dim_sizes())
        return replace(last, options=self.options(), config=self.session_config(),
                       top_k=self.topk_spin.value(), labels_file=self._labels_file,
                       benchmark_runs=0)

    # ----------------------------------------------------------------- building
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        # A dock is narrow: content wraps to its width rather than scrolling sideways.
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        outer.addWidget(scroll)
        body = QWidget()
        scroll.setWidget(body)
        lay = QVBoxLayout(body)

        self.model_label = QLabel("No model open")
        self.model_label.setStyleSheet("font-weight: bold")
        lay.addWidget(self.model_label)

        self.error_banner = ErrorBanner()
        lay.addWidget(self.error_banner)

        self.drop_zone = DropZone()
        lay.addWidget(self.drop_zone)
        row = QGridLayout()
        self.open_button = QPushButton("Open image…")
        self.paste_button = QPushButton("Paste")
        self.npy_button = QPushButton(".npy…")
        self.wav_button = QPushButton(".wav…")
        self.wav_button.setToolTip("A mono clip (integer or float PCM) for the audio input")
        self.random_button = QPushButton("Random inputs")
        self.random_button.setToolTip("Run with random inputs of the model's shapes")
        self.zeros_button = QPushButton("Zero inputs")
        self.zeros_button.setToolTip("Run with all-zero inputs of the model's shapes")
        for i, b in enumerate((self.open_button, self.paste_button, self.npy_button,
                               self.wav_button, self.random_button, self.zeros_button)):
            row.addWidget(b, i // 2, i % 2)
        lay.addLayout(row)

        pre = QGroupBox("Preprocessing")
        pre.setToolTip("The model's metadata and input shape decide first; "
                       "anything chosen here overrides them and is remembered per model")
        form = QFormLayout(pre)
        self.pre_form = form
        self.preset_combo = self._combo([AUTO, *PRESETS])
        for i, name in enumerate(PRESETS, start=1):
            self.preset_combo.setItemData(i, PRESET_FORMULAS[name], Qt.ItemDataRole.ToolTipRole)
        self.channels_combo = self._combo([AUTO, *CHANNELS])
        self.layout_combo = self._combo([AUTO, *LAYOUTS])
        self.resize_combo = self._combo([AUTO, *RESIZES])
        size_row = QHBoxLayout()
        self.height_spin = self._spin(0, 8192, 0, AUTO)
        self.width_spin = self._spin(0, 8192, 0, AUTO)
        size_row.addWidget(self.height_spin)
        size_row.addWidget(QLabel("×"))
        size_row.addWidget(self.width_spin)
        self.topk_spin = self._spin(1, 100, 5)
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
        lay.addWidget(pre)

        ses = QGroupBox("Session")
        sform = QFormLayout(ses)
        self.provider_combo = self._combo(available_providers())
        self.optimization_combo = self._combo(list(OPTIMIZATION_LEVELS))
        self.optimization_combo.setCurrentText("all")
        self.threads_spin = self._spin(0, 256, 0, AUTO)
        sform.addRow("Execution provider", self.provider_combo)
        sform.addRow("Graph optimisation", self.optimization_combo)
        sform.addRow("Threads", self.threads_spin)
        lay.addWidget(ses)

        status = QHBoxLayout()
        self.progress = QProgressBar()
        self.progress.setMaximumHeight(14)
        self.progress.setTextVisible(False)
        self.progress.setRange(0, 1)
        self.cancel_button = QPushButton("Cancel")
        self.bench_runs = self._spin(2, 10000, 20)
        self.bench_button = QPushButton("Benchmark")
        status.addWidget(self.progress, 1)
        status.addWidget(self.cancel_button)
        status.addWidget(self.bench_runs)
        status.addWidget(self.bench_button)
        lay.addLayout(status)
        self.status_label = QLabel("Ready")
        self.status_label.setWordWrap(True)
        lay.addWidget(self.status_label)

        fed = QHBoxLayout()
        self.thumbnail = QLabel()
        self.thumbnail.setFixedSize(QSize(THUMB, THUMB))
        self.thumbnail.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.thumbnail.setFrameShape(QFrame.Shape.StyledPanel)
        self.fed_label = QLabel()
        self.fed_label.setWordWrap(True)
        # Long unbreakable tokens (metadata keys) must not widen the dock: wrap or clip.
        self.fed_label.setSizePolicy(QSizePolicy.Policy.Ignored,
                                     QSizePolicy.Policy.Preferred)
        self.fed_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.fed_label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        fed.addWidget(self.thumbnail)
        fed.addWidget(self.fed_label, 1)
        lay.addLayout(fed)

        self.outcome_combo = QComboBox()
        self.outcome_combo.hide()
        lay.addWidget(self.outcome_combo)
        self.latency_label = QLabel()
        lay.addWidget(self.latency_label)

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
        self.presets_table = QTableWidget(0, 3)
        self.presets_table.setObjectName("presets-table")
        self.presets_table.setHorizontalHeaderLabels(["Preset", "Top-1", "Score"])
        self._table_setup(self.presets_table)
        self.presets_table.setToolTip("Double-click a preset to use it for this model")
        self.presets_table.horizontalHeader().setSectionResizeMode(
            1, QHeaderView.ResizeMode.Stretch)
        lay.addWidget(self.presets_table)
        self.detection_view = DetectionView()
        lay.addWidget(self.detection_view)
        self.folder_view = FolderView()
        lay.addWidget(self.folder_view)

        self.top_caption = QLabel()
        self.top_caption.setWordWrap(True)
        lay.addWidget(self.top_caption)
        self.top_table = QTableWidget(0, 3)
        self.top_table.setHorizontalHeaderLabels(["Label", "Probability", "Score"])
        self._table_setup(self.top_table)
        self.top_table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        lay.addWidget(self.top_table)

        self.images_box = QWidget()
        self.images_layout = QHBoxLayout(self.images_box)
        self.images_layout.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.images_box)

        self.outputs_table = QTableWidget(0, 4)
        self.outputs_table.setHorizontalHeaderLabels(["Output", "Kind", "Type / shape",
                                                      "Statistics"])
        self._table_setup(self.outputs_table)
        self.outputs_table.horizontalHeader().setSectionResizeMode(
            3, QHeaderView.ResizeMode.Stretch)
        lay.addWidget(self.outputs_table)
        self.values_table = QTableWidget(0, 0)
        self._table_setup(self.values_table)
        lay.addWidget(self.values_table)
        lay.addStretch(1)

    @staticmethod
    def _table_setup(t: QTableWidget) -> None:
        t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        t.verticalHeader().setVisible(False)
        t.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        t.setMinimumHeight(80)
        t.hide()

    def _combo(self, items: Sequence[str]) -> QComboBox:
        c = QComboBox()
        c.addItems(list(items))
        return c

    def _spin(self, lo: int, hi: int, value: int, special: str | None = None) -> QSpinBox:
        s = QSpinBox()
        s.setRange(lo, hi)
        s.setValue(value)
        if special:
            s.setSpecialValueText(special)
        return s

    def _connect(self) -> None:
        self.open_button.clicked.connect(self.open_image_dialog)
        self.paste_button.clicked.connect(self.paste_image)
        self.npy_button.clicked.connect(self._pick_npy)
        self.wav_button.clicked.connect(self._pick_wav)
        self.random_button.clicked.connect(self.run_random)
        self.zeros_button.clicked.connect(lambda: self.run_random(zeros=True))
        self.presets_button.clicked.connect(self.try_presets)
        self.presets_table.cellDoubleClicked.connect(self._use_preset_row)
        self.folder_view.rowActivated.connect(
            lambda row: self.open_images([row.item.path]))
        self.cancel_button.clicked.connect(self.cancel)
        self.bench_button.clicked.connect(lambda: self.benchmark())
        self.labels_button.clicked.connect(self._pick_labels)
        self.outcome_combo.currentIndexChanged.connect(self._show_outcome)
        for w in (self.preset_combo, self.channels_combo, self.layout_combo, self.resize_combo):
            w.currentTextChanged.connect(self._save_model_settings)
        self.preset_combo.currentTextChanged.connect(self._forget_remembered)
        for s in (self.height_spin, self.width_spin, self.topk_spin):
            s.valueChanged.connect(self._save_model_settings)
        self.dims_edit.editingFinished.connect(self._save_model_settings)
        self.provider_combo.currentTextChanged.connect(self._save_session_settings)
        self.optimization_combo.currentTextChanged.connect(self._save_session_settings)
        self.threads_spin.valueChanged.connect(self._save_session_settings)
        c = self.controller
        c.started.connect(self._on_started)
        c.progress.connect(self._on_progress)
        c.row.connect(self.folder_view.add_row)
        c.finished.connect(self._on_finished)
        c.failed.connect(self._on_failed)
        c.cancelled.connect(self._on_cancelled)
        c.busyChanged.connect(lambda _busy: self._update_enabled())

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
        s = app_settings()
        s.setValue("runner/provider", self.provider_combo.currentText())
        s.setValue("runner/optimization", self.optimization_combo.currentText())
        s.setValue("runner/threads", self.threads_spin.value())

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
            self.labels_source.setText(f"labels: {self._labels_file.name}" if self._labels_file
                                       else "labels: automatic")
        finally:
            self._restoring = False

    def _save_model_settings(self) -> None:
        if self._restoring or self._model is None:
            return
        s = app_settings()
        group = f"runner/models/{_model_key(self._model)}/"
        s.setValue(group + "path", str(self._model))
        s.setValue(group + "preset", self.preset_combo.currentText())
        s.setValue(group + "channels", self.channels_combo.currentText())
        s.setValue(group + "layout", self.layout_combo.currentText())
        s.setValue(group + "resize", self.resize_combo.currentText())
        s.setValue(group + "height", self.height_spin.value())
        s.setValue(group + "width", self.width_spin.value())
        s.setValue(group + "top_k", self.topk_spin.value())
        s.setValue(group + "dims", self.dims_edit.text())
        s.setValue(group + "labels_file", str(self._labels_file or ""))

    # ----------------------------------------------------------------- requests
    def options(self) -> PreprocessOptions:
        def pick(combo: QComboBox) -> str | None:
            text = combo.currentText()
            return None if text == AUTO else text

        h, w = self.height_spin.value(), self.width_spin.value()
        return PreprocessOptions(preset=pick(self.preset_combo),
                                 channels=pick(self.channels_combo),
                                 layout=pick(self.layout_combo),
                                 size=(h or w or 224, w or h or 224) if (h or w) else None,
                                 resize=pick(self.resize_combo),
                                 source=REMEMBERED if self._remembered else "")

    def _forget_remembered(self) -> None:
        if not self._restoring:
            self._remembered = False

    def session_config(self) -> SessionConfig:
        return SessionConfig(self.provider_combo.currentText(),
                             self.optimization_combo.currentText(), self.threads_spin.value())

    def _dim_sizes(self) -> dict[str, int]:
        try:
            return parse_dims(self.dims_edit.text())
        except InputError as exc:
            raise ValueError(str(exc).replace("dims:", "Dims:")) from exc

    def _require_model(self) -> bool:
        if self._model is None:
            self.show_error("Open a model first, then drop an image on it")
            return False
        return True

    def _fill_request(self, request: RunRequest) -> None:
        request.options = self.options()
        request.config = self.session_config()
        request.top_k = self.topk_spin.value()
        request.labels_file = self._labels_file
        if self.detection_view.isVisible():  # the user's threshold, once they have seen one
            request.threshold = self.detection_view.threshold()
        request.model_bytes = self._model_bytes

    def _submit(self, request: RunRequest, remember: bool = True) -> None:
        self._fill_request(request)
        if remember:
            self._last = request
        self.hide_error()
        self.controller.submit(request)

    def open_image_dialog(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Open images", "",
                                                f"{IMAGE_FILTER};;All files (*)")
        if files:
            self.open_images(files)

    def _pick_npy(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Open .npy inputs (file name = input name)",
                                                "", "NumPy arrays (*.npy)")
        if files:
            self.open_npy(files)

    def _pick_wav(self) -> None:
        file, _ = QFileDialog.getOpenFileName(self, "Open an audio clip", "",
                                              "WAV audio (*.wav)")
        if file:
            self.open_images([file])

    def _use_preset_row(self, row: int, _column: int) -> None:
        item = self.presets_table.item(row, 0)
        if item is not None:
            self.preset_combo.setCurrentText(item.text())
            self.status_label.setText(f"Preset {item.text()} chosen for this model "
                                      "(remembered)")

    def _pick_labels(self) -> None:
        file, _ = QFileDialog.getOpenFileName(self, "Labels file (one class per line)", "",
                                              "Text (*.txt *.json *.names);;All files (*)")
        if file:
            self.set_labels_file(file)

    def set_labels_file(self, path: str | Path | None) -> None:
        self._labels_file = Path(path) if path else None
        self.labels_source.setText(f"labels: {self._labels_file.name}" if self._labels_file
                                   else "labels: automatic")
        self._save_model_settings()

    # ----------------------------------------------------------------- drops
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        mime = event.mimeData()
        files = mime.hasUrls() and any(u.isLocalFile() for u in mime.urls())
        if files or mime.hasImage():
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        mime = event.mimeData()
        local = [u.toLocalFile() for u in mime.urls() if u.isLocalFile()]
        if local:
            self.open_images(local)
            event.acceptProposedAction()
        elif mime.hasImage() and self._require_model():
            img = QImage(mime.imageData())
            self._submit(RunRequest(self._model,  # type: ignore[arg-type]
                                    images=[ImageSource("dropped image",
                                                        rgb=array_from_qimage(img))]))
            event.acceptProposedAction()

    # ----------------------------------------------------------------- results
    def show_error(self, message: str) -> None:
        """Non-modal: a banner at the top of the panel; everything stays usable."""
        self.error_banner.show_message(message)
        self.statusMessage.emit(message)

    def hide_error(self) -> None:
        self.error_banner.hide()

    def error_text(self) -> str:
        return self.error_banner.message()

    def _update_enabled(self) -> None:
        busy = self.controller.busy
        has_model = self._model is not None
        for b in (self.open_button, self.paste_button, self.npy_button, self.wav_button,
                  self.random_button, self.zeros_button, self.presets_button):
            b.setEnabled(has_model)
        self.cancel_button.setEnabled(busy)
        self.bench_button.setEnabled(has_model and not busy)
        if busy:
            self.progress.setRange(0, 0)
        else:
            self.progress.setRange(0, 1)
            self.progress.setValue(0)

    def _on_started(self) -> None:
        self.status_label.setText("Running…")

    def _on_progress(self, message: str, done: int, total: int) -> None:
        self.status_label.setText(message)
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(done)

    def _on_failed(self, message: str) -> None:
        """A failed run leaves no earlier answer on screen to be mistaken for this one."""
        folder = self.folder_view.isVisible()
        self._clear_results(keep_last=True)
        if folder:
            self.folder_view.show()
            self.folder_view.finish(cancelled=True)
        self.status_label.setText("Failed")
        self.show_error(message)
        self.runFailed.emit(message)

    def _on_cancelled(self) -> None:
        self.status_label.setText("Cancelled")
        if self.folder_view.isVisible():
            self.folder_view.finish(cancelled=True)
            self.folder_finished.emit(self.folder_view.rows())

    def _on_finished(self, outcomes: list[Any]) -> None:
        if self.folder_view.isVisible() and (not outcomes or isinstance(outcomes[0], FolderRow)):
            self.folder_view.finish()
            self.status_label.setText("Done")
            self.folder_finished.emit(self.folder_view.rows())
            return
        self.folder_view.hide()
        self._show_presets_table(outcomes)
        self._outcomes = list(outcomes)
        self.outcome_combo.blockSignals(True)
        self.outcome_combo.clear()
        self.outcome_combo.addItems([o.source for o in outcomes])
        self.outcome_combo.setVisible(len(outcomes) > 1)
        self.outcome_combo.blockSignals(False)
        self._show_outcome(0)
        self.status_label.setText("Done")
        self.runFinished.emit(outcomes)

    def _clear_results(self, keep_last: bool = False) -> None:
        self._outcomes = []
        if not keep_last:
            self._last = None
        self.detection_view.show_outcome(None)
        self.folder_view.hide()
        self.presets_row.hide()
        self.outcome_combo.clear()
        self.outcome_combo.hide()
        self.thumbnail.clear()
        self.thumbnail.hide()
        self.fed_label.clear()
        self.latency_label.clear()
        self.top_caption.clear()
        for t in (self.top_table, self.outputs_table, self.values_table, self.presets_table):
            t.setRowCount(0)
            t.hide()
        self._clear_images()
        self.status_label.setText("Ready" if self._model else "Open a model to run it")

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
        pre = out.preprocessed
        if pre is not None:
            pix = QPixmap.fromImage(qimage_from_array(pre.preview))
            self.thumbnail.show()
            self.thumbnail.setPixmap(pix.scaled(THUMB, THUMB, Qt.AspectRatioMode.KeepAspectRatio,
                                                Qt.TransformationMode.SmoothTransformation))
            reasons = "\n".join(pre.plan.reasons)
            self.fed_label.setText("Fed " + "\n".join(f.describe() for f in out.fed)
                                   + f"\n{pre.plan.preset}, {pre.plan.channels.upper()}, "
                                   f"{pre.plan.layout.upper()}, {pre.plan.size[0]}×"
                                   f"{pre.plan.size[1]} {pre.plan.resize}\n{reasons}")
        else:
            self.thumbnail.clear()
            self.fed_label.setText(f"Fed ({out.source}):\n"
                                   + "\n".join(f.describe() for f in out.fed))
        text = f"Latency {out.latency_ms:.2f} ms"
        if out.benchmark is not None:
            b = out.benchmark
            text += (f" — benchmark {len(b.times_ms)} runs: median {b.median_ms:.2f} ms, "
                     f"p90 {b.p90_ms:.2f} ms")
        self.latency_label.setText(text)
        self._show_top(out.classification())
        self._show_images([v for v in out.views if v.image is not None])
        self._show_outputs(out.views)
        self.detection_view.show_outcome(out)
        alternatives = pre.plan.alternatives if pre is not None else ()
        self.presets_row.setVisible(bool(alternatives) and not self.presets_table.isVisible())
        if alternatives:
            self.presets_label.setText("The preprocessing is a guess here. Try: "
                                       + ", ".join(f"{a} ({PRESET_FORMULAS[a]})"
                                                   for a in alternatives))

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
        self.top_caption.setText(f"Top {len(view.top)} of {view.name} "
                                 f"(labels: {view.labels_source}{note})")
        t.setRowCount(len(view.top))
        for row, entry in enumerate(view.top):
            text = entry.label if entry.label == str(entry.index) else \
                f"{entry.label}  [{entry.index}]"
            t.setItem(row, 0, QTableWidgetItem(text))
            bar = QProgressBar()
            bar.setRange(0, 1000)
            bar.setValue(round(max(0.0, min(1.0, entry.score)) * 1000))
            bar.setFormat(f"{entry.score * 100:.1f} %")
            bar.setMaximumHeight(18)
            t.setCellWidget(row, 1, bar)
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
            box.addWidget(QLabel(v.name))
            box.addWidget(label)
            self.images_layout.addWidget(holder)
        self.images_box.setVisible(bool(views))

    def _show_outputs(self, views: list[OutputView]) -> None:
        t = self.outputs_table
        t.setRowCount(len(views))
        for row, v in enumerate(views):
            stats = "  ".join(f"{k} {val:.4g}" for k, val in v.stats.items())
            for col, text in enumerate((v.name, v.kind, v.summary, stats)):
                t.setItem(row, col, QTableWidgetItem(text))
        t.show()
        shown = next((v for v in views if v.kind in ("sequence", "map")),
                     next((v for v in views if v.kind == "tensor"), None))
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
