"""The benchmark: open, lay out (and paint) each ladder graph, count crossings, print tables.

Run ``python -m tests.benchmarks.run`` (or ``bash scripts/bootstrap.sh bench``). It uses
``../shared/ladder/*.onnx`` when present, else generates its own ladder
(``tests/benchmarks/ladder.py``) into a cache folder. Each model runs in a fresh
subprocess so peak memory (VmHWM) is that model's alone. ``--repeat N`` runs each model
N times and keeps each time's minimum: on a shared machine the minimum is the best
estimate of what the code costs, the other runs measure the neighbours.

The phases are timed one after the other, in the order the window runs them:
parse (read and check the file), graph (the plain Model, no shapes), shapes (onnx shape
inference and applying its types), layout (scope tree, default expand state and the
layered layout), paint (one complete paint of the laid-out graph, offscreen).

Every figure above is cold: those processes run with the layout cache off
(``ONNXSTUDIO_NO_LAYOUT_CACHE=1``). ``reopen`` is the window's open-to-painted when the
file was opened before: one fresh process opens it (filling a layout cache in a
temporary folder), then a second fresh process opens it again and is timed.
``cli_reopen`` is the same for ``onnxstudio export``.

Hooks other parts of the app fill in, each optional (a missing module prints "-"):

- ``tests/benchmarks/paint.py`` with ``measure_paint(model, layout) -> float``: seconds
  to the first complete paint of ``layout`` (offscreen), reported as ``paint_s``;
- ``tests/benchmarks/session.py`` with ``session_section(files)``: RSS after N open/close
  cycles in the window, the stall of a tab closing, idle CPU after open and a run;
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
import tempfile
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
# open-to-painted targets (seconds) from the speed issue (20)
TARGET_S = {"resnet50.onnx": 0.15, "bert12.onnx": 0.25, "bert96.onnx": 0.8,
            "dag100k.onnx": 2.0}
# `onnxstudio export MODEL OUT.svg` from a shell, Python's start included (issue 20)
CLI_TARGET_S = {"bert96.onnx": 1.2, "dag100k.onnx": 3.0}

# Issue 34: the longest event-loop gap (ms) of every user action; goal <= 50 each.
STALLS = [
    ("model", "model", "{}"),
    ("stall_ms", "stall_ms", "{:.0f}"),
    ("drop_stall_ms", "drop_stall", "{:.0f}"),
    ("export_stall_ms", "export_stall", "{:.0f}"),
    ("png_export_stall_ms", "png_stall", "{:.0f}"),
    ("pdf_export_stall_ms", "pdf_stall", "{:.0f}"),
    ("profile_stall_ms", "profile_stall", "{:.0f}"),
    ("run_stall_ms", "run_stall", "{:.0f}"),
    ("compare_stall_ms", "compare_stall", "{:.0f}"),
    ("hide_stall_ms", "hide_stall", "{:.0f}"),
    ("diff_stall_ms", "diff_stall", "{:.0f}"),
    ("split_stall_ms", "split_stall", "{:.0f}"),
    ("split_write_stall_ms", "split_write", "{:.0f}"),
    ("edit_stall_ms", "edit_stall", "{:.0f}"),
    ("optimised_stall_ms", "optimised_stall", "{:.0f}"),
    ("expand_stall_ms", "expand_stall", "{:.0f}"),
]
COLUMNS = [
    ("model", "model", "{}"),
    ("nodes", "nodes", "{:,}"),
    ("parse_s", "parse", "{:.3f}"),
    ("graph_s", "graph", "{:.3f}"),
    ("shapes_s", "shapes", "{:.3f}"),
    ("layout_s", "layout", "{:.3f}"),
    ("boxes", "boxes", "{:,}"),
    ("paint_s", "paint", "{:.3f}"),
    ("total_s", "sum", "{:.3f}"),
    ("window_s", "window", "{:.3f}"),
    ("window_no_fork_s", "win_no_fork", "{:.3f}"),
    ("shaped_s", "shaped", "{:.3f}"),
    ("reopen_s", "reopen", "{:.3f}"),
    ("reopen_stall_ms", "reopen_stall", "{:.0f}"),
    ("target_s", "target", "{:.2f}"),
    *STALLS[1:-1],
    ("expand_first_s", "expand_drawn", "{:.3f}"),  # the expanded view first painted
    ("expand_s", "expand_all", "{:.3f}"),
    STALLS[-1],
    ("frame_p95_ms", "frame_p95", "{:.0f}"),
    ("frame_cpu_p95_ms", "frame_cpu", "{:.0f}"),
    ("peak_mb", "peak_MB", "{:,.0f}"),
    ("expand_peak_mb", "expand_MB", "{:,.0f}"),
    ("expand_alone_s", "exp_alone", "{:.3f}"),
    ("expand_alone_mb", "exp_alone_MB", "{:,.0f}"),
    ("expanded_rss_mb", "expanded_RSS", "{:,.0f}"),
    ("cli_export_s", "cli_svg", "{:.2f}"),
    ("cli_no_fork_s", "cli_no_fork", "{:.2f}"),
    ("cli_reopen_s", "cli_reopen", "{:.2f}"),
    ("cli_target_s", "cli_target", "{:.1f}"),
]
QUALITY = [
    ("model", "model", "{}"),
    ("cross_centre", "cross_ctr", "{:,}"),
    ("cross_routes", "cross_route", "{:,}"),
    ("full_layout_s", "full_lay_s", "{:.3f}"),
    ("full_boxes", "full_boxes", "{:,}"),
    ("full_cross_centre", "full_ctr", "{:,}"),
    ("full_cross_routes", "full_route", "{:,}"),
]
TIMES = {"parse_s", "graph_s", "shapes_s", "layout_s", "paint_s", "total_s", "window_s",
         "shaped_s", "window_no_fork_s", *(key for key, _, _ in STALLS[1:]),
         *(key.replace("_ms", "_cpu_ms") for key, _, _ in STALLS[1:]), "expand_s",
         "expand_alone_s", "expand_first_s",
         "frame_p95_ms", "frame_cpu_p95_ms", "full_layout_s",
         "cli_export_s", "reopen_s", "reopen_stall_ms", "cli_reopen_s", "cli_no_fork_s"}
CACHE_OFF = "ONNXSTUDIO_NO_LAYOUT_CACHE"  # onnxstudio/layout/cache.py


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


def _timed(row: dict[str, Any], key: str, fn: Callable[[], Any]) -> Any:
    t0 = time.perf_counter()
    result = fn()
    row[key] = time.perf_counter() - t0
    return result


def measure_one(path: Path, crossings: bool = True, expand: bool = True) -> dict[str, Any]:
    """Everything for one model, in this process (call it in a fresh one); ``expand``:
    whether the window expands everything (dag100k: 20 s)."""
    from onnxstudio.layout import ExpandState, build_layout, default_state, layered
    from onnxstudio.layout.metrics import center_crossings, route_crossings
    from onnxstudio.layout.scopes import graph_scope_tree
    from onnxstudio.model.inference import infer_shapes
    from onnxstudio.model.load import read_model_proto
    from onnxstudio.model.reader import apply_inferred_types, build_model

    row: dict[str, Any] = {"model": path.name}
    window = _hook("paint", "measure_window")
    if window is not None:  # first, cold: the user's open-to-painted through the window
        # with peak_mb: what the app needs to show the model
        row.update(window(path, expand=expand))
    proto, external = _timed(row, "parse_s", lambda: read_model_proto(path))
    model = _timed(row, "graph_s", lambda: build_model(proto, path, external_data=external))
    _timed(row, "shapes_s", lambda: apply_inferred_types(model, infer_shapes(proto)[0]))
    row["nodes"] = len(model.graph.nodes)

    def lay_out() -> Any:
        layered._CACHE.clear()  # cold, as on first open (the window filled it)
        graph_scope_tree(model.graph)
        return build_layout(model, default_state(model.graph))

    layout = _timed(row, "layout_s", lay_out)
    row["boxes"] = len(layout.boxes)
    paint = _hook("paint", "measure_paint")
    if paint is not None:
        row["paint_s"] = paint(model, layout)
    row["total_s"] = sum(row.get(k) or 0.0 for k in (
        "parse_s", "graph_s", "shapes_s", "layout_s", "paint_s"))
    row["target_s"] = TARGET_S.get(path.name)
    if crossings:
        row["cross_centre"] = center_crossings(layout)
        row["cross_routes"] = route_crossings(layout)
    if path.name in FULL_TOO:
        state = ExpandState()
        state.expand_all(model.graph)
        layered._CACHE.clear()  # measure cold, as on first open
        full = _timed(row, "full_layout_s", lambda: build_layout(model, state))
        row["full_boxes"] = len(full.boxes)
        if crossings:
            row["full_cross_centre"] = center_crossings(full)
            row["full_cross_routes"] = route_crossings(full)
    row.setdefault("peak_mb", peak_mb())
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


def run_isolated(path: Path, crossings: bool = True, expand: bool = True) -> dict[str, Any]:
    cold = dict(_bytecode_env(), **{CACHE_OFF: "1"})
    flags = ([] if crossings else ["--no-crossings"]) + ([] if expand else ["--no-expand"])
    row = _run_one(path, "--one", flags, cold)
    if "error" in row:
        return row
    # the window alone again, as where nothing may fork (Windows): the same paths today
    # (Qt refuses forks; shapes come from a spawned child), measured to keep it so
    row["window_no_fork_s"] = _run_one(path, "--reopen", [], dict(cold, ONNXSTUDIO_NO_FORK="1")
                                       ).get("window_s")
    row["cli_export_s"] = cli_export_seconds(path, cold)
    row["cli_no_fork_s"] = cli_export_seconds(path, dict(cold, ONNXSTUDIO_NO_FORK="1"))
    row["cli_target_s"] = CLI_TARGET_S.get(path.name)
    row.update(reopen_seconds(path))
    row.update(_run_one(path, "--drop", [], cold))
    if expand:  # open + Expand All alone: its own peak (expand_alone.py)
        row.update(_run_one(path, "--expand-alone", [], cold))
    return row


def run_stalls(path: Path, expand: bool = True) -> dict[str, Any]:
    """Only the window's rows (``--stalls``): every action's stall, fresh processes."""
    cold = dict(_bytecode_env(), **{CACHE_OFF: "1"})
    row = _run_one(path, "--window", [] if expand else ["--no-expand"], cold)
    if "error" not in row:
        row.update(_run_one(path, "--drop", [], cold))
    return {"model": path.name, **row}


def _bytecode_env() -> dict[str, str]:
    """This environment, but keeping .pyc files as an installed copy does: without them
    every fresh process compiles the modules it imports, some inside the measured times
    (a module first imported while exporting holds the GIL while it compiles)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _run_one(path: Path, mode: str, flags: list[str], env: dict[str, str]
             ) -> dict[str, Any]:
    """The JSON row a fresh ``python -m tests.benchmarks.run MODE PATH`` prints."""
    proc = subprocess.run([sys.executable, "-m", "tests.benchmarks.run", mode, str(path),
                           *flags], env=env, cwd=REPO, capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.strip().splitlines()
                 if "propagateSizeHints" not in ln]  # Qt's offscreen plugin's noise
        tail = (lines or ["failed"])[-1]
        return {"model": path.name, "error": tail}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def reopen_seconds(path: Path) -> dict[str, float | None]:
    """Second opens with the layout cache on (in a temporary folder): the window's, in a
    fresh process after another fresh process opened the file; the CLI export's likewise."""
    with tempfile.TemporaryDirectory() as cache:
        warm = {k: v for k, v in _bytecode_env().items() if k != CACHE_OFF}
        warm["XDG_CACHE_HOME"] = cache
        _run_one(path, "--reopen", [], warm)  # fills the cache
        row = _run_one(path, "--reopen", [], warm)
        cli_export_seconds(path, warm)
        return {"reopen_s": row.get("window_s"), "reopen_stall_ms": row.get("stall_ms"),
                "cli_reopen_s": cli_export_seconds(path, warm)}


def cli_export_seconds(path: Path, env: dict[str, str]) -> float | None:
    """Wall time of ``onnxstudio export MODEL OUT.svg`` as a shell runs it: a fresh
    interpreter, imports, parse, shapes, layout, paint and the file written."""
    with tempfile.TemporaryDirectory() as folder:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "onnxstudio", "export", str(path),
                               str(Path(folder) / "graph.svg")],
                              cwd=REPO, env=env, capture_output=True, check=False)
        seconds = time.perf_counter() - t0
    return seconds if proc.returncode == 0 else None


def best_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each time's minimum over the runs, everything else from the first good run."""
    good = [r for r in runs if "error" not in r]
    if not good:
        return runs[0]
    row = dict(good[0])
    for key in TIMES:
        found = [r[key] for r in good if r.get(key) is not None]
        if found:
            row[key] = min(found)
    for key in ("peak_mb", "expand_peak_mb", "expand_alone_mb", "expanded_rss_mb"):
        row[key] = max((r.get(key) or 0.0 for r in good), default=None) or None
    return row


def format_table(rows: list[dict[str, Any]], columns: list[tuple[str, str, str]] = COLUMNS
                 ) -> str:
    cells = [[title for _, title, _ in columns]]
    for row in rows:
        if "error" in row:
            cells.append([row["model"], f"error: {row['error']}"] + [""] * (len(columns) - 2))
            continue
        line = []
        for key, _, fmt in columns:
            value = row.get(key)
            line.append("-" if value is None else fmt.format(value))
        cells.append(line)
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
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


STALLS_NOTE = (
    "longest event-loop gap (ms) of each action, from its start until it is done, the "
    "window quiet and 0.3 s more: stall_ms open (File → Open) to shapes drawn; drop: a "
    "model dropped on the app's fresh window (its sample model shown); export/png/pdf: "
    "Export Diagram with the dialog's defaults; profile one run; run random inputs; "
    "compare all optimised vs none; hide then show the shape chains; diff: File → Diff "
    "With… a variant until both sides are drawn; split: the Split dialog's plan on the "
    "canvas; split_write: Write Stages… and its check; edit: an attribute (or a name) "
    "edited in the Node panel until rebuilt, checked and drawn; optimised: Model → Show "
    "Optimised Graph until both sides are drawn; expand: expand all")


def _wall_cpu(row: dict[str, Any]) -> dict[str, Any]:
    """``X_stall_ms`` as "gap/cpu" text, from ``X_stall_ms`` and ``X_stall_cpu_ms``."""
    if "error" in row:
        return row
    out = dict(row)
    for key, _, _ in STALLS[1:]:
        wall, cpu = row.get(key), row.get(key.replace("_ms", "_cpu_ms"))
        out[key] = None if wall is None else \
            f"{wall:.0f}" + ("" if cpu is None else f"/{cpu:.0f}")
    return out


def _stalls_table(files: list[Path], repeat: int, skip_expand: set[str]) -> int:
    rows = []
    for path in files:
        expand = not {path.name, path.stem} & skip_expand
        rows.append(best_of([run_stalls(path, expand) for _ in range(max(1, repeat))]))
        print(f"  {path.name} done", file=sys.stderr, flush=True)
    print(f"{STALLS_NOTE}; best of {repeat}. Each cell: the gap / the GUI thread's CPU "
          "time in its worst gap (the work that blocked the loop; a loaded machine "
          "inflates the gap, far less the CPU)")
    print(format_table([_wall_cpu(r) for r in rows], [(k, t, "{}") for k, t, _ in STALLS]))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="onnxstudio benchmark")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--reopen", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--window", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--drop", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--expand-alone", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--stalls", action="store_true",
                        help="only the window's stall of every user action (issue 34)")
    parser.add_argument("--no-crossings", action="store_true", help="skip crossing counts")
    parser.add_argument("--no-runner", action="store_true", help="skip the runner section")
    parser.add_argument("--no-session", action="store_true",
                        help="skip the long-session table (tests/benchmarks/session.py)")
    parser.add_argument("--skip-expand", action="append", default=[], metavar="MODEL",
                        help="don't expand all (nor time frames) for this model (dag100k: "
                             "20 s); repeatable")
    parser.add_argument("--no-expand", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--export", action="store_true",
                        help="also time SVG/PNG/PDF export (tests/benchmarks/export_times.py)")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="run each model N times, keep each time's minimum")
    parser.add_argument("models", nargs="*", help="subset of ladder file names")
    args = parser.parse_args(argv)
    if args.one is not None:
        print(json.dumps(measure_one(args.one, not args.no_crossings, not args.no_expand)))
        return 0
    if args.reopen is not None:
        window = _hook("paint", "measure_window")
        print(json.dumps(window(args.reopen, extras=False) if window else {}))
        return 0
    if args.expand_alone is not None:
        from tests.benchmarks.expand_alone import measure_expand_alone

        print(json.dumps(measure_expand_alone(args.expand_alone)))
        return 0
    if args.window is not None or args.drop is not None:
        from tests.benchmarks.actions import measure_drop
        from tests.benchmarks.paint import measure_window

        print(json.dumps(measure_drop(args.drop) if args.drop is not None
                         else measure_window(args.window, expand=not args.no_expand)))
        return 0
    files = ladder_files()
    if args.models:
        files = [f for f in files if f.name in args.models or f.stem in args.models]
    if args.stalls:
        return _stalls_table(files, args.repeat, set(args.skip_expand))
    rows = []
    for path in files:
        expand = not {path.name, path.stem} & set(args.skip_expand)
        rows.append(best_of([run_isolated(path, not args.no_crossings, expand)
                             for _ in range(max(1, args.repeat))]))
        print(f"  {path.name} done", file=sys.stderr, flush=True)
    print(f"ladder: {files[0].parent if files else '-'}; seconds, best of {args.repeat}. "
          "parse → graph → shapes → layout → paint, one after the other (sum); window: "
          "open to first complete paint through the real window, in a fresh process; "
          "shaped: until the inferred shapes are drawn; win_no_fork: window with "
          "ONNXSTUDIO_NO_FORK=1; reopen: window again, in another fresh "
          "process, with the layout cache the first open filled (all else is cold: cache "
          "off); stall_ms: the longest the window's "
          "event loop went without a 5 ms timer tick meanwhile; *_stall: the same while "
          "exporting what is shown as SVG (export) and PDF (pdf), profiling one run, "
          "running random inputs, comparing all with no optimisation, hiding then showing "
          "the shape chains (View → Hide Nodes), expanding all, Model → Show Optimised "
          "Graph until both sides are drawn; "
          "frame_p95: 95th percentile of full repaints of the expanded graph while panning "
          "and zooming (ms; frame_cpu: the GUI thread's CPU time of them); "
          "peak_MB: the process's peak resident memory once the model is shown; "
          "expand_MB: the same after expanding all and those frames (and the actions "
          "before); exp_alone: open then Expand All alone, in a fresh process (seconds, "
          "its peak MB, and expanded_RSS: resident once expanded); "
          "cli_svg: `onnxstudio export MODEL OUT.svg` from a shell, Python's start included; "
          "cli_no_fork: the same in one process (ONNXSTUDIO_NO_FORK=1, as on Windows); "
          "cli_reopen: the same once an export filled the layout cache")
    print(format_table(rows))
    if not args.no_crossings:
        print()
        print("layout quality: crossings of straight centre segments (ctr) and drawn routes "
              "(route); full_*: every scope group expanded")
        print(format_table(rows, QUALITY))
    session = _hook("session", "session_section")
    if session is not None and not args.no_session:
        print()
        print(session(files))
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
