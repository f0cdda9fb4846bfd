"""The graph onnxruntime really runs: its optimised model, saved to a temporary folder.

onnxruntime writes the graph after its fusions and layout changes when
``SessionOptions.optimized_model_filepath`` is set; creating the session is enough. The
file goes into a fresh temporary folder, never beside the user's model, and the caller
removes it with :func:`discard` when done.

The window asks a child process (:func:`save_optimised_isolated`): onnxruntime holds the
GIL for the whole of a session's creation (onnxruntime#27063), so on a worker thread it
froze the window (BERT-96: 345 ms); the child hands back only the file's path.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from onnxstudio.concurrency.child import OPTIMISE, Child, below_window
from onnxstudio.errors import Cancelled, RunError, describe_failure
from onnxstudio.runner.cancel import CancelToken
from onnxstudio.runner.session import SessionConfig

PREFIX = "onnxstudio-optimised-"
TIMEOUT_S = 1800  # a huge graph's optimisation may take minutes, never forever


def save_optimised(path: str | Path, config: SessionConfig | None = None) -> Path:
    """Create a session for ``path`` with ``config`` and return where onnxruntime wrote
    the optimised graph (``<tmp>/onnxstudio-optimised-*/<stem>.<level>.onnx``)."""
    path = Path(path)
    config = config or SessionConfig()
    target = _target(path, config)
    try:
        _write(path, config, target)
    except RunError:
        discard(target)
        raise
    return target


def save_optimised_isolated(path: str | Path, config: SessionConfig | None = None,
                            cancel: CancelToken | None = None) -> Path:
    """:func:`save_optimised` in a child process; its failure comes back as the same one
    RunError line, and a cancel kills the child and removes the folder."""
    path = Path(path)
    config = config or SessionConfig()
    target = _target(path, config)

    def failed(exc: OSError) -> RunError:
        discard(target)
        return RunError(f"{path.name}: onnxruntime's optimiser could not start ({exc})")

    child = Child.start(OPTIMISE, str(path), str(target), config.provider,
                        config.optimization, str(config.threads), folder=target.parent,
                        failed=failed, kill_on=cancel.watch if cancel is not None else None)
    try:
        out, err = child.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:  # the child is killed, its folder removed
        raise RunError(f"{path.name}: onnxruntime gave no optimised graph in "
                       f"{TIMEOUT_S // 60} minutes") from exc
    if cancel is not None and cancel.cancelled:
        discard(target)
        raise Cancelled("cancelled")
    problem = _problem(out, err, child.process.returncode)
    if problem is not None or not target.is_file():
        discard(target)
        raise RunError(problem or f"{path.name}: onnxruntime did not write its optimised graph")
    return target


def discard(optimised: Path) -> None:
    """Remove a folder :func:`save_optimised` made (nothing else: the prefix is checked)."""
    folder = optimised.parent
    if folder.name.startswith(PREFIX) and folder.parent == Path(tempfile.gettempdir()):
        shutil.rmtree(folder, ignore_errors=True)


def _target(path: Path, config: SessionConfig) -> Path:
    folder = Path(tempfile.mkdtemp(prefix=PREFIX))
    return folder / f"{path.stem}.{config.optimization}.onnx"


def _write(path: Path, config: SessionConfig, target: Path) -> None:
    """The session whose creation writes ``target``, with our own checks first."""
    import onnxruntime as ort

    from onnxstudio.model.load import read_model_proto
    from onnxstudio.runner.session import Session

    _proto, external = read_model_proto(path)  # our own checks first, external data too
    del _proto

    def tweak(options: ort.SessionOptions) -> None:
        options.optimized_model_filepath = str(target)
        if external:  # keep large weights out of the protobuf, beside the copy
            options.add_session_config_entry(
                "session.optimized_model_external_initializers_file_name", f"{target.stem}.data")

    Session(path, config, tweak=tweak)
    if not target.is_file():
        raise RunError(f"{path.name}: onnxruntime did not write its optimised graph")


def _problem(out: str, err: str, code: int | None) -> str | None:
    """The child's failure in one line from its last stdout line (None: it wrote the
    graph); a child that said nothing stopped: its last stderr line or exit code."""
    lines = out.strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if lines else None
    except ValueError:
        answer = None
    if isinstance(answer, dict):
        return None if answer.get("ok") else str(answer.get("problem") or "failed")
    last = (err.strip().splitlines() or [f"exit code {code}"])[-1]
    return f"onnxruntime's optimiser stopped ({last[:300]})"


def child_main(argv: list[str]) -> int:
    """Entry point of the child: write the optimised graph, print one JSON line."""
    below_window()
    path, target = Path(argv[0]), Path(argv[1])
    try:
        _write(path, SessionConfig(argv[2], argv[3], int(argv[4])), target)
    except Exception as exc:
        print(json.dumps({"ok": False, "problem": describe_failure(exc)}), flush=True)
        return 0
    print(json.dumps({"ok": True}), flush=True)
    return 0
