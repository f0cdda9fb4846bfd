"""Model → Extract Selection…: preview the sub-model a canvas selection makes, then write it.

The cut is computed on the GUI thread from the plain Model (milliseconds); writing it
reads the weights and runs onnx.checker, so it runs on a worker (TaskRunner). The
dialog also lets the user retype the boundary tensors ("everything between these").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressDialog,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.errors import CutError
from onnxstudio.layout.scopes import ScopeGroup, graph_scope_tree
from onnxstudio.model import Model
from onnxstudio.model.cut import Cut, CutTensor, WrittenCut, cut_from_nodes, cut_from_tensors
from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.ui.tasks import TaskContext, TaskRunner

TITLE = "Extract Selection"


def selection_node_ids(model: Model, box_ids: list[str]) -> list[str]:
    """Node ids behind the canvas selection: a selected group stands for all it holds."""
    tree = graph_scope_tree(model.graph)
    out: dict[str, None] = {}
    for box_id in box_ids:
        group = tree.by_id.get(box_id)
        if group is None:
            out[box_id] = None
            continue
        stack: list[ScopeGroup] = [group]
        while stack:
            for child in stack.pop().children:
                if isinstance(child, ScopeGroup):
                    stack.append(child)
                elif not child.startswith(("in:", "out:")):
                    out[child] = None
    return list(out)


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


class ExtractDialog(QDialog):
    """Shows what the sub-model will contain; its boundary tensors can be retyped."""

    def __init__(self, parent: QWidget | None, model: Model, cut: Cut) -> None:
        super().__init__(parent)
        self.setWindowTitle(TITLE)
        self.model = model
        self.cut: Cut | None = cut
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.inputs_edit = QLineEdit(", ".join(t.name for t in cut.inputs))
        self.outputs_edit = QLineEdit(", ".join(t.name for t in cut.outputs))
        for edit in (self.inputs_edit, self.outputs_edit):
            edit.setToolTip("Comma-separated tensor names; the sub-model holds everything "
                            "between the inputs and the outputs")
            edit.editingFinished.connect(self._recompute)
        form = QFormLayout()
        form.addRow("Inputs:", self.inputs_edit)
        form.addRow("Outputs:", self.outputs_edit)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Tensor", "Type", "Shape"])
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideLeft)  # scoped names differ at the end
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setStretchLastSection(False)
        self.contents = QLabel()
        self.contents.setWordWrap(True)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #c62828;")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.extract_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.extract_button.setText("Extract…")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addLayout(form)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.contents)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.resize(620, 380)
        self._show(cut)

    def _recompute(self) -> None:
        current = self.cut
        inputs, outputs = _names(self.inputs_edit.text()), _names(self.outputs_edit.text())
        if current is not None and inputs == [t.name for t in current.inputs] and \
                outputs == [t.name for t in current.outputs]:
            return  # unchanged: keep the cut of the selection exactly
        try:
            cut = cut_from_tensors(self.model, inputs or None, outputs or None)
        except CutError as exc:
            self.cut = None
            self.error.setText(str(exc))
            self.extract_button.setEnabled(False)
            return
        self._show(cut)

    def _show(self, cut: Cut) -> None:
        self.cut = cut
        self.error.setText("")
        self.extract_button.setEnabled(True)
        self.heading.setText(f"<b>Sub-model of {self.model.path.name}</b>: {cut.summary()}")
        self.tree.clear()
        for title, tensors in (("Inputs", cut.inputs), ("Outputs", cut.outputs)):
            top = QTreeWidgetItem([f"{title} ({len(tensors)})"])
            top.setFirstColumnSpanned(True)
            self.tree.addTopLevelItem(top)
            for tensor in tensors:
                top.addChild(_tensor_item(tensor))
            top.setExpanded(True)
        for column in (1, 2):
            self.tree.resizeColumnToContents(column)
        ops = Counter(self.model.graph.nodes[i].op_type for i in cut.nodes)
        listed = ", ".join(f"{op} ×{n}" if n > 1 else op for op, n in ops.most_common(10))
        more = f", … ({len(ops) - 10} more kinds)" if len(ops) > 10 else ""
        self.contents.setText(f"Contains: {listed}{more}")


def _tensor_item(tensor: CutTensor) -> QTreeWidgetItem:
    ttype = tensor.type
    kind = ttype.dtype or "?"
    if ttype.kind != "tensor":
        kind = f"{ttype.kind}<{kind}>"
    # onnx names the dimensions it cannot tell "unk__17": to a user that is just unknown.
    shape = re.sub(r"\bunk__\d+\b", "?", ttype.shape_text())
    item = QTreeWidgetItem([tensor.name, kind, shape])
    item.setToolTip(0, tensor.describe())
    if ttype.shape is None or ttype.dtype is None:
        item.setToolTip(2, "Unknown: shape inference could not tell")
    return item


class ExtractFlow(QObject):
    """Writes a cut on a worker; ``finished(WrittenCut)`` or ``failed(str)``; then offers
    to open it or to run it against the full model (``partChecked``)."""

    finished = Signal(object)
    failed = Signal(str)
    partChecked = Signal(object)  # list[PartCheck] after "Run This Part"

    def __init__(self, parent: QWidget | None, model: Model, cut: Cut, dest: Path,
                 protect: list[Path], interactive: bool = True,
                 last_input: Callable[[], RunRequest | None] | None = None) -> None:
        super().__init__(parent)
        self.parent_widget, self.model, self.cut = parent, model, cut
        self.dest, self.protect, self.interactive = dest, protect, interactive
        self.last_input = last_input
        self.source = ""  # what the full model was fed for "Run This Part"
        self.runner = TaskRunner(self)
        self.runner.finished.connect(self._done)
        self.runner.failed.connect(self._failed)
        self.progress: QProgressDialog | None = None
        self.written: WrittenCut | None = None

    def start(self) -> None:
        from onnxstudio.model.cut import write_cut

        model, cut, dest, protect = self.model, self.cut, self.dest, self.protect

        def work(context: TaskContext) -> WrittenCut:
            context.progress("Writing", 0.0)
            return write_cut(model, cut, dest, protect=protect)

        if self.interactive:
            self.progress = QProgressDialog(f"Extracting to {self.dest.name}…", "", 0, 0,
                                            self.parent_widget)
            self.progress.setCancelButton(None)
            self.progress.setWindowTitle(TITLE)
            self.progress.setMinimumDuration(300)
            self.progress.setWindowModality(Qt.WindowModality.WindowModal)
        self.runner.start(work)

    def _close_progress(self) -> None:
        if self.progress is not None:
            self.progress.reset()
            self.progress.deleteLater()
            self.progress = None

    def _done(self, written: WrittenCut) -> None:
        self._close_progress()
        self.written = written
        self.finished.emit(written)
        if not self.interactive:
            return
        data = f"\nWeights: {written.data_path.name}" if written.data_path else ""
        answer = self.ask_next(f"Wrote {written.path.name} ({self.cut.summary()}).{data}\n\n"
                               "Open it in a new tab?")
        opener: Any = getattr(self.parent_widget, "open_paths", None)
        if answer == "open" and opener is not None:
            opener([str(written.path)])
        elif answer == "run":
            self.run_part()

    def ask_next(self, text: str) -> str:
        """"open", "run" (this part, against the full model) or "close"."""
        box = QMessageBox(QMessageBox.Icon.Question, TITLE, text, parent=self.parent_widget)
        open_button = box.addButton("Open in New Tab", QMessageBox.ButtonRole.AcceptRole)
        run_button = box.addButton("Run This Part", QMessageBox.ButtonRole.ActionRole)
        run_button.setToolTip("Run the full model on the last input you ran (random inputs "
                              "if none), then this part on the values it makes at the cut, "
                              "and compare the outputs")
        box.addButton(QMessageBox.StandardButton.Close)
        box.setDefaultButton(open_button)
        box.exec()
        clicked = box.clickedButton()
        return "open" if clicked is open_button else "run" if clicked is run_button else "close"

    def run_part(self) -> None:
        """Run the written part on the full model's values at the cut, on a worker.

        The full model is fed the last input the user ran (the image, the .npy files),
        so the part is checked on the values that really flowed; random inputs only when
        nothing was run yet.
        """
        from onnxstudio.runner.cut_check import request_input, run_part

        assert self.written is not None  # offered only after the part was written
        source, part = Path(self.model.path), self.written.path
        request = self.last_input() if self.last_input is not None else None
        if request is not None and request.random:
            request = None

        def work(context: TaskContext) -> tuple[str, list[Any]]:
            if request is None:
                return "random inputs", run_part(source, part, cancel=context.token)
            name, feeds = request_input(source, request, cancel=context.token)
            return f"from {name}, the last input run", run_part(source, part, feeds=feeds,
                                                               cancel=context.token)

        self.checker = TaskRunner(self)
        self.checker.finished.connect(self._checked)
        self.checker.failed.connect(self._failed)
        self.checker.start(work)

    def _checked(self, answer: tuple[str, list[Any]]) -> None:
        self.source, checks = answer
        self.partChecked.emit(checks)
        if not self.interactive:
            return
        ok = all(c.matches for c in checks)
        verdict = ("Its outputs match the full model's values." if ok else
                   "Its outputs DIFFER from the full model's values.")
        lines = "\n".join(c.describe() for c in checks)
        show = QMessageBox.information if ok else QMessageBox.warning
        name = self.written.path.name if self.written is not None else "the part"
        show(self.parent_widget, TITLE, f"Ran {name} on the full model's "
             f"values at the cut ({self.source}).\n{verdict}\n\n{lines}")

    def _failed(self, message: str) -> None:
        self._close_progress()
        self.failed.emit(message)
        if self.interactive:
            QMessageBox.warning(self.parent_widget, TITLE, message)


def _open_paths(window: QWidget | None) -> list[Path]:
    tabs = getattr(window, "model_tabs", None)
    return [Path(t.path) for t in tabs()] if tabs is not None else []


def choose_destination(parent: QWidget | None, model: Model) -> Path | None:
    """Ask where to save; a file that is open in a tab is refused (asked again)."""
    source = Path(model.path)
    suggestion = str(source.with_name(f"{source.stem}_cut.onnx"))
    while True:
        name, _ = QFileDialog.getSaveFileName(parent, "Save Sub-model", suggestion,
                                              "ONNX model (*.onnx)")
        if not name:
            return None
        dest = Path(name)
        if dest.suffix.lower() != ".onnx":
            dest = dest.with_name(dest.name + ".onnx")
        if dest.exists() and any(dest.resolve() == p.resolve()
                                 for p in [source, *_open_paths(parent)]):
            QMessageBox.warning(parent, TITLE, f"{dest.name} is open; choose another name.")
            suggestion = str(dest.with_name(f"{dest.stem}_cut.onnx"))
            continue
        return dest


def start_extract(window: QWidget | None, model: Model | None, box_ids: list[str],
                  dest: str | Path | None = None,
                  last_input: Callable[[], RunRequest | None] | None = None
                  ) -> ExtractFlow | None:
    """Model → Extract Selection… (Ctrl+Shift+X) for the canvas selection ``box_ids``.

    ``dest`` skips the dialogs (tests, scripts); ``last_input`` gives the input the user
    last ran, for "Run This Part". Returns the running flow, or None when there was
    nothing to cut or the user backed out.
    """
    if model is None:
        return None
    try:
        cut = cut_from_nodes(model, selection_node_ids(model, box_ids))
    except CutError as exc:
        QMessageBox.information(window, TITLE, f"{exc}.\n\nSelect the nodes to extract "
                                "on the canvas (Ctrl-click adds more), then try again.")
        return None
    interactive = dest is None
    if interactive:
        dialog = ExtractDialog(window, model, cut)
        if dialog.exec() != QDialog.DialogCode.Accepted or dialog.cut is None:
            return None
        cut = dialog.cut
        chosen = choose_destination(window, model)
        if chosen is None:
            return None
        dest = chosen
    assert dest is not None
    flow = ExtractFlow(window, model, cut, Path(dest), _open_paths(window), interactive,
                       last_input)
    flow.start()
    return flow
