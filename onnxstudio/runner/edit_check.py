"""What the window checks after each edit: onnx's checker, strict shape inference, one
trial run, and the edited model's shapes; for a large model in a child process.

onnx's checker and shape inference and onnxruntime's session creation hold the GIL for
their whole C++ call (dag100k's checker 0.2-0.3 s, its inference over a second): on a
worker thread each froze the window. Above ``CHILD_NODES`` nodes a child (hidden
command ``_check-edit``) gets the edited bytes, runs the same :func:`checks` and the
inference, and hands back the report and only the inferred value types; the worker
waits on it without the GIL. Smaller models check in-process: the child's start
(about half a second) would cost more than it saves, and their calls are short.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import onnx

from onnxstudio.concurrency.child import CHECK_EDIT, Child, below_window
from onnxstudio.errors import EditError, describe_failure
from onnxstudio.model.edit import CheckReport, check_edited
from onnxstudio.model.pieces import VALUE_INFO_KEY, parse_in_pieces
from onnxstudio.runner.cancel import CancelToken
from onnxstudio.runner.trial import TRIAL_MAX_NODES, run_problem

# Above: the checks run in a child process (as the open's shape inference does above
# the same size). It was 2,000: BERT-12's 1,088 nodes, checked on the worker,
# held the GIL 19-42 ms creating the trial's session, 23 ms in onnx's checker, 12 in its
# strict inference and 30 more inferring the shapes: the window froze for each, while
# the child's start costs the edit ~0.5 s more before it is drawn, not a frozen window.
CHILD_NODES = 400
TIMEOUT_S = 900


@dataclass
class Checked:
    """A child's answer: the report, the inferred value types (a types-only model, as
    ``infer_child.types_only`` makes) or None, and shape inference's warning."""

    report: CheckReport
    types: onnx.ModelProto | None
    problem: str | None


def checks(edited: onnx.ModelProto, path: Path,
           original: Callable[[], onnx.ModelProto | None],
           original_runs: Callable[[], bool]) -> CheckReport:
    """onnx's checks of ``edited`` (a copy of ``path``), then its stale intermediate
    shapes dropped (an edit upstream changed them) and, if it passed, one trial run:
    onnxruntime's refusal is reported when the ``original_runs`` (a model that never
    ran, with custom operators say, is not the edits' doing)."""
    report = check_edited(edited, original)
    edited.graph.ClearField("value_info")
    if report.ok and len(edited.graph.node) <= TRIAL_MAX_NODES:
        problem = run_problem(edited.SerializeToString(), path, len(edited.graph.node))
        report.cannot_run = problem if problem is not None and original_runs() else ""
    return report


def checks_isolated(edited: bytes, path: Path, cancel: CancelToken | None = None
                    ) -> Checked:
    """:func:`checks` and shape inference of the serialised ``edited`` in a child
    process, which reads the original from ``path`` when it needs it."""
    folder = Path(tempfile.mkdtemp(prefix="onnxstudio-edit-check-"))
    job, out = folder / "edited.onnx", folder / "types.pb"
    try:
        job.write_bytes(edited)
        child = Child.start(
            CHECK_EDIT, str(job), str(path), str(out), folder=folder,
            kill_on=cancel.watch if cancel is not None else None,
            failed=lambda exc: EditError(
                f"{path.name}: the edited model could not be checked ({exc})"))
        try:
            stdout, stderr = child.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired as exc:
            raise EditError(f"{path.name}: checking the edited model took over "
                            f"{TIMEOUT_S // 60} minutes") from exc
        if cancel is not None:
            cancel.check()
        return _answer(stdout, stderr, out, path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _answer(stdout: str, stderr: str, out: Path, path: Path) -> Checked:
    lines = stdout.strip().splitlines()
    try:
        said = json.loads(lines[-1]) if lines else None
    except ValueError:
        said = None
    if not isinstance(said, dict) or "failed" in said:
        last = (stderr.strip().splitlines() or ["no answer"])[-1]
        reason = said["failed"] if isinstance(said, dict) else last[:300]
        raise EditError(f"{path.name}: the edited model could not be checked ({reason})")
    report = CheckReport(list(said["errors"]), list(said["warnings"]), said["cannot_run"])
    types = None
    if out.exists():
        from onnxstudio.model.onnx_core import ModelProto

        types = parse_in_pieces(ModelProto(), out.read_bytes(), VALUE_INFO_KEY)
    return Checked(report, types, said["problem"])


def child_main(argv: list[str]) -> int:
    """Entry point of the child: check the edited model, write the inferred types, print
    the report as one JSON line."""
    from onnxstudio.model.infer_child import types_only
    from onnxstudio.model.inference import infer_shapes
    from onnxstudio.model.load import read_model_proto

    below_window()
    job, path, out = Path(argv[0]), Path(argv[1]), Path(argv[2])
    try:
        edited = onnx.ModelProto()
        edited.ParseFromString(job.read_bytes())

        def original() -> onnx.ModelProto:
            return read_model_proto(path)[0]

        def original_runs() -> bool:
            proto = original()
            return run_problem(proto.SerializeToString(), path, len(proto.graph.node)) is None

        report = checks(edited, path, original, original_runs)
        inferred, problem = infer_shapes(edited)
        if inferred is not None:
            out.write_bytes(types_only(inferred).SerializeToString())
    except Exception as exc:
        print(json.dumps({"failed": describe_failure(exc)}), flush=True)
        return 0
    print(json.dumps({**report.as_json(), "cannot_run": report.cannot_run,
                      "problem": problem}), flush=True)
    return 0
