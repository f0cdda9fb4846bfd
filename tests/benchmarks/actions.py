"""The stall of each remaining user action of issue 34, in the window measure_window opened:
PNG export, a diff tab, an attribute edit, the Split dialog's plan and its Write Stages;
and ``measure_drop``: the first model dropped on a fresh window, as the app starts it.

Each is ``_Ticker.action``: the longest event-loop gap from starting the action until it
is done and the window is quiet (no task running under it, no turn queued), and 0.3 s
more.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from tests.benchmarks.paint import VIEWPORT, _app, _Ticker

TYPING_S = 0.5  # between an editor opening and the value committed


def action_stalls(ticker: _Ticker, window: Any, tab: Any, path: Path) -> dict[str, float]:
    """png_export, diff, edit, split and split_write stalls (ms) on ``tab`` (``path``)."""
    row: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        row["png_export_stall_ms"] = _png_stall(ticker, window, tab, Path(folder))
        row["diff_stall_ms"] = _diff_stall(ticker, window, path, Path(folder))
        window.tabs.setCurrentWidget(tab)
        row["split_stall_ms"], row["split_write_stall_ms"] = _split_stalls(
            ticker, window, tab, Path(folder) / "stages")
        row["edit_stall_ms"] = _edit_stall(ticker, window, tab)
    return row


def _png_stall(ticker: _Ticker, window: Any, tab: Any, folder: Path) -> float:
    """File → Export Diagram as PNG with the dialog's defaults, until written."""
    from onnxstudio.export.options import ExportOptions
    from onnxstudio.ui.dialogs.export_dialog import start_export

    flows: list[Any] = []
    return ticker.action("png_export_stall", lambda: flows.append(start_export(
        window, tab.model, tab.layout_data, tab.view, path=folder / "graph.png",
        options=ExportOptions())), window,
        lambda: bool(flows) and (flows[0] is None or flows[0].result is not None
                                 or flows[0].error is not None))


def _variant(path: Path, folder: Path) -> Path:
    """A copy of ``path`` with one node renamed and the last one removed: a diff with
    something to show (written off the clock)."""
    import onnx

    proto = onnx.load(str(path), load_external_data=False)
    nodes = proto.graph.node
    nodes[0].name = f"{nodes[0].name or 'first'}_renamed"
    if len(nodes) > 2 and list(nodes[-1].output) == [o.name for o in proto.graph.output]:
        # the last node's input becomes the output: the model stays valid
        kept = nodes[-2].output[0]
        del proto.graph.output[:]
        proto.graph.output.add().name = kept
        del nodes[-1]
    out = folder / f"{path.stem}_variant.onnx"
    onnx.save(proto, str(out))
    return out


def _diff_stall(ticker: _Ticker, window: Any, path: Path, folder: Path) -> float:
    """File → Diff With… a variant of the model, until both sides are drawn and shaped."""
    from onnxstudio.ui import diffing

    other = _variant(path, folder)
    diffs: list[Any] = []

    def drawn() -> bool:
        diff = diffs[0]
        return diff.error is not None or (diff.result is not None and all(
            side.layout_data is not None for side in diff.tabs()))

    stall = ticker.action(
        "diff_stall", lambda: diffs.append(diffing.open_diff(window, path, other)), window,
        drawn)
    window.close_tab(window.tabs.indexOf(diffs[0]))
    ticker.action("closing the diff", lambda: None, window)  # off this column
    return stall


def _edit_key(tab: Any) -> tuple[str, str]:
    """An in-place edit a user makes in the Node panel: the first float attribute
    doubled (an epsilon, an alpha), else the first node renamed (dag100k has no
    attributes)."""
    for node in tab.model.graph.nodes:
        for attribute in node.attributes:
            if isinstance(attribute.value, float):
                return f"attr:{node.id}:{attribute.name}", repr(attribute.value * 2)
    first = tab.model.graph.nodes[0]
    return f"node-name:{first.id}", f"{first.name or 'first'}_edited"


def _edit_stall(ticker: _Ticker, window: Any, tab: Any) -> float:
    """An edit from the Node panel: the editor opens (which starts parsing the model for
    editing, ``EditRoom.prefetch``), the user types for ``TYPING_S``, then commits; until
    the rebuilt model is checked, laid out and drawn."""
    import time

    key, text = _edit_key(tab)
    before = tab.model
    typed: list[float] = []

    def commit() -> bool:
        if not typed:
            typed.append(time.perf_counter())
        if time.perf_counter() - typed[0] < TYPING_S:
            return False
        if len(typed) == 1:
            typed.append(0.0)
            window.edits.edit_key(key, text)
        return tab.model is not before and tab.layout_data is not None

    stall = ticker.action("edit_stall", window.edits.prefetch, window, commit, limit_s=300.0)
    window.edits.controller(tab).stack.setClean()  # closing asks nothing
    return stall


def _split_stalls(ticker: _Ticker, window: Any, tab: Any, folder: Path
                  ) -> tuple[float, float]:
    """Model → Split into Stages… until the plan is on the canvas; then Write Stages…
    into ``folder`` until written and checked (the result's message box closed at once)."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    dialogs: list[Any] = []

    def opened() -> None:
        dialogs.append(window.split_into_stages())

    plan = ticker.action("split_stall", opened, window,
                         lambda: dialogs[0] is None or dialogs[0].plan is not None)
    dialog = dialogs[0]
    if dialog is None or dialog.plan is None or not dialog.write_button.isEnabled():
        return plan, float("nan")
    written: list[Any] = []
    dialog.written.connect(written.append)
    dialog.failed.connect(written.append)

    def close_box() -> None:  # the "Wrote N stages" message box: the user reads it
        box = QApplication.activeModalWidget()
        if box is not None and box is not dialog:
            box.close()
        if not written or box is not None:
            QTimer.singleShot(50, close_box)

    QTimer.singleShot(50, close_box)
    write = ticker.action("split_write_stall", lambda: dialog.write_to(folder), window,
                          lambda: bool(written))
    dialog.reject()
    return plan, write


def measure_drop(path: Path) -> dict[str, float]:
    """The app's start (the window, its sample model), idle; then ``path`` dropped on it
    (drag enter, drop) until drawn with its shapes: the stall of that first drop."""
    app = _app()
    from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
    from PySide6.QtGui import QDragEnterEvent, QDropEvent

    from onnxstudio.ui.main_window import MainWindow, sample_model_path

    window = MainWindow()
    window.resize(*VIEWPORT)
    window.show()
    (sample,) = window.open_paths([str(sample_model_path())])
    ticker = _Ticker(app)
    ticker.action("the sample model", lambda: None, window,
                  lambda: sample.layout_data is not None)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    buttons, keys = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    action = Qt.DropAction.CopyAction

    def drop() -> None:
        window.dragEnterEvent(QDragEnterEvent(QPoint(400, 300), action, mime, buttons, keys))
        window.dropEvent(QDropEvent(QPointF(400, 300), action, mime, buttons, keys))

    def shown() -> bool:
        tabs = window.model_tabs()
        return len(tabs) > 1 and (bool(tabs[-1].error) or (
            tabs[-1].layout_data is not None and not tabs[-1].busy))

    stall = ticker.action("drop_stall", drop, window, shown)
    window.shutdown()
    window.close()
    return {"drop_stall_ms": stall, **ticker.cpu_row()}
