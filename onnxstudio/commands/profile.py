"""`onnxstudio profile MODEL INPUT`: time per node of one run, named as in the model."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from onnxstudio.commands.run import _json_safe, add_input_options, requests


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]
               ) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "profile", help="time each node of one run (onnxruntime's profiler)",
        description="Run MODEL once on INPUT (prepared as `onnxstudio run` does) with "
                    "onnxruntime's profiler on, and print the time of each node. With "
                    "--optimization disable kernels are the model's nodes one to one; with "
                    "optimisations, each kernel (fused, reordered, cast) is credited to the "
                    "model nodes it replaced.")
    add_input_options(p)
    p.add_argument("--json", action="store_true",
                   help="print {total_ms, nodes: [{name, op_type, time_ms}], ...}")
    p.add_argument("--runs", type=int, default=1, metavar="N",
                   help="average over N measured runs (default 1)")
    p.add_argument("--warmup", type=int, default=1, metavar="N",
                   help="untimed runs first (default 1)")
    p.add_argument("--top", type=int, default=20, metavar="K", help="rows in the text table")
    p.add_argument("--csv", type=Path, metavar="FILE", help="also write the node table as CSV")
    return p


def run(args: argparse.Namespace) -> int:
    from onnxstudio.export.atomic import atomic_write
    from onnxstudio.runner.profile import profile, to_csv

    request = requests(args)[0]
    result = profile(request, runs=args.runs, warmup=args.warmup)
    if args.csv:
        atomic_write(args.csv, to_csv(result), protect=[request.model])
    if args.json:
        print(json.dumps(_json_safe(result.as_json())))
        return 0
    print(f"{result.model.name} on {result.source} — {result.provider}, optimisation "
          f"{result.optimization}, {result.runs} run(s)")
    print(f"run {result.total_ms:.3f} ms, kernels {result.kernel_ms:.3f} ms")
    whole = result.kernel_ms or 1.0
    for n in result.nodes[: max(0, args.top)]:
        fused = f"  (+{len(n.covers)} fused)" if n.covers else ""
        print(f"  {n.time_ms:9.3f} ms {100 * n.time_ms / whole:5.1f}%  {n.op_type:<16} "
              f"{n.name or n.id}{fused}")
    if result.unmapped:
        t = sum(k.time_ms for k in result.unmapped)
        print(f"  {t:9.3f} ms {100 * t / whole:5.1f}%  (kernels onnxruntime added: "
              f"{', '.join(k.name for k in result.unmapped[:5])})")
    print("by operator type:")
    for o in result.op_types()[:10]:
        print(f"  {o.time_ms:9.3f} ms {100 * o.share:5.1f}%  {o.op_type} ×{o.count}")
    return 0
