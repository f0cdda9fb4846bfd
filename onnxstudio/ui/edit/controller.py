"""One tab's editing: the core EditSession behind a QUndoStack, rebuilt models off-thread.

Each edit is applied to the session first (a refusal changes nothing and is reported),
then pushed as an already-done command so Undo/Redo replay the core's inverses. After
every change the edited proto is copied and turned into a Model (shape inference,
extraction, inspector views) on a worker; the newest result wins.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from onnxstudio.concurrency.gil_runs import let_others_run
from onnxstudio.errors import EditError, OnnxStudioError
from onnxstudio.layout.labels import model_dim_abbreviations
from onnxstudio.model import Model
from onnxstudio.model.edit import CheckReport, EditSession, SavedModel, describe
from onnxstudio.model.load import parse_binary
from onnxstudio.model.open import model_from_proto
from onnxstudio.model.operators import prepare_model_views
from onnxstudio.model.pieces import serialise_in_pieces
from onnxstudio.runner.edit_check import CHILD_NODES, checks, checks_isolated
from onnxstudio.runner.trial import run_problem
from onnxstudio.ui.tasks import TaskContext, TaskRunner, next_turn


@dataclass
class Rebuilt:
    """What the worker hands back: the edited model, its bytes for onnxruntime, checks."""

    model: Model
    model_bytes: bytes
    report: CheckReport


class _EditCommand(QUndoCommand):
    """An edit already applied to the session; undo/redo replay the core's inverses."""

    def __init__(self, controller: EditController, edit: Mapping[str, Any]) -> None:
        super().__init__(describe(edit))
        self._controller = controller
        self._first = True

    def redo(self) -> None:
        if self._first:  # applied before it was pushed
            self._first = False
            return
        self._controller.session_redo()

    def undo(self) -> None:
        self._controller.session_undo()


class EditController(QObject):
    """Edits of the model shown in one tab."""

    # Signals carry ``owner`` (the tab) so listeners need no closures over it.
    modelChanged = Signal(object, object)  # owner, Rebuilt: after every edit/undo/redo
    modifiedChanged = Signal(object, bool)  # owner, has edits not saved
    refused = Signal(str)  # why an edit was not applied
    failed = Signal(str)  # the edited model could not be rebuilt

    def __init__(self, path: Path, owner: object, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.path, self.owner = path, owner
        self.stack = QUndoStack(self)
        self.stack.cleanChanged.connect(self._clean_changed)
        self.report = CheckReport()
        self._session: EditSession | None = None
        self._opening: Future[EditSession] | None = None  # prefetch()'s session, parsing
        self._opener = TaskRunner(self)
        self._opener.finished.connect(self._opened)
        # edits committed while the prefetch parses: (edits, macro label or None)
        self._waiting: list[tuple[list[dict[str, Any]], str | None]] = []
        self._runs: bool | None = None  # the original runs: asked once, if an edit fails to
        self._builder = TaskRunner(self)
        self._snapshot_due = False  # a rebuild starts next turn
        self._builder.finished.connect(self._built)
        self._builder.failed.connect(self._build_failed)

    def _clean_changed(self, clean: bool) -> None:
        self.modifiedChanged.emit(self.owner, not clean)

    def _built(self, rebuilt: Rebuilt) -> None:
        if self._snapshot_due:  # edited while its snapshot was taken: the next one shows
            return
        self.report = rebuilt.report
        self.modelChanged.emit(self.owner, rebuilt)

    def _build_failed(self, message: str) -> None:
        if not self._snapshot_due:
            self.failed.emit(message)

    @property
    def session(self) -> EditSession:
        """Opened on the first edit: viewing a model never pays for a second parse. When
        ``prefetch`` started it, only the rest of that parse is waited for (by a save
        before it is done; an edit waits in ``_apply_or_wait`` instead)."""
        if self._session is None:
            self._take_session()
        assert self._session is not None
        return self._session

    def _take_session(self) -> None:
        """The prefetched session (opened here if there was none, or it failed), then
        the edits committed while it was opening, in their order."""
        if self._opening is not None:
            opening, self._opening = self._opening, None
            try:
                self._session = opening.result()
            except Exception:  # opened again below, which reports it as the first did
                self._session = None
        if self._session is None:
            self._session = EditSession.open(self.path)
        waiting, self._waiting = self._waiting, []
        for edits, label in waiting:
            self._apply_now(edits, label)

    def _opened(self, _result: object) -> None:
        """The prefetch's parse is done: the edits waiting for it are applied now."""
        if self._session is None and self._waiting:
            try:
                self._take_session()
            except OnnxStudioError as exc:  # the file went away: the edits cannot apply
                self._waiting.clear()
                self.refused.emit(str(exc))

    def prefetch(self) -> None:
        """Start opening the session on a worker: an edit is likely (a context menu or an
        editor opened) and the user takes a moment to choose. Parsed on the GUI thread at
        the edit, BERT-96 froze the window for 93 ms, dag100k for 163."""
        if self._session is not None or self._opening is not None:
            return
        future: Future[EditSession] = Future()
        path = self.path

        def work(_context: TaskContext) -> None:
            try:
                future.set_result(EditSession.open(path))
            except Exception as exc:  # the edit itself reports it
                future.set_exception(exc)

        self._opening = future
        self._opener.start(work, quiet_gc=True)  # the node index: 100k entries

    def _still_opening(self) -> bool:
        """The prefetch's parse is running: an edit committed now waits for it."""
        return self._session is None and self._opening is not None \
            and not self._opening.done()

    @property
    def modified(self) -> bool:
        return not self.stack.isClean() or bool(self._waiting)

    @property
    def edits(self) -> list[dict[str, Any]]:
        return self._session.edits if self._session is not None else []

    # ---------------------------------------------------------------- editing
    def apply(self, edit: Mapping[str, Any]) -> bool:
        """Apply one edit; False (and ``refused``) when the core refuses it."""
        return self._apply_or_wait([dict(edit)], None)

    def apply_script(self, edits: Iterable[Mapping[str, Any]], label: str) -> bool:
        """All of a script's edits as one undo step; none if any is refused."""
        return self._apply_or_wait([dict(edit) for edit in edits], label)

    def _apply_or_wait(self, edits: list[dict[str, Any]], label: str | None) -> bool:
        """Applied now or, while the prefetch still parses the model, once it is done
        (True: a refusal is reported then). Waiting for the parse in the handler froze
        the window for the rest of it (dag100k: up to 163 ms)."""
        if self._still_opening():
            self._waiting.append((edits, label))
            return True
        return self._apply_now(edits, label)

    def _apply_now(self, edits: list[dict[str, Any]], label: str | None) -> bool:
        """``edits`` applied to the session and pushed, one undo step (a macro when
        ``label``); False (and ``refused``) when the core refuses one."""
        session = self.session
        try:
            if label is None:
                session.apply(edits[0])
            else:
                session.apply_all(edits)
        except EditError as exc:
            self.refused.emit(str(exc))
            return False
        if label is not None:
            self.stack.beginMacro(label)
        for edit in edits:
            self.stack.push(_EditCommand(self, edit))
        if label is not None:
            self.stack.endMacro()
        self._rebuild()
        return True

    def session_undo(self) -> None:
        self.session.undo()
        self._rebuild()

    def session_redo(self) -> None:
        self.session.redo()
        self._rebuild()

    def _rebuild(self) -> None:
        """Rebuild the edited model next turn, so that edits made meanwhile are in it."""
        if not self._snapshot_due:
            self._snapshot_due = True
            next_turn(self, self._start_rebuild)

    def _start_rebuild(self) -> None:
        self._snapshot_due = False
        session = self.session
        original, path = session.original, self.path

        def work(context: TaskContext) -> Rebuilt:
            # The snapshot is serialised here, record by record with the GIL handed over
            # between runs: one SerializeToString on the GUI thread froze it (BERT-96:
            # 11-27 ms, dag100k 15-25). An edit made meanwhile starts a newer rebuild,
            # which cancels this one, so a snapshot it touched is never shown.
            def between() -> None:
                context.check()
                let_others_run()

            data = serialise_in_pieces(session.current, between)
            context.progress("Checking the edited model", 0.2)
            proto = parse_binary(path, data)[0]  # in pieces: the window gets turns
            # The exporter's intermediate shapes are stale after an edit (a stride changed
            # upstream): dropped by the checks and inferred afresh, so the canvas shows
            # what the edit makes.
            if len(proto.graph.node) > CHILD_NODES:  # onnx would hold the GIL for long
                checked = checks_isolated(data, path, context.token)
                proto.graph.ClearField("value_info")
                report, inferred = checked.report, (checked.types, checked.problem)
            else:
                report = checks(proto, path, lambda: original, self._original_runs)
                inferred = None
            context.check()
            model = model_from_proto(proto, path, inferred)
            prepare_model_views(model)
            model_dim_abbreviations(model)  # the Model panel's; dag100k: 40 ms of GUI thread
            return Rebuilt(model, serialise_in_pieces(proto, let_others_run), report)

        self._builder.start(work, quiet_gc=True)

    def _original_runs(self) -> bool:
        """Whether onnxruntime runs the original (asked once, when an edit fails to run;
        on the worker)."""
        if self._runs is None:
            original = self.session.original
            self._runs = run_problem(original.SerializeToString(), self.path,
                                     len(original.graph.node)) is None
        return self._runs

    @property
    def busy(self) -> bool:
        return self._snapshot_due or self._builder.busy or bool(self._waiting)

    # ---------------------------------------------------------------- saving
    def save_as(self, dest: Path, protect: Iterable[Path] = ()) -> SavedModel:
        saved = self.session.save(dest, protect=protect)
        self.stack.setClean()
        return saved

    def script(self) -> str:
        return self.session.script()
