"""The benchmark: open, lay out (and paint) each ladder graph, count crossings, print one table.

Run ``python -m tests.benchmarks.run`` (or ``bash scripts/bootstrap.sh bench``). It uses
``../shared/ladder/*.onnx`` when present, else generates its own ladder
(``tests/benchmarks/ladder.py``) into a cache folder. Each model runs in a fresh
subprocess so peak memory (VmHWM) is that model's alone.

Hooks other parts of the app fill in, each optional (a missing module prints "-"):

- ``tests/benchmarks/paint.py`` with ``measure_paint(model, layout) -> float``: seconds
  to the first complete paint of ``layout`` (offscreen), reported as ``paint_s``;
- ``tests/benchmarks/runner_overhead.py`` with ``runner_overhead_rows()`` (and
  ``format_rows(rows)``): the "runner overhead" section (the app's runner against a
  bare ``InferenceSession.run``), printed as a second small table.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SHARED_LADDER = Path(os.environ.get("ONNXSTUDIO_SHARED", REPO.parent / "shared")) / "ladder"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "onnxstudio" / "ladder"

LADDER = ["resnet50.onnx", "bert12.onnx", "bert48.onnx", "bert96.onnx", "dag30k.onnx",
          "dag100k.onnx", "hf_bert12_dynamo.onnx", "hf_gpt2_12_dynamo.onnx"]
FULL_TOO = {"bert12.onnx", "bert48.onnx", "bert96.onnx", "hf_bert12_dynamo.onnx"}
# open-to-painted targets from the graph-view issue (seconds)
TARGET_S = {"resnet50.onnx": 0.3, "bert12.onnx": 0.5, "bert96.onnx": 2.0, "dag100k.onnx": 5.0}

COLUMNS = [
    ("model", "model", "{}"),
    ("nodes", "nodes", "{:,}"),
    ("open_s", "open_s", "{:.3f}"),
    ("layout_s", "layout_s", "{:.3f}"),
    ("boxes", "boxes", "{:,}"),
    ("paint_s", "paint_s", "{:.3f}"),
    ("total_s", "total_s", "{:.3f}"),
    ("window_s", "window_s", "{:.3f}"),
    ("stall_ms", "stall_ms", "{:.0f}"),
    ("target_s", "target", "{:.1f}"),
    ("cross_centre", "cross_ctr", "{:,}"),
    ("cross_routes", "cross_route", "{:,}"),
    ("full_layout_s", "full_lay_s", "{:.3f}"),
    ("full_boxes", "full_boxes", "{:,}"),
    ("full_cross_centre", "full_ctr", "{:,}"),
    ("full_cross_routes", "full_route", "{:,}"),
    ("peak_mb", "peak_MB", "{:,.0f}"),
]


def _hook(module: str, name: str) -> Callable[..., Any] | None:
    try:
        mod = importlib.import_module(f"tests.benchmarks.{module}")
    except ImportError:
        return None
    return getattr(mod, name, None)


def ladder_files() -> list[Path]:
    if SHARED_LADDER.is_dir():
        return [SHARED_LADDER / n for n in LADDER if (SHARED_LADDER / n).exists()]
    from tests.benchmarks.ladder import generate

    print(f"(../shared/ladder absent: generating the ladder into {CACHE})", file=sys.stderr)
    return generate(CACHE)


def measure_one(path: Path, crossings: bool = True) -> dict[str, Any]:
    """Everything for one model, in this process (call it in a fresh one)."""
    from onnxstudio.layout import ExpandState, build_layout, default_state, layered
    from onnxstudio.layout.metrics import center_crossings, route_crossings
    from onnxstudio.model import load_model

    row: dict[str, Any] = {"model": path.name}
    window = _hook("paint", "measure_window")
    if window is not None:  # first, cold: the user's open-to-painted through the window
        row.update(window(path))
    t0 = time.perf_counter()
    model = load_model(path)
    row["open_s"] = time.perf_counter() - t0
    row["nodes"] = len(model.graph.nodes)
    t0 = time.perf_counter()
    layout = build_layout(model, default_state(model.graph))
    row["layout_s"] = time.perf_counter() - t0
    row["boxes"] = len(layout.boxes)
    paint = _hook("paint", "measure_paint")
    if paint is not None:
        row["paint_s"] = paint(model, layout)
    row["total_s"] = row["open_s"] + row["layout_s"] + (row.get("paint_s") or 0.0)
    row["target_s"] = TARGET_S.get(path.name)
    if crossings:
        row["cross_centre"] = center_crossings(layout)
        row["cross_routes"] = route_crossings(layout)
    if path.name in FULL_TOO:
        state = ExpandState()
        state.expand_all(model.graph)
        layered._CACHE.clear()  # measure cold, as on first open
        t0 = time.perf_counter()
        full = build_layout(model, state)
        row["full_layout_s"] = time.perf_counter() - t0
        row["full_boxes"] = len(full.boxes)
        if crossings:
            row["full_cross_centre"] = center_crossings(full)
            row["full_cross_routes"] = route_crossings(full)
    row["peak_mb"] = peak_mb()
    return row


def peak_mb() -> float:
    """This process's peak resident memory. VmHWM belongs to the current image; ru_maxrss
    survives exec on Linux and would report the parent's peak from before the fork."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_isolated(path: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "tests.benchmarks.run", "--one", str(path)],
        cwd=REPO, capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["failed"])[-1]
        return {"model": path.name, "error": tail}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def format_table(rows: list[dict[str, Any]]) -> str:
    cells = [[title for _, title, _ in COLUMNS]]
    for row in rows:
        if "error" in row:
            cells.append([row["model"], f"error: {row['error']}"] + [""] * (len(COLUMNS) - 2))
            continue
        line = []
        for key, _, fmt in COLUMNS:
            value = row.get(key)
            line.append("-" if value is None else fmt.format(value))
        cells.append(line)
    widths = [max(len(r[i]) for r in cells) for i in range(len(COLUMNS))]
    out = []
    for k, r in enumerate(cells):
        out.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(r, widths, strict=True))))
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def runner_section() -> str:
    """The runner-overhead rows, from tests/benchmarks/runner_overhead.py when present."""
    measure = _hook("runner_overhead", "runner_overhead_rows") or _hook(
        "runner_overhead", "measure")
    if measure is None:
        return "runner overhead: not measured (tests/benchmarks/runner_overhead.py absent)"
    try:
        rows = measure()
    except Exception as exc:  # the section must not sink the layout table above
        return f"runner overhead: failed ({type(exc).__name__}: {exc})"
    if not rows:
        return "runner overhead: no models available"
    fmt = _hook("runner_overhead", "format_rows")
    if fmt is not None:
        return "runner overhead (median ms)\n" + fmt(rows)
    keys = list(rows[0])
    lines = ["runner overhead", "  ".join(keys)]
    lines += ["  ".join(str(r.get(k, "")) for k in keys) for r in rows]
    return "\n".join(lines)


def inspect_section() -> str:
    """Profile / capture / compare / heatmap-fold costs (tests/benchmarks/inspect_run.py)."""
    rows_of = _hook("inspect_run", "inspect_rows")
    fmt = _hook("inspect_run", "format_rows")
    if rows_of is None or fmt is None:
        return "run inspection: not available"
    try:
        rows = rows_of()
    except Exception as exc:  # the section must not sink the tables above
        return f"run inspection: failed ({type(exc).__name__}: {exc})"
    return "run inspection (issue 8)\n" + fmt(rows) if rows else \
        "run inspection: no models available"


def export_section() -> str:
    """Export times from tests/benchmarks/export_times.py (opt-in: it writes big files)."""
    rows_of = _hook("export_times", "export_time_rows")
    if rows_of is None:
        return "export times: not available"
    rows = rows_of()
    if not rows:
        return "export times: no ladder models"
    keys = list(dict.fromkeys(k for r in rows for k in r))
    cells = [keys] + [[str(r.get(k, "")) for k in keys] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(keys))]
    return "export times\n" + "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in cells)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="onnxstudio benchmark")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--no-crossings", action="store_true", help="skip crossing counts")
    parser.add_argument("--no-runner", action="store_true", help="skip the runner section")
    parser.add_argument("--export", action="store_true",
                        help="also time SVG/PNG/PDF export (tests/benchmarks/export_times.py)")
    parser.add_argument("models", nargs="*", help="subset of ladder file names")
    args = parser.parse_args(argv)
    if args.one is not None:
        print(json.dumps(measure_one(args.one, not args.no_crossings)))
        return 0
    files = ladder_files()
    if args.models:
        files = [f for f in files if f.name in args.models or f.stem in args.models]
    rows = []
    for path in files:
        rows.append(run_isolated(path))
        print(f"  {path.name} done", file=sys.stderr, flush=True)
    print(f"ladder: {files[0].parent if files else '-'}; times in seconds; "
          "crossings: straight centre segments (ctr) and drawn routes (route); "
          "full_*: every scope group expanded")
    print(format_table(rows))
    if not args.no_runner:
        print()
        print(runner_section())
        print()
        print(inspect_section())
    if args.export:
        print()
        print(export_section())
    return 0


if __name__ == "__main__":
    sys.exit(main())
