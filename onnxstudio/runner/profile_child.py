"""The window's profile, run in a child process.

onnxruntime holds the GIL while it frees a session (BERT-96: 50–110 ms), and reading
and serialising the model for it hold it for tens of milliseconds more: on a worker
thread each of those freezes the window. A child process runs the whole profile (read,
session, runs, trace) and hands back only the ProfileResult; a crash inside onnxruntime
ends the child, not the app. The CLI's ``profile`` has no window and runs in-process.

The result comes back in runs (``pickle_runs``, ``NODES_PER_PIECE``): in one
``pickle.loads``, dag100k's 100k timed nodes held the GIL and froze the window 310 ms.
"""

from __future__ import annotations

import dataclasses
import pickle
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from onnxstudio.concurrency.child import PROFILE, Child
from onnxstudio.errors import Cancelled, RunError, describe_failure, user_message
from onnxstudio.pickle_runs import dump_runs, load_runs
from onnxstudio.runner.cancel import CancelToken
from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.runner.profile import NodeTime, ProfileResult, profile

TIMEOUT_S = 3600  # a profile's runs may take long, but never forever


def profile_isolated(request: RunRequest, runs: int = 1, warmup: int = 1,
                     cancel: CancelToken | None = None,
                     progress: Callable[[int, int], None] | None = None) -> ProfileResult:
    """``profile`` in a child process; its failures come back as one RunError line,
    worded as ``profile`` words them, and a cancel kills the child. ``progress`` hears
    (runs done, of) as the child reports them, one line each on its stdout."""
    folder = Path(tempfile.mkdtemp(prefix="onnxstudio-profile-"))
    job, out = folder / "job.pickle", folder / "result.pickle"
    try:
        job.write_bytes(pickle.dumps((request, runs, warmup)))
        def on_line(line: str) -> None:
            done, _, total = line.partition(" ")
            if progress is not None and done.isdigit() and total.strip().isdigit():
                progress(int(done), int(total))

        with (folder / "stderr.txt").open("w+") as errors:  # a file: never a full pipe
            child = Child.start(
                PROFILE, str(job), str(out), folder=folder, stderr=errors,
                kill_on=cancel.watch if cancel is not None else None,
                failed=lambda exc: RunError(
                    f"{request.model.name}: the profiler could not start ({exc})"))
            try:
                child.follow(on_line, timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired as exc:
                raise RunError(f"{request.model.name}: the profiler gave no result in "
                               f"{TIMEOUT_S // 60} minutes") from exc
            errors.seek(0)
            stderr = errors.read()
        if cancel is not None and cancel.cancelled:
            raise Cancelled("cancelled")
        if not out.exists():
            last = (stderr.strip().splitlines() or [f"exit code {child.process.returncode}"])[-1]
            raise RunError(f"{request.model.name}: the profiler stopped ({last[:300]})")
        with out.open("rb") as stream:
            answer = _read_answer(stream)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if isinstance(answer, str):
        raise RunError(answer)
    return answer


def child_main(argv: list[str]) -> int:
    """Entry point of the child: profile the pickled job, pickle the result (or the
    failure's one line) next to it."""
    job, out = Path(argv[0]), Path(argv[1])
    request, runs, warmup = pickle.loads(job.read_bytes())
    answer: ProfileResult | str
    try:
        answer = profile(request, runs=runs, warmup=warmup,
                         progress=lambda done, total: print(done, total, flush=True))
    except Exception as exc:
        answer = user_message(exc) or describe_failure(exc)
    part = out.with_suffix(".part")  # whole or absent: a child killed midway wrote none
    with part.open("wb") as stream:
        _write_answer(answer, stream)
    part.replace(out)
    return 0


NODES_PER_PIECE = 2000  # ~10 ms of unpickling each


def _write_answer(answer: ProfileResult | str, stream: BinaryIO) -> None:
    """The answer without its node times, then the times in runs (``dump_runs``)."""
    nodes: list[NodeTime] = []
    if isinstance(answer, ProfileResult):
        nodes, answer = answer.nodes, dataclasses.replace(answer, nodes=[])
    pickle.dump(answer, stream, 5)
    dump_runs(nodes, stream, NODES_PER_PIECE)


def _read_answer(stream: BinaryIO) -> ProfileResult | str:
    """What ``_write_answer`` wrote (our own file), a run per ``pickle.load``: between
    runs this worker thread hands the GIL to the window."""
    answer = pickle.load(stream)
    nodes = load_runs(lambda: pickle.load(stream))
    return dataclasses.replace(answer, nodes=nodes) \
        if isinstance(answer, ProfileResult) else answer
