"""The window's onnxruntime session of a big model, hosted by a long-lived child process.

onnxruntime holds the GIL while it frees a session (dag100k: 0.5 s, BERT-96: 0.3 s) and
for parts of creating one, and the run's own parse and serialisation of the model hold
it too: on the window's worker thread each of those froze the window. A model of
``HOST_BYTES`` or more runs in a child instead (:class:`SessionHost`, one per model the
window has run, ended when its tab closes or the app ends): the child reads the model,
creates the session once and serves each run; feeds go to it and outputs come back as
``.npy`` files in its job folder, which ``np.load`` reads with the GIL let go. Smaller
models keep the in-process session: creating one there takes less than the child's
start.

Requests are JSON lines on the child's lifeline (``Child.send``), answers JSON lines on
its stdout, each carrying the request's number: a cancelled run's late answer is
skipped. A cancel stops a run at the next node boundary (``RunOptions.terminate`` in the
child); a session still being created cannot be stopped, so the child is killed.
"""

from __future__ import annotations

import contextlib
import json
import pickle
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from onnxstudio.concurrency.child import INCOMING, SESSION_HOST, Child, below_window
from onnxstudio.errors import (
    Cancelled,
    InputError,
    RunError,
    describe_failure,
    details_for,
    user_message,
    with_details,
)
from onnxstudio.runner.inputs import ModelInfo
from onnxstudio.runner.session import RunCancelled, RunResult, Session, SessionConfig

HOST_BYTES = 4_000_000  # ~dag30k and BERT-48: their sessions held the GIL 90-300 ms
TIMEOUT_S = 3600  # a creation or a run may take long, but never forever
ANSWER = "@session-host "  # marks the child's answers among anything else on stdout


def hosted(model: Path, model_bytes: bytes | None) -> bool:
    """Whether the window runs ``model`` (or its edited copy) in a :class:`SessionHost`."""
    if model_bytes is not None:
        return len(model_bytes) >= HOST_BYTES
    try:
        return model.stat().st_size >= HOST_BYTES
    except OSError:  # the in-process path says what is wrong with the file
        return False


def _save(values: Mapping[str, Any], folder: Path, stem: str) -> list[tuple[str, str]]:
    """Each value in a file of ``folder``: arrays as .npy, anything else pickled (our own
    files, read back only by us); (name, file) pairs."""
    files = []
    for i, (name, value) in enumerate(values.items()):
        if isinstance(value, np.ndarray) and value.dtype != object:
            path = folder / f"{stem}-{i}.npy"
            np.save(path, value, allow_pickle=False)
        else:
            path = folder / f"{stem}-{i}.pickle"
            path.write_bytes(pickle.dumps(value, 5))
        files.append((name, path.name))
    return files


def _load(folder: Path, files: list[tuple[str, str]]) -> dict[str, Any]:
    """What ``_save`` wrote, each file removed once read."""
    values: dict[str, Any] = {}
    for name, file in files:
        path = folder / file
        values[name] = np.load(path, allow_pickle=False) if file.endswith(".npy") else \
            pickle.loads(path.read_bytes())
        path.unlink()
    return values


def ending(code: int | None) -> str:
    """How a child that said nothing ended: its signal's name, else its exit code."""
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
    return f"exit code {code}"


class HostedSession(Session):
    """A :class:`Session` whose onnxruntime session lives in a :class:`SessionHost`."""

    def __init__(self, host: SessionHost, path: Path, config: SessionConfig,
                 info: ModelInfo, specs: tuple[Any, Any, dict[str, str]]) -> None:
        # Not Session.__init__: nothing of onnxruntime is created in this process.
        self.path, self.config, self.host, self.info = path, config, host, info
        self.inputs, self.outputs, self.metadata = specs
        self._cancelled = False

    def cancel(self) -> None:
        self._cancelled = True
        self.host.cancel()

    def reset_cancel(self) -> None:
        self._cancelled = False

    def run(self, feeds: Mapping[str, Any]) -> RunResult:
        if self._cancelled:
            raise RunCancelled(f"{self.path.name}: run cancelled")
        answer = self.host.request("run", feeds=dict(feeds))
        return RunResult(_load(self.host.folder, answer["outputs"]), float(answer["latency"]))


class SessionHost:
    """One child process holding one model's session; ``open`` (re)creates it, each run
    is a request. Any thread may ``cancel`` or ``close``."""

    def __init__(self, model: Path) -> None:
        self.model = Path(model)
        self.folder = Path(tempfile.mkdtemp(prefix="onnxstudio-session-"))
        self._errors = (self.folder / "stderr.txt").open("w+")  # a file: never a full pipe
        try:
            self._child = Child(SESSION_HOST, str(self.folder), folder=self.folder,
                                stderr=self._errors)
        except OSError as exc:
            self._errors.close()
            shutil.rmtree(self.folder, ignore_errors=True)
            raise RunError(f"{self.model.name}: the session host could not start ({exc})"
                           ) from exc
        self._lock = threading.Lock()
        self._number = 0
        self._current: tuple[int, str] | None = None  # the request waiting for its answer
        self.closed = False

    @property
    def pid(self) -> int:
        return self._child.process.pid

    def alive(self) -> bool:
        return not self.closed and self._child.process.poll() is None

    def open(self, config: SessionConfig, model_bytes: bytes | None = None
             ) -> HostedSession:
        """Create the session (replacing the one before); the model's specs come back."""
        edited = ""
        if model_bytes is not None:
            (self.folder / "edited.onnx").write_bytes(model_bytes)
            edited = "edited.onnx"
        answer = self.request("open", model=str(self.model), edited=edited,
                              config=[config.provider, config.optimization, config.threads])
        info, specs = pickle.loads((self.folder / answer["info"]).read_bytes())
        return HostedSession(self, self.model, config, info, specs)

    def request(self, op: str, feeds: Mapping[str, Any] | None = None,
                **fields: Any) -> dict[str, Any]:
        """Send one request and wait for its answer (a worker thread's call); its failure
        comes back raised as it was in the child, as one line naming the model."""
        with self._lock:
            if self.closed:
                raise RunCancelled(f"{self.model.name}: run cancelled")
            self._number += 1
            number = self._number
            self._current = (number, op)
        if feeds is not None:
            fields["feeds"] = _save(feeds, self.folder, f"in{number}")
        timer = threading.Timer(TIMEOUT_S, self._child.process.kill)
        timer.start()
        try:
            self._child.send(json.dumps({"op": op, "id": number, **fields}))
            answer = self._answer(number)
        except OSError:
            answer = None
        finally:
            timer.cancel()
            with self._lock:
                self._current = None
        if answer is None:
            raise self._stopped()
        if "error" in answer:
            message = with_details(answer["error"], answer.get("details", ""))
            if answer.get("kind") == "cancelled":
                raise RunCancelled(message)
            raise (InputError if answer.get("kind") == "input" else RunError)(message)
        return answer

    def _answer(self, number: int) -> dict[str, Any] | None:
        """The answer to request ``number`` (earlier ones' late answers skipped); None
        when the child ended first."""
        stdout = self._child.process.stdout
        assert stdout is not None
        try:
            for line in stdout:
                if line.startswith(ANSWER):
                    answer: dict[str, Any] = json.loads(line[len(ANSWER):])
                    if answer.get("id") == number:
                        return answer
        except (OSError, ValueError):  # closed by close() on another thread
            pass
        return None

    def _stopped(self) -> RunError:
        """Why the child ended: a cancel or close here, else the last line it wrote."""
        with self._lock:
            ended_here = self.closed
        if ended_here:
            return RunCancelled(f"{self.model.name}: cancelled")
        try:
            self._child.process.wait(timeout=5)
            self._errors.seek(0)
            lines = [ln for ln in self._errors.read().splitlines() if ln.strip()]
        except (OSError, ValueError, subprocess.TimeoutExpired):
            lines = []
        code = self._child.process.returncode
        self.close()
        last = lines[-1].strip()[:300] if lines else ending(code)
        return RunError(f"{self.model.name}: onnxruntime's process stopped ({last})")

    def cancel(self) -> None:
        """Stop the request in progress: a run at its next node boundary; a session
        being created cannot be stopped, so the child is killed."""
        with self._lock:
            current = self._current
        if current is None:
            return
        number, op = current
        if op == "open":
            self.close()
            return
        with contextlib.suppress(OSError):  # ended already: the waiting request says so
            self._child.send(json.dumps({"op": "cancel", "id": number}))

    def close(self) -> None:
        """End the child and remove its folder (a waiting request raises RunCancelled)."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
        self._child.kill()
        self._errors.close()


class SessionHosts:
    """The window's hosts, one per model it has run (kept while its tab is open, so a
    second run pays no creation); any thread may cancel or release."""

    def __init__(self) -> None:
        self._hosts: dict[Path, SessionHost] = {}
        self._lock = threading.Lock()

    def session(self, model: Path, config: SessionConfig, model_bytes: bytes | None
                ) -> HostedSession:
        """``model``'s session in its host (started if it has none or it ended)."""
        with self._lock:
            host = self._hosts.get(model)
        if host is None or not host.alive():
            host = SessionHost(model)
            with self._lock:
                self._hosts[model] = host
        return host.open(config, model_bytes)

    def pids(self) -> dict[Path, int]:
        """Each running host's process id, by model."""
        with self._lock:
            return {m: h.pid for m, h in self._hosts.items() if h.alive()}

    def cancel(self) -> None:
        with self._lock:
            hosts = list(self._hosts.values())
        for host in hosts:
            host.cancel()

    def release(self, model: Path) -> None:
        """End ``model``'s host (its tab closed)."""
        with self._lock:
            host = self._hosts.pop(Path(model), None)
        if host is not None:
            host.close()

    def close(self) -> None:
        with self._lock:
            hosts, self._hosts = list(self._hosts.values()), {}
        for host in hosts:
            host.close()


# -- the child ----------------------------------------------------------------------
class _Runs:
    """In the child: the session and which run may be cancelled, guarded for the thread
    that reads cancels while the main thread runs."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.session: Session | None = None
        self.current = 0
        self.cancelled: set[int] = set()

    def begin(self, number: int) -> Session:
        with self.lock:
            if number in self.cancelled or self.session is None:
                raise RunCancelled("run cancelled")
            self.current = number
            self.session.reset_cancel()
            return self.session

    def cancel(self, number: int) -> None:
        with self.lock:
            self.cancelled.add(number)
            if self.current == number and self.session is not None:
                self.session.cancel()


def _reply(answer: dict[str, Any]) -> None:
    print(ANSWER + json.dumps(answer), flush=True)


def _open(folder: Path, runs: _Runs, job: dict[str, Any]) -> dict[str, Any]:
    from onnxstudio.runner.source import ModelSource

    with runs.lock:
        runs.session = None  # the one before is freed here, in the child
    edited = (folder / job["edited"]).read_bytes() if job["edited"] else None
    source = ModelSource.read(job["model"], edited)
    provider, optimization, threads = job["config"]
    session = source.session(SessionConfig(provider, optimization, int(threads)))
    info = source.info()
    del source
    (folder / "info.pickle").write_bytes(pickle.dumps(
        (info, (session.inputs, session.outputs, session.metadata)), 5))
    with runs.lock:
        runs.session = session
    return {"info": "info.pickle"}


def _run(folder: Path, runs: _Runs, job: dict[str, Any]) -> dict[str, Any]:
    feeds = _load(folder, [tuple(pair) for pair in job["feeds"]])
    result = runs.begin(job["id"]).run(feeds)
    return {"latency": result.latency_ms,
            "outputs": _save(result.outputs, folder, f"out{job['id']}")}


def _failure(exc: BaseException) -> dict[str, Any]:
    line = user_message(exc) or describe_failure(exc)
    kind = "cancelled" if isinstance(exc, Cancelled) else \
        "input" if isinstance(exc, InputError) else "run"
    return {"error": line, "details": details_for(line), "kind": kind}


def child_main(argv: list[str]) -> int:
    """Entry point of the child: serve requests until the parent closes the lifeline
    (``child._watch_parent`` then ends this process)."""
    below_window()
    folder = Path(argv[0])
    runs = _Runs()
    jobs: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()

    def sort() -> None:  # cancels act at once; the rest wait for the main thread
        while True:
            job = json.loads(INCOMING.get())
            if job["op"] == "cancel":
                runs.cancel(job["id"])
            else:
                jobs.put(job)

    threading.Thread(target=sort, name="session-host-requests", daemon=True).start()
    serve = {"open": _open, "run": _run}
    while True:
        job = jobs.get()
        try:
            answer = serve[job["op"]](folder, runs, job)
        except Exception as exc:
            answer = _failure(exc)
        _reply({"id": job["id"], **answer})
