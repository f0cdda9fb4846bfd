"""An editing session: the original model, a working copy, and the undo/redo history.

Qt-free, so the window (which wraps it in a QUndoStack) and the CLI share one behaviour:
the script a session saves, applied headless to the same file, gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import onnx

from onnxstudio.concurrency.gil_runs import let_others_run
from onnxstudio.errors import EditError
from onnxstudio.model.edit.check import CheckReport, check_edited
from onnxstudio.model.edit.names import NodeIndex, indexed
from onnxstudio.model.edit.ops import apply_edit, describe
from onnxstudio.model.edit.save import SavedModel, save_edited
from onnxstudio.model.edit.script import script_text
from onnxstudio.model.load import read_model_proto
from onnxstudio.model.pieces import copy_in_pieces

# Edits that leave the node list as it was (a node rename keeps the index true itself).
_NODES_KEPT = frozenset({"rename", "set_dim", "set_attribute", "set_metadata",
                         "set_initializer", "add_output", "remove_output",
                         "_restore_initializer"})


@dataclass(frozen=True)
class Step:
    """One applied edit and the edit that undoes it."""

    edit: dict[str, Any]
    undo: dict[str, Any]

    @property
    def label(self) -> str:
        return describe(self.edit)


class EditSession:
    def __init__(self, original: onnx.ModelProto, source: str | Path,
                 current: onnx.ModelProto | None = None) -> None:
        """``current``: the working copy, made by the caller (``open`` makes it in
        pieces); a copy of ``original`` when not given."""
        self.source = Path(source)
        self.original = original
        if current is None:
            current = onnx.ModelProto()
            current.CopyFrom(original)
        self.current = current
        self._steps: list[Step] = []
        self._position = 0  # steps before it are applied
        self._saved_position = 0
        self._nodes = NodeIndex(self.current.graph)

    @classmethod
    def open(cls, path: str | Path) -> EditSession:
        """The file's session, its node index built here (a worker, in the window); the
        working copy is made in pieces, so the window keeps the GIL for its turns."""
        proto, _external = read_model_proto(path)
        session = cls(proto, path, copy_in_pieces(proto, let_others_run))
        session._nodes.prepare()
        return session

    def _apply(self, edit: Mapping[str, Any]) -> dict[str, Any]:
        with indexed(self._nodes):
            try:
                return apply_edit(self.current, edit)
            finally:
                if edit.get("op") not in _NODES_KEPT:
                    self._nodes.drop()

    # ---------------------------------------------------------------- history
    @property
    def steps(self) -> list[Step]:
        return list(self._steps)

    @property
    def position(self) -> int:
        return self._position

    @property
    def edits(self) -> list[dict[str, Any]]:
        """The applied edits, as a script replays them."""
        return [s.edit for s in self._steps[: self._position]]

    @property
    def modified(self) -> bool:
        return self._position != self._saved_position

    def apply(self, edit: Mapping[str, Any]) -> Step:
        """Apply ``edit`` (the redo tail is dropped); a refused edit changes nothing."""
        edit = dict(edit)
        undo = self._apply(edit)
        del self._steps[self._position:]
        if self._saved_position > self._position:
            self._saved_position = -1  # the saved state can no longer be reached
        step = Step(edit, undo)
        self._steps.append(step)
        self._position += 1
        return step

    def apply_all(self, edits: Iterable[Mapping[str, Any]]) -> list[Step]:
        """Apply a script; on the first refusal, undo what it applied and re-raise."""
        done: list[Step] = []
        for number, edit in enumerate(edits, 1):
            try:
                done.append(self.apply(edit))
            except EditError as exc:
                for _ in done:
                    self.undo()
                del self._steps[self._position:]
                raise EditError(f"edit {number}: {exc}") from exc
        return done

    def undo(self) -> Step | None:
        if self._position == 0:
            return None
        self._position -= 1
        step = self._steps[self._position]
        self._apply(step.undo)
        return step

    def redo(self) -> Step | None:
        if self._position >= len(self._steps):
            return None
        step = self._steps[self._position]
        step = Step(step.edit, self._apply(step.edit))
        self._steps[self._position] = step
        self._position += 1
        return step

    # ---------------------------------------------------------------- results
    def check(self) -> CheckReport:
        return check_edited(self.current, self.original)

    def save(self, dest: str | Path, *, protect: Iterable[Path] = ()) -> SavedModel:
        """Check, then write to ``dest`` (never the source); errors refuse the save."""
        report = self.check()
        if report.errors:
            raise EditError(f"not saved: {report.errors[0]}")
        saved = save_edited(self.current, self.source, dest, protect=protect)
        self._saved_position = self._position
        return saved

    def script(self) -> str:
        return script_text(self.edits)

    def model_bytes(self) -> bytes:
        """The working copy for an in-memory onnxruntime session (external data stays
        where it is: the session resolves it next to the source file)."""
        return self.current.SerializeToString()
