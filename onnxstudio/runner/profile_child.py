"""The window's profile, run in a child process.

onnxruntime holds the GIL while it frees a session (BERT-96: 50–110 ms), and reading
and serialising the model for it hold it for tens of milliseconds more: on a worker
thread each of those freezes the window. A child process runs the whole profile (read,
session, runs, trace) and hands back only the ProfileResult; a crash inside onnxruntime
ends the child, not the app. The CLI's ``profile`` has no window and runs in-process.
"""

from __future__ import annotations

import pickle
import shutil
import subprocess
import tempfile
from pathlib import Path

from onnxstudio.child_process import PROFILE, child_command
from onnxstudio.errors import Cancelled, RunError, describe_failure, user_message
from onnxstudio.runner.cancel import CancelToken
from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.runner.profile import ProfileResult, profile


def profile_isolated(request: RunRequest, runs: int = 1, warmup: int = 1,
                     cancel: CancelToken | None = None) -> ProfileResult:
    """``profile`` in a child process; its failures come back as one RunError line,
    worded as ``profile`` words them, and a cancel kills the child."""
    folder = Path(tempfile.mkdtemp(prefix="onnxstudio-profile-"))
    job, out = folder / "job.pickle", folder / "result.pickle"
    try:
        job.write_bytes(pickle.dumps((request, runs, warmup)))
        try:
            process = subprocess.Popen(
                child_command(PROFILE, str(job), str(out)), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        except OSError as exc:
            raise RunError(f"{request.model.name}: the profiler could not start ({exc})"
                           ) from exc
        if cancel is not None:
            cancel.watch(process.kill)
        _, stderr = process.communicate()
        if cancel is not None and cancel.cancelled:
            raise Cancelled("cancelled")
        if not out.exists():
            last = (stderr.strip().splitlines() or [f"exit code {process.returncode}"])[-1]
            raise RunError(f"{request.model.name}: the profiler stopped ({last[:300]})")
        answer: ProfileResult | str = pickle.loads(out.read_bytes())  # our own file
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
        answer = profile(request, runs=runs, warmup=warmup)
    except Exception as exc:
        answer = user_message(exc) or describe_failure(exc)
    out.write_bytes(pickle.dumps(answer))
    return 0
