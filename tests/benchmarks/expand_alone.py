"""Expand All measured alone, in a fresh process: open the model in the window, wait
until it is drawn with its shapes, then Edit → Expand All until the expanded graph is
shown. ``measure_window``'s ``expand_MB`` is the process's high-water mark after the
export, run, compare and profile before it (dag100k: 3.5 GB from the compare), so it
says nothing of what expanding costs; here the peak (VmHWM) and what stays resident
after it (VmRSS) are open + Expand All's alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _status_mb(field: str) -> float | None:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024.0
    return None


def measure_expand_alone(path: Path) -> dict[str, Any]:
    """``expand_alone_s``, ``expand_alone_mb`` (peak) and ``expanded_rss_mb`` (resident
    once expanded) of opening ``path`` and expanding everything, nothing else."""
    from tests.benchmarks.paint import VIEWPORT, _app, _Ticker

    app = _app()
    from onnxstudio.ui.main_window import MainWindow

    window = MainWindow()
    window.resize(*VIEWPORT)
    window.show()
    app.processEvents()
    ticker = _Ticker(app)
    tabs: list[Any] = []
    ticker.run(lambda: tabs.extend(window.open_paths([str(path)])),
               lambda: bool(tabs) and (tabs[0].layout_data is not None or bool(tabs[0].error)),
               settle=False)
    tab = tabs[0]
    ticker.run(lambda: None, lambda: not tab.busy or bool(tab.error))  # shapes drawn
    row: dict[str, Any] = {"open_mb": _status_mb("VmHWM")}
    if tab.error:
        return {"error": str(tab.error)}
    before = tab.layout_data
    row["expand_alone_s"], _ = ticker.run(
        tab.expand_all, lambda: tab.layout_data is not before and not tab.busy)
    row["expand_alone_mb"] = _status_mb("VmHWM")
    row["expanded_rss_mb"] = _status_mb("VmRSS")
    window.shutdown()
    window.close()
    return row
