"""The window's Compare and Write Stages of a big model, run in a child process.

Both create several onnxruntime sessions (Compare up to five, the stages' check one per
stage and one for the whole model); onnxruntime holds the GIL while it frees each (and
for parts of creating it), and reading, inferring and serialising the model hold it
too: on a worker thread dag100k's Compare froze the window 675 ms and its Write Stages
3.5 s (writing the stages, protobuf work, held it for seconds more). For a model of
``session_host.HOST_BYTES`` or more the window runs the whole job in a child
(:func:`isolated`), which sends back only the answer the window shows: a Comparison's
per-value rows, or the written files and their ChainCheck, never a tensor. Long lists in the answer
come back in runs (``pickle_runs``), so no single ``pickle.load`` holds the GIL long.
The CLI runs both in-process.
"""

from __future__ import annotations

import dataclasses
import pickle
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from onnxstudio.concurrency.child import INSPECT, Child, below_window
from onnxstudio.errors import (
    Cancelled,
    RunError,
    describe_failure,
    details_for,
    user_message,
    with_details,
)
from onnxstudio.pickle_runs import dump_runs, load_runs
from onnxstudio.runner.cancel import CancelToken
from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.runner.session_host import ending, hosted

if TYPE_CHECKING:
    from onnxstudio.model.graph import Model
    from onnxstudio.model.split import SplitPlan
    from onnxstudio.model.split_write import WrittenSplit
    from onnxstudio.runner.compare import Comparison, RunConfig
    from onnxstudio.runner.intermediates import Capture
    from onnxstudio.runner.split_check import ChainCheck

TIMEOUT_S = 3600  # a big model's compare may take long, but never forever
ROWS_PER_PIECE = 2000  # ~10 ms of unpickling each


def _compare(*args: Any) -> Any:
    from onnxstudio.runner.compare import compare

    return compare(*args)


def _capture(*args: Any) -> Any:
    from onnxstudio.runner.intermediates import capture

    return capture(*args)


def write_and_check(model: Model, plan: SplitPlan, folder: Path
                    ) -> tuple[WrittenSplit, ChainCheck]:
    """Write Stages: the stages and manifest of ``plan`` into ``folder``, then their
    chain checked against the whole model."""
    from onnxstudio.model.split_write import manifest_json, write_split
    from onnxstudio.runner.split_check import check_chain

    written = write_split(model, plan, folder)
    stages = manifest_json(model, plan)["stages"]
    return written, check_chain(model.path, written.folder, stages)


def _write_stages(path: Path, plan: SplitPlan, folder: Path) -> Any:
    """In the child: the model read again from its file (node ids are the file's)."""
    from onnxstudio.model import load_model

    return write_and_check(load_model(path), plan, folder)


JOBS: dict[str, Callable[..., Any]] = {"compare": _compare, "capture": _capture,
                                       "write_stages": _write_stages}


def window_capture(request: RunRequest, names: list[str] | None,
                   cancel: CancelToken | None = None) -> Capture:
    """The window's tensor capture (a clicked edge, Capture All): in a child for a big
    model (its session with extra outputs, and the one that prepares the feeds)."""
    from onnxstudio.runner.intermediates import capture

    if not hosted(request.model, request.model_bytes):
        return capture(request, names, cancel=cancel)
    answer: Capture = isolated("capture", request, names, model=request.model, cancel=cancel)
    return answer


def window_compare(request: RunRequest, a: RunConfig, b: RunConfig,
                   tolerance: float | None, model_b: Path | None,
                   cancel: CancelToken | None = None) -> Comparison:
    """The window's ``compare``: in a child for a big model, else here (faster)."""
    from onnxstudio.runner.compare import compare

    if not hosted(request.model, request.model_bytes):
        return compare(request, a, b, tolerance, model_b, cancel=cancel)
    answer: Comparison = isolated("compare", request, a, b, tolerance, model_b,
                                  model=request.model, cancel=cancel)
    return answer


def window_write_stages(model: Model, plan: SplitPlan, folder: Path
                        ) -> tuple[WrittenSplit, ChainCheck]:
    """The Split dialog's Write Stages: for a big model all of it in a child (writing
    the stages holds the GIL in protobuf for seconds too), else here."""
    path = Path(model.path)
    if not hosted(path, None):
        return write_and_check(model, plan, folder)
    answer: tuple[WrittenSplit, ChainCheck] = isolated("write_stages", path, plan, folder,
                                                       model=path)
    return answer


def isolated(job: str, *args: Any, model: Path, cancel: CancelToken | None = None) -> Any:
    """``JOBS[job](*args)`` in a child process; its failure comes back raised as the
    same one line (a RunError), naming ``model`` when the child itself stops; a cancel
    kills the child."""
    folder = Path(tempfile.mkdtemp(prefix="onnxstudio-inspect-"))
    task, out = folder / "job.pickle", folder / "answer.pickle"
    try:
        task.write_bytes(pickle.dumps((job, args), 5))
        with (folder / "stderr.txt").open("w+") as errors:  # a file: never a full pipe
            child = Child.start(
                INSPECT, str(task), str(out), folder=folder, stderr=errors,
                kill_on=cancel.watch if cancel is not None else None,
                failed=lambda exc: RunError(
                    f"{model.name}: onnxruntime's process could not start ({exc})"))
            try:
                child.follow(lambda _line: None, timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired as exc:
                raise RunError(f"{model.name}: no answer in {TIMEOUT_S // 60} minutes"
                               ) from exc
            errors.seek(0)
            stderr = errors.read()
        if cancel is not None and cancel.cancelled:
            raise Cancelled("cancelled")
        if not out.exists():
            lines = [ln for ln in stderr.splitlines() if ln.strip()]
            last = lines[-1].strip()[:300] if lines else ending(child.process.returncode)
            raise RunError(f"{model.name}: onnxruntime's process stopped ({last})")
        with out.open("rb") as stream:
            answer = read_answer(stream)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if isinstance(answer, _Failure):
        raise RunError(with_details(answer.line, answer.details))
    return answer


@dataclasses.dataclass(frozen=True)
class _Failure:
    line: str
    details: str


def child_main(argv: list[str]) -> int:
    """Entry point of the child: run the pickled job, write the answer (or the failure's
    one line) next to it, whole or not at all."""
    below_window()
    task, out = Path(argv[0]), Path(argv[1])
    job, args = pickle.loads(task.read_bytes())
    try:
        answer = JOBS[job](*args)
    except Exception as exc:
        line = user_message(exc) or describe_failure(exc)
        answer = _Failure(line, details_for(line))
    part = out.with_suffix(".part")  # a child killed midway wrote none
    with part.open("wb") as stream:
        write_answer(answer, stream)
    part.replace(out)
    return 0


def _pieces(answer: Any) -> dict[str, list[Any]]:
    """The answer's fields that go in runs: long lists, and dicts of arrays (a capture's
    tensors, one per load: one ``pickle.load`` of them all copied up to 1 GiB holding the
    GIL)."""
    if not dataclasses.is_dataclass(answer) or isinstance(answer, type):
        return {}
    found: dict[str, list[Any]] = {}
    for f in dataclasses.fields(answer):
        value = getattr(answer, f.name)
        if isinstance(value, list) and len(value) > ROWS_PER_PIECE:
            found[f.name] = value
        elif isinstance(value, dict) and value and all(
                isinstance(v, np.ndarray) for v in value.values()):
            found[f.name] = list(value.items())
    return found


def write_answer(answer: Any, stream: BinaryIO) -> None:
    """The answer with its pieces' fields emptied and their names, then each in runs."""
    pieces = _pieces(answer)
    if pieces:
        answer = dataclasses.replace(answer, **{
            name: {} if isinstance(getattr(answer, name), dict) else []
            for name in pieces})
    pickle.dump((answer, list(pieces)), stream, 5)
    for name, rows in pieces.items():
        arrays = isinstance(getattr(answer, name), dict)
        dump_runs(rows, stream, 1 if arrays else ROWS_PER_PIECE)


def read_answer(stream: BinaryIO) -> Any:
    """What ``write_answer`` wrote (our own file), a run per ``pickle.load``: between
    runs this worker thread hands the GIL to the window."""
    answer, names = pickle.load(stream)
    if not names:
        return answer
    fields: dict[str, Any] = {}
    for name in names:
        rows = load_runs(lambda: pickle.load(stream))
        fields[name] = dict(rows) if isinstance(getattr(answer, name), dict) else rows
    return dataclasses.replace(answer, **fields)
