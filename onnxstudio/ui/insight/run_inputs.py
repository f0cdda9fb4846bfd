"""The run panel's input side: what the model takes, the drop target, the buttons that open,
paste or make inputs, and the sorting of dropped files into images, folders, clips and
arrays."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QMimeData, Qt, Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QGridLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.errors import InputError
from onnxstudio.runner.audio import audio_input
from onnxstudio.runner.images import IMAGE_SUFFIXES, is_image_path
from onnxstudio.runner.inputs import TensorSpec, read_model_info
from onnxstudio.runner.pipeline import ImageSource
from onnxstudio.runner.preprocess import image_input
from onnxstudio.runner.testdata import holds_test_data
from onnxstudio.ui.widgets.images import array_from_qimage

IMAGE_FILTER = "Images ({})".format(" ".join(f"*{s}" for s in IMAGE_SUFFIXES))


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


def is_image_model(specs: Sequence[TensorSpec]) -> bool:
    """Image controls show for an image-shaped input (and before a model is known)."""
    return image_input(list(specs)) is not None or not specs


@dataclass
class DroppedFiles:
    """Dropped or opened paths sorted by what the panel does with them."""

    folders: list[Path] = field(default_factory=list)
    npys: list[Path] = field(default_factory=list)
    wavs: list[Path] = field(default_factory=list)
    pics: list[Path] = field(default_factory=list)
    others: list[Path] = field(default_factory=list)
    tests: list[Path] = field(default_factory=list)  # test sets, folders of them, .pb, .npz

    @classmethod
    def sort(cls, paths: Iterable[str | Path]) -> DroppedFiles:
        files = [Path(p) for p in paths]
        tests = [p for p in files if holds_test_data(p)]
        files = [p for p in files if p not in tests]
        out = cls([p for p in files if p.is_dir()],
                  [p for p in files if p.suffix.lower() == ".npy"],
                  [p for p in files if p.suffix.lower() == ".wav"],
                  [p for p in files if is_image_path(p)])
        out.others = [p for p in files if p not in out.npys + out.pics + out.wavs + out.folders]
        out.tests = tests
        return out

    def usable(self) -> bool:
        return bool(self.pics or self.npys or self.wavs or self.folders or self.tests)


def local_files(mime: QMimeData | None) -> list[str]:
    """The local files a drop or the clipboard carries."""
    if mime is None or not mime.hasUrls():
        return []
    return [u.toLocalFile() for u in mime.urls() if u.isLocalFile()]


def accepts(mime: QMimeData) -> bool:
    """Whether a drag carries something the panel can run: files or an image."""
    return bool(local_files(mime)) or mime.hasImage()


def image_source(image: QImage, name: str) -> ImageSource:
    """A pasted or dropped picture (no file behind it) as a run input."""
    return ImageSource(name, rgb=array_from_qimage(image))


class DropZone(QLabel):
    """The visible target; drops anywhere on the panel work the same."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Drop images or a folder here\n(PNG, JPEG, BMP, GIF, TIFF, WebP, .wav, "
                         ".npy, .npz or a test_data_set folder)", parent)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setMinimumHeight(56)
        self.setStyleSheet("QLabel { border: 2px dashed palette(mid); border-radius: 6px; }")


class RunInputs(QWidget):
    """The drop zone and the input buttons; the file pickers answer with what was chosen."""

    filesChosen = Signal(list)  # images or a .wav clip: list[str]
    npyChosen = Signal(list)  # .npy arrays: list[str]

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
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
        for i, b in enumerate(self._buttons()):
            row.addWidget(b, i // 2, i % 2)
        lay.addLayout(row)
        self.open_button.clicked.connect(self.open_image_dialog)
        self.npy_button.clicked.connect(self._pick_npy)
        self.wav_button.clicked.connect(self._pick_wav)

    def _buttons(self) -> tuple[QPushButton, ...]:
        return (self.open_button, self.paste_button, self.npy_button, self.wav_button,
                self.random_button, self.zeros_button)

    def set_model_inputs(self, specs: Sequence[TensorSpec]) -> None:
        """Image buttons only for an image-shaped input, the clip button for an audio one."""
        image = is_image_model(specs)
        self.open_button.setVisible(image)
        self.paste_button.setVisible(image)
        self.wav_button.setVisible(audio_input(list(specs)) is not None)
        self.drop_zone.setText("Drop images or a folder here\n(PNG, JPEG, BMP, GIF, TIFF, WebP; "
                               "or a test_data_set folder)"
                               if image else "Drop a .wav, .npy, .npz or test_data_set here, "
                               "or run "
                               "random inputs")

    def set_usable(self, usable: bool) -> None:
        for b in self._buttons():
            b.setEnabled(usable)

    def open_image_dialog(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Open images", "",
                                                f"{IMAGE_FILTER};;All files (*)")
        if files:
            self.filesChosen.emit(files)

    def _pick_npy(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Open .npy inputs (file name = input name)",
                                                "", "NumPy arrays (*.npy)")
        if files:
            self.npyChosen.emit(files)

    def _pick_wav(self) -> None:
        file, _ = QFileDialog.getOpenFileName(self, "Open an audio clip", "",
                                              "WAV audio (*.wav)")
        if file:
            self.filesChosen.emit([file])
