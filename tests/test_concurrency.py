"""The concurrency room's contract (onnxstudio/concurrency): forks only where that is
safe, a child dies with its parent, no wait is endless, a killed export leaves no
process and no file behind, and the path without fork writes the same bytes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from onnxstudio.concurrency.fork import Forked, ForkFailed
from tests.builders import save, tiny_mlp
from tests.conftest import REPO

needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists() or
                                not hasattr(os, "fork"), reason="needs Linux's /proc and fork")

# The CLI as Windows runs it: no fork in the os module.
WINDOWS = "import os, sys; del os.fork; from onnxstudio.cli import main; sys.exit(main())"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY", "ONNXSTUDIO_NO_FORK")}
    env["PYTHONPATH"] = str(REPO)
    env.update(extra)
    return env


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for a reaper is not running)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


# Runs a command as a subreaper (Linux), so that what the command leaves behind when it
# is killed becomes this harness' child, not init's (which may end it for us): the
# command prints the pid to watch, gets the signal, and the harness says whether that
# process ended by itself.
HARNESS = r"""
import ctypes, json, os, signal, subprocess, sys, tempfile, time
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
sig, command = int(sys.argv[1]), sys.argv[2:]
errors = tempfile.TemporaryFile("w+")  # not a pipe: what is left behind may hold it
run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, text=True)
watched = int(run.stdout.readline())
alive = os.path.exists(f"/proc/{watched}")
run.send_signal(sig)
run.wait(timeout=60)
errors.seek(0)
stderr = errors.read()
gone = False
for _ in range(300):  # it exits as soon as it sees its parent gone
    try:
        gone = os.waitpid(watched, os.WNOHANG)[0] != 0
    except ChildProcessError:  # the command itself, reaped above
        gone = True
    if gone:
        break
    time.sleep(0.05)
if not gone:
    os.kill(watched, signal.SIGKILL)
    os.waitpid(watched, 0)
print(json.dumps({"alive": alive, "gone": gone, "code": run.returncode,
                  "stderr": stderr, "command": run.pid, "watched": watched}))
"""


def _killed(sig: signal.Signals, *command: str) -> dict[str, Any]:
    """Run ``command`` under HARNESS, signal it, and tell what became of its process."""
    proc = subprocess.run([sys.executable, "-c", HARNESS, str(int(sig)), *command],
                          capture_output=True, text=True, env=_env(), cwd=REPO, timeout=180,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    assert result["alive"], result
    return result


GUARD = r"""
import os, threading
from onnxstudio.concurrency.fork import Forked
def where():
    return "fork" if Forked(os.getpid).result() != os.getpid() else "here"
print("plain", where())
os.environ["ONNXSTUDIO_NO_FORK"] = "1"
print("no-fork", where())
os.environ["ONNXSTUDIO_NO_FORK"] = "0"
print("no-fork=0", where())
fork = os.fork
del os.fork
print("windows", where())
os.fork = fork
stop = threading.Event()
thread = threading.Thread(target=stop.wait)
thread.start()
print("thread", where())
stop.set()
thread.join()
print("after", where())
import PySide6.QtCore
print("qt", where())
"""


@needs_proc
def test_forking_is_refused_where_it_is_unsafe_and_the_work_runs_here() -> None:
    proc = subprocess.run([sys.executable, "-c", GUARD], capture_output=True, text=True,
                          env=_env(), cwd=REPO, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["plain", "fork", "no-fork", "here", "no-fork=0", "fork",
                                   "windows", "here", "thread", "here", "after", "fork",
                                   "qt", "here"]


@needs_proc
def test_a_fork_that_hangs_is_killed_at_its_timeout(forking: None) -> None:
    work = Forked(lambda: time.sleep(120), timeout=0.3)
    pid = work._pid
    assert work.running and _alive(pid)
    with pytest.raises(ForkFailed, match=r"no result in 0\.3 s"):
        work.result()
    assert not _alive(pid)


def test_work_without_a_fork_keeps_its_own_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """``alone`` runs where there is no fork: work meant for a fork (here: a pipe's end
    only a fork would have) is never run in this process."""
    monkeypatch.setenv("ONNXSTUDIO_NO_FORK", "1")
    work = Forked(lambda: 1 // 0, alone=lambda: "alone")
    assert not work.running and work.result() == "alone"


HANGING_FORK = r"""
import time
from onnxstudio.concurrency.fork import Forked
work = Forked(lambda: time.sleep(120))
print(work._pid, flush=True)
time.sleep(120)
"""


@needs_proc
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_fork_ends_with_its_parent(sig: signal.Signals) -> None:
    assert _killed(sig, sys.executable, "-c", HANGING_FORK)["gone"]


HANGING_CHILD = r"""
import sys, tempfile, time
from pathlib import Path
from onnxstudio.concurrency import child
code = ("import sys, time, types; from onnxstudio.concurrency import child; "
        "m = types.ModuleType('hang'); m.child_main = lambda argv: time.sleep(120) or 0; "
        "sys.modules['hang'] = m; child._MODULES['_hang'] = 'hang'; "
        "sys.exit(child.run_child(sys.argv[1:]))")
child.child_command = lambda command, *args: [sys.executable, "-c", code, command, *args]
folder = Path(tempfile.mkdtemp(dir=sys.argv[1]))
(folder / "job.pickle").write_bytes(b"job")
running = child.Child("_hang", folder=folder)
print(running.process.pid, flush=True)
time.sleep(120)
"""


@needs_proc
def test_a_child_process_ends_with_its_parent_and_removes_its_folder(tmp_path: Path) -> None:
    """A window killed while it infers shapes or profiles leaves no child running and
    no job folder: the child watches its stdin, which only the parent holds open."""
    assert _killed(signal.SIGKILL, sys.executable, "-c", HANGING_CHILD, str(tmp_path))["gone"]
    for _ in range(100):
        if not list(tmp_path.iterdir()):
            break
        time.sleep(0.05)
    assert list(tmp_path.iterdir()) == []


# The CLI export, paused where a kill hurts most: while its inference fork works, or
# while its file is being written (os.fsync, before the rename).
PAUSED_EXPORT = r"""
import os, sys, time
from onnxstudio.export import atomic
from onnxstudio.model import infer_child
where, named = sys.argv.pop(1), sys.argv.pop(1) == "named"

def pause(*args):
    print(os.getpid(), flush=True)
    time.sleep(120)

if where == "fork":
    infer_child._from_file = pause
else:
    os.fsync = pause
if named:  # as where the file system has no unnamed files
    atomic._unnamed_file = lambda folder: -1
from onnxstudio.cli import main
sys.exit(main())
"""


@needs_proc
@pytest.mark.parametrize(("where", "named", "sig"), [
    ("fork", False, signal.SIGKILL), ("fork", False, signal.SIGTERM),
    ("write", False, signal.SIGKILL), ("write", False, signal.SIGTERM),
    ("write", True, signal.SIGTERM)])
def test_a_killed_export_leaves_no_process_and_no_file(tmp_path: Path, where: str, named: bool,
                                                       sig: signal.Signals) -> None:
    model = save(tiny_mlp(), tmp_path / "mlp.onnx")
    out = tmp_path / "out"
    out.mkdir()
    result = _killed(sig, sys.executable, "-c", PAUSED_EXPORT, where,
                     "named" if named else "unnamed", "export", str(model), str(out / "graph.svg"))
    assert (result["watched"] != result["command"]) == (where == "fork")
    assert result["gone"] and list(out.iterdir()) == []
    assert "Traceback" not in result["stderr"]
    if sig == signal.SIGTERM:
        assert result["code"] == 128 + signal.SIGTERM


def _export(mode: str, model: Path, out: Path) -> subprocess.CompletedProcess[str]:
    start = [sys.executable, "-c", WINDOWS] if mode == "windows" else \
        [sys.executable, "-m", "onnxstudio"]
    env = _env(ONNXSTUDIO_NO_LAYOUT_CACHE="1")  # each lays the graph out itself
    if mode == "no-fork":
        env["ONNXSTUDIO_NO_FORK"] = "1"
    return subprocess.run([*start, "export", str(model), str(out), "--title"],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=300,
                          check=False)


@pytest.mark.parametrize("fmt", ["svg", "dot", "json", "png"])
def test_the_path_without_fork_writes_the_same_bytes(tmp_path: Path, fmt: str) -> None:
    """Forked (shapes, side inputs), with ONNXSTUDIO_NO_FORK=1, and on a platform with
    no fork at all (which failed with "Bad file descriptor"): one file."""
    from tests.benchmarks import ladder

    model = save(ladder.bert(2), tmp_path / "bert2.onnx")
    written = {}
    for mode in ("fork", "no-fork", "windows"):
        out = tmp_path / f"{mode}.{fmt}"
        proc = _export(mode, model, out)
        assert proc.returncode == 0 and f"wrote {out}" in proc.stdout, (mode, proc.stderr)
        written[mode] = out.read_bytes()
    assert written["no-fork"] == written["fork"] and written["windows"] == written["fork"]


def test_a_quiet_build_leaves_nothing_frozen_and_its_objects_in_the_oldest_generation(
) -> None:
    """Issue 32: no lasting collector freeze (it kept dead cycles until a tab closed). A
    build's survivors go to the oldest generation unscanned, the collector is on again
    after, and one that was off stays off."""
    import gc

    from onnxstudio.concurrency.collector import quiet_collector

    was_on = gc.isenabled()
    try:
        gc.enable()
        with quiet_collector():
            assert not gc.isenabled()
            built = [[i] for i in range(1_000)]
        assert gc.isenabled() and gc.get_freeze_count() == 0
        assert any(o is built[-1] for o in gc.get_objects(generation=2))
        gc.disable()
        with quiet_collector():
            pass
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        if was_on:
            gc.enable()
        else:
            gc.disable()
