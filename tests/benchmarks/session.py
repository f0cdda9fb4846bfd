"""Long-session figures (issue 32): does the window give memory back, and is it idle when
nothing happens? ``python -m tests.benchmarks.session [MODEL ...]``; the ladder benchmark
(run.py) prints the same table, each model measured in a fresh process.

  rss_1_MB     resident memory once the model was opened and its tab closed, once
  rss_N_MB     the same after N open/close cycles (all in the real window)
  growth_MB    rss_N - rss_1: what the window kept of models no longer open
  close_stall  the longest the event loop went without a 5 ms tick while a tab closed
  idle_cpu_%   the process's CPU time over IDLE_S of doing nothing, after opening the
               model and one run of random inputs, as a share of one core
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO = Path(__file__).resolve().parents[2]
CYCLES = 7  # the count: 218 -> 476 MiB for dag30k, still rising
IDLE_S = 3.0
SESSION_LADDER = ("dag30k.onnx", "bert12.onnx")


def rss_mb() -> float:
    """This process's resident memory now (VmRSS), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return 0.0


def _cpu_s() -> float:
    times = os.times()
    return times.user + times.system


def spin(app: Any, done: Callable[[], bool], limit_s: float = 300.0) -> None:
    """Run the event loop until ``done()``; the loop sleeps between events."""
    from PySide6.QtCore import QEventLoop, QTimer

    start = time.monotonic()
    while not done() and time.monotonic() - start < limit_s:
        loop = QEventLoop()
        QTimer.singleShot(20, loop.quit)
        loop.exec()


def open_and_close(app: Any, window: Any, path: Path) -> float:
    """Open ``path`` in a new tab, wait until it is shown with its shapes, close the tab;
    the longest the event loop stalled while it closed (ms)."""
    from tests.benchmarks.paint import _Ticker

    (tab,) = window.open_paths([str(path)])
    spin(app, lambda: bool(tab.error) or (tab.layout_data is not None and not tab.busy))
    spin(app, lambda: False, 0.2)
    return _Ticker(app).run(lambda: window.close_tab(window.tabs.indexOf(tab)),
                            lambda: True)[1]


def measure_session(path: Path, cycles: int = CYCLES) -> dict[str, Any]:
    """The table's row for one model (call it in a fresh process)."""
    from PySide6.QtWidgets import QApplication

    from onnxstudio.ui.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    window = MainWindow()
    window.resize(1600, 1000)
    window.show()
    row: dict[str, Any] = {"model": path.name, "cycles": cycles}
    stalls = []
    for i in range(cycles):
        stalls.append(open_and_close(app, window, path))
        if i == 0:
            row["rss_1_mb"] = rss_mb()
    row["rss_n_mb"] = rss_mb()
    row["growth_mb"] = row["rss_n_mb"] - row["rss_1_mb"]
    row["close_stall_ms"] = max(stalls)
    row["idle_cpu_pct"] = idle_cpu_after_run(app, window, path)
    window.shutdown()
    window.close()
    return row


def idle_cpu_after_run(app: Any, window: Any, path: Path) -> float | None:
    """Open ``path``, run it once on random inputs, settle, then the CPU share of one core
    the process used over ``IDLE_S`` seconds of nothing happening (None if it cannot run)."""
    (tab,) = window.open_paths([str(path)])
    spin(app, lambda: bool(tab.error) or (tab.layout_data is not None and not tab.busy))
    panel = window.run_panel
    ended: list[object] = []
    for signal in (panel.runFinished, panel.controller.failed):
        signal.connect(ended.append)
    if not panel.run_random():
        return None
    spin(app, lambda: bool(ended))
    spin(app, lambda: False, 1.0)  # what the answer leaves for later turns
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()  # one wait: the loop itself wakes for nothing but the window
    QTimer.singleShot(int(IDLE_S * 1000), loop.quit)
    cpu, wall = _cpu_s(), time.monotonic()
    loop.exec()
    return 100.0 * (_cpu_s() - cpu) / (time.monotonic() - wall)


def session_rows(paths: list[Path]) -> list[dict[str, Any]]:
    """One row per model, each measured in a fresh process."""
    rows = []
    for path in paths:
        with tempfile.TemporaryDirectory() as cache:  # the layout cache, as a user has it
            proc = subprocess.run([sys.executable, "-m", "tests.benchmarks.session",
                                   "--one", str(path)], cwd=REPO, capture_output=True,
                                  text=True, check=False,
                                  env=dict(os.environ, XDG_CACHE_HOME=cache))
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            tail = (proc.stderr.strip().splitlines() or ["failed"])[-1]
            rows.append({"model": path.name, "error": tail})
        else:
            rows.append(json.loads(lines[-1]))
    return rows


COLUMNS = [
    ("model", "model", "{}"),
    ("cycles", "cycles", "{}"),
    ("rss_1_mb", "rss_1_MB", "{:,.0f}"),
    ("rss_n_mb", "rss_N_MB", "{:,.0f}"),
    ("growth_mb", "growth_MB", "{:+,.0f}"),
    ("close_stall_ms", "close_stall", "{:.0f}"),
    ("idle_cpu_pct", "idle_cpu_%", "{:.1f}"),
]


def session_section(ladder: list[Path]) -> str:
    """The long-session table for the ladder models it is measured on."""
    from tests.benchmarks.run import format_table

    paths = [p for p in ladder if p.name in SESSION_LADDER]
    if not paths:
        return "long session: no ladder models"
    return (f"long session (issue 32): RSS after the 1st and after {CYCLES} open/close "
            f"cycles in the window; idle CPU over {IDLE_S:.0f} s after open + one run\n"
            + format_table(session_rows(paths), COLUMNS))


def main(argv: list[str]) -> int:
    if argv[:1] == ["--one"]:
        print(json.dumps(measure_session(Path(argv[1]))))
        return 0
    from tests.benchmarks.run import format_table, ladder_files

    wanted = set(argv) or set(SESSION_LADDER)
    paths = [p for p in ladder_files() if p.name in wanted or p.stem in wanted]
    print(format_table(session_rows(paths), COLUMNS))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
