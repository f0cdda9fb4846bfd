"""The Help menu's two boxes: keyboard shortcuts (from the command table) and About."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget

# Gestures on the canvas that no menu command carries.
CANVAS_GESTURES = (
    ("Zoom", "Mouse wheel, pinch, + / −"),
    ("Pan", "Drag on empty canvas or from a node, middle drag, scroll bars, arrows"),
    ("Select / add to selection", "Click / Ctrl+click"),
    ("Select an area", "Shift+drag on empty canvas adds, Ctrl+drag toggles"),
    ("Select a whole group", "Click its title"),
    ("Expand or collapse a group", "Double-click"),
    ("Next / previous search hit", "F3 / Shift+F3"),
    ("Clear selection", "Esc"),
)


def show_shortcuts(parent: QWidget, commands: list[tuple[str, str]]) -> None:
    rows = [f"<tr><td>{text}</td><td><b>{key}</b></td></tr>"
            for text, key in [*commands, *CANVAS_GESTURES]]
    QMessageBox.information(parent, "Keyboard shortcuts",
                            "<table cellspacing='6'>" + "".join(rows) + "</table>")


def show_about(parent: QWidget) -> None:
    from importlib.metadata import PackageNotFoundError, version

    import onnx
    import PySide6
    from PySide6.QtCore import qVersion

    from onnxstudio import __version__

    try:
        ort = version("onnxruntime")
    except PackageNotFoundError:
        ort = "not installed"
    QMessageBox.about(
        parent, "About onnxstudio",
        f"<h3>onnxstudio {__version__}</h3>"
        "<p>See, inspect, run and export ONNX models.</p>"
        f"<p>onnx {onnx.__version__}<br>onnxruntime {ort}<br>"
        f"Qt {qVersion()} (PySide6 {PySide6.__version__})</p>"
        "<p>MIT licensed.</p>")
