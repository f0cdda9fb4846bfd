"""Shape inference in a child process, for graphs large enough to freeze a window.

onnx's C++ inference holds the GIL for its whole run (230 ms on a 100k-node graph),
which no worker thread can hide from the GUI thread; a child process can, and on a
multi-core machine it runs while the parent builds and draws the graph. The child reads
the model itself (read-only) and hands back only the value types it found, as one flat
list of ValueInfoProtos: no nodes, no weights, so the parent parses little.
``ForkedInference`` is the one-shot commands' variant: a fork of the process itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from onnxstudio.concurrency.child import INFER_SHAPES, Child
from onnxstudio.concurrency.fork import Forked, ForkFailed
from onnxstudio.errors import Cancelled

if TYPE_CHECKING:
    import onnx

    from onnxstudio.model.graph import TensorType
    from onnxstudio.model.pieces import Pieces

TIMEOUT_S = 600
FORK_FAILED = "shape inference could not run (its process failed)"


class ChildInference:
    """One child process inferring ``model``'s shapes; ``result()`` waits for it."""

    def __init__(self, model: Path, sizes: dict[str, int] | None = None,
                 data: bytes | None = None,
                 kill_on: Callable[[Callable[[], None]], object] | None = None) -> None:
        """``sizes``: infer as the cost table does (``cost.shapes.concrete_sizes``: the
        inputs' symbolic dims sized, data propagated; the sizes used land in ``dims``);
        ``data``: the model's edited bytes instead of its file; ``kill_on`` (a cancel
        token's ``watch``) is handed the child's ``stop``, and ``result`` then raises
        Cancelled."""
        self._folder = Path(tempfile.mkdtemp(prefix="onnxstudio-infer-"))
        self._out = self._folder / "types.pb"
        self._child: Child | None = None
        self.dims: dict[str, int] = {}
        args = [] if sizes is None else [json.dumps(sizes)]
        try:
            if data is not None:
                model = self._folder / "edited.onnx"
                model.write_bytes(data)
            self._child = Child(INFER_SHAPES, str(model), str(self._out), *args,
                                folder=self._folder)
        except OSError as exc:
            self._problem: str | None = f"shape inference could not run ({type(exc).__name__})"
        else:
            self._problem = None
            if kill_on is not None:
                kill_on(self._child.stop)

    def result(self) -> tuple[onnx.ModelProto | None, str | None]:
        """(types-only model, problem or None), as :func:`infer_shapes` returns."""
        try:
            if self._child is None:
                return None, self._problem
            try:
                stdout, _ = self._child.communicate(timeout=TIMEOUT_S)
                report = json.loads(stdout.strip().splitlines()[-1])
            except (OSError, subprocess.SubprocessError, ValueError, IndexError) as exc:
                self.cancel()
                if self._child.stopped:
                    raise Cancelled("shape inference cancelled") from exc
                return None, f"shape inference could not run ({type(exc).__name__})"
            problem = report.get("problem")
            self.dims = report.get("dims", {})
            if not report.get("ok") or not self._out.exists():
                return None, problem or "shape inference failed"
            from onnxstudio.model.onnx_core import ModelProto
            from onnxstudio.model.pieces import VALUE_INFO_KEY, parse_in_pieces

            types = parse_in_pieces(ModelProto(), self._out.read_bytes(), VALUE_INFO_KEY)
            return types, problem
        finally:
            shutil.rmtree(self._folder, ignore_errors=True)

    def cancel(self) -> None:
        if self._child is not None:
            self._child.kill()
        shutil.rmtree(self._folder, ignore_errors=True)


class ForkedInference:
    """Shape inference in a forked copy of this process, for a one-shot command (CLI
    export) to build the graph meanwhile on another core: no interpreter start and no
    second read of the file, which cost the spawned child above what it saved. It hands
    back each value's type, read from the inferred model as ``apply_inferred_types``
    reads it (on dag100k 0.2 s of the fork's time instead of this process'). The fork
    skips guard.py's walk: a graph onnx crashes on ends the fork, and ``load_model``
    then asks the guard for the reason."""

    def __init__(self, model: onnx.ModelProto | Path) -> None:
        """``model``: parsed, or its file, which the fork then reads itself. The CLI
        export starts the fork as soon as onnx_core is loaded, ahead of numpy and its
        other imports and of its own read, so the types are back before the graph is
        built; a fork that reads the file answers the loader's byte checks first
        (:meth:`checks`)."""
        self._said = -1  # the fork's early word on the file's bytes
        if isinstance(model, Path):
            import onnxstudio.model.load  # noqa: F401  (imported once, before the fork)

            self._said, tell = os.pipe()
            self._fork = Forked(lambda: _from_file(model, tell),
                                alone=lambda: _from_file(model, -1))
            os.close(tell)
            if not self._fork.running:  # no fork to answer the byte checks
                self._close()
            self._path = model
        else:
            self._fork = Forked(lambda: _inferred_types(model))

    def checks(self, data: bytes, pieces: Pieces | None) -> tuple[bool, bool]:
        """load.byte_checks of ``data``, as the fork answered them for the file (BERT-96:
        24 ms of this process' read), if the file it read is the one this process read
        (the same stamp and size); asked here otherwise."""
        from onnxstudio.model.load import byte_checks
        from onnxstudio.model.source import file_stamp

        said, self._said = self._said, -1
        if said >= 0:
            with os.fdopen(said, "rb") as pipe:
                word = pipe.read()
            with contextlib.suppress(Exception):  # nothing said: the fork failed early
                stamp, size, invalid, external = pickle.loads(word)
                if stamp is not None and stamp == file_stamp(self._path) and size == len(data):
                    return invalid, external
        return byte_checks(data, pieces)

    def result(self) -> tuple[dict[str, TensorType | None] | None, str | None]:
        """(name -> inferred type, or None; problem or None), for ``apply_types``."""
        self._close()
        try:
            return self._fork.result()
        except ForkFailed:
            return None, FORK_FAILED

    def cancel(self) -> None:
        self._close()
        self._fork.cancel()

    def _close(self) -> None:
        if self._said >= 0:
            os.close(self._said)
            self._said = -1


def _from_file(path: Path, tell: int
               ) -> tuple[dict[str, TensorType | None] | None, str | None]:
    """The fork's work on a model file: read it, tell the byte checks through ``tell``
    (then closed; -1: nobody listens), parse it and infer."""
    from onnxstudio.model import load
    from onnxstudio.model.source import file_stamp
    from onnxstudio.model.wire import repair_utf8

    try:
        stamp = file_stamp(path)
        data = load.read_bytes(path)
        text = load.is_text(path, data)
        invalid, external = (False, False) if text else load.byte_checks(data)
        if tell >= 0:
            os.write(tell, pickle.dumps((stamp, len(data), invalid, external)))
    finally:
        if tell >= 0:
            os.close(tell)
    if text:
        proto = load.read_model_proto(path)[0]
    else:
        proto = load.parse_binary(path, data)[0]
        if invalid:
            repair_utf8(proto)
    return _inferred_types(proto)


def _inferred_types(proto: onnx.ModelProto
                    ) -> tuple[dict[str, TensorType | None] | None, str | None]:
    from onnxstudio.model.inference import infer_shapes
    from onnxstudio.model.inferred import inferred_types

    inferred, problem = infer_shapes(proto, guarded=False)  # see ForkedInference
    return (None if inferred is None else inferred_types(inferred)), problem


def types_only(inferred: onnx.ModelProto, nested: bool = True) -> onnx.ModelProto:
    """Every ValueInfoProto of the main graph and (``nested``) its bodies, in one flat
    graph."""
    from onnxstudio.model.inferred import value_infos
    from onnxstudio.model.onnx_core import ModelProto

    out = ModelProto()
    out.graph.value_info.extend(value_infos(inferred.graph, nested))
    return out


def child_main(argv: list[str]) -> int:
    """Entry point of the child: infer, write the types, print one JSON line."""
    from onnxstudio.model.inference import infer_shapes
    from onnxstudio.model.load import read_model_proto

    model, out = Path(argv[0]), Path(argv[1])
    try:
        proto, _ = read_model_proto(model)
    except Exception as exc:
        print(json.dumps({"ok": False, "problem": str(exc)}))
        return 0
    report: dict[str, object] = {}
    if len(argv) > 2:  # sized, as the cost table infers
        from onnxstudio.model.cost.shapes import fix_input_dims, infer_sized

        report["dims"] = fix_input_dims(proto, json.loads(argv[2]))
        inferred, problem = infer_sized(proto)
        if inferred is not None:
            types = types_only(inferred, nested=False)
            types.graph.input.extend(inferred.graph.input)
            out.write_bytes(types.SerializeToString())
    else:
        inferred, problem = infer_shapes(proto)
        if inferred is not None:
            out.write_bytes(types_only(inferred).SerializeToString())
    print(json.dumps({"ok": inferred is not None, "problem": problem, **report}))
    return 0
