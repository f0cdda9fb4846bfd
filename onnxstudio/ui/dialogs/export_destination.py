"""Where an export goes: the save dialog with a filter per format, remembered folder and
format, and the question before replacing a file."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from onnxstudio.export.formats import DESCRIPTIONS, EXTENSIONS
from onnxstudio.export.options import Format
from onnxstudio.model.graph import Model
from onnxstudio.ui.settings import app_settings

LAST_FOLDER_KEY = "export/last_folder"
LAST_FORMAT_KEY = "export/last_format"
FORMAT_ORDER: tuple[Format, ...] = ("svg", "png", "pdf", "dot", "json")


def file_filters() -> list[str]:
    out = []
    for fmt in FORMAT_ORDER:
        exts = " ".join(f"*{e}" for e, f in EXTENSIONS.items() if f == fmt)
        out.append(f"{DESCRIPTIONS[fmt]} ({exts})")
    return out


def default_extension(fmt: Format) -> str:
    return next(e for e, f in EXTENSIONS.items() if f == fmt)


def choose_destination(parent: QWidget | None, model: Model | None) -> Path | None:
    """The save dialog; returns a path with a known extension, or None if abandoned."""
    settings = app_settings()
    folder = str(settings.value(LAST_FOLDER_KEY, "") or "")
    if not folder or not Path(folder).is_dir():
        folder = str(model.path.parent) if model is not None else str(Path.home())
    last = str(settings.value(LAST_FORMAT_KEY, "svg") or "svg")
    fmt: Format = last if last in FORMAT_ORDER else "svg"
    stem = model.path.stem if model is not None else "graph"
    filters = file_filters()
    chosen_filter = filters[FORMAT_ORDER.index(fmt)]
    name, selected = QFileDialog.getSaveFileName(
        parent, "Export Diagram", str(Path(folder) / f"{stem}{default_extension(fmt)}"),
        ";;".join(filters), chosen_filter, QFileDialog.Option.DontConfirmOverwrite)
    if not name:
        return None
    path = Path(name)
    if path.suffix.lower() not in EXTENSIONS:  # typed without extension: use the filter's
        index = filters.index(selected) if selected in filters else FORMAT_ORDER.index(fmt)
        path = path.with_name(path.name + default_extension(FORMAT_ORDER[index]))
    return path


def confirm_replace(parent: QWidget | None, path: Path) -> bool:
    """Ask before replacing an existing file (the export itself replaces atomically)."""
    if not path.exists():
        return True
    answer = QMessageBox.question(
        parent, "Replace File?",
        f"“{path.name}” already exists in {path.parent}.\nDo you want to replace it?",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        QMessageBox.StandardButton.No)
    return answer == QMessageBox.StandardButton.Yes
