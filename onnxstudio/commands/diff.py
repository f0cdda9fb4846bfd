"""`onnxstudio diff A B [--json]`: what changed between two models; exit 0 same, 1 differ."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from onnxstudio.commands.run import _json_safe
from onnxstudio.model import load_model
from onnxstudio.model.diff import ModelDiff, diff_models

_MARK = {"changed": "~", "added": "+", "removed": "-", "matched": "="}


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]
               ) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "diff", help="compare two models node by node (exit 0 identical, 1 differ)",
        description="Pair the nodes of A and B by structure (operator, position, "
                    "neighbours, weight shapes), then by name, so renamed copies still "
                    "match; report changed, added and removed nodes, and differences of "
                    "inputs, outputs, opsets and metadata. Exit 0 when identical, 1 when "
                    "they differ, 2 on error.")
    p.add_argument("a", help="first model (.onnx)")
    p.add_argument("b", help="second model (.onnx)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--no-weights", action="store_true",
                   help="compare weights by shape and dtype only, without reading values")
    p.add_argument("--limit", type=int, default=40, metavar="N",
                   help="changed/added/removed nodes listed per kind in the text report "
                        "(default 40)")
    return p


def run(args: argparse.Namespace) -> int:
    a = load_model(args.a, shape_inference=False)
    b = load_model(args.b, shape_inference=False)
    result = diff_models(a, b, weights=not args.no_weights)
    try:
        if args.json:
            json.dump(_json_safe(result.as_json()), sys.stdout, indent=1)
            sys.stdout.write("\n")
        else:
            _print_text(result, max(0, args.limit))
        sys.stdout.flush()
    except BrokenPipeError:  # `onnxstudio diff a b | head`: the reader has seen enough
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - replaces the closed stream
    return 0 if result.identical else 1


def _print_text(result: ModelDiff, limit: int) -> None:
    w = sys.stdout.write
    counts = result.summary()
    w(f"A  {result.a.path}  ({len(result.a.graph.nodes):,} nodes)\n")
    w(f"B  {result.b.path}  ({len(result.b.graph.nodes):,} nodes)\n")
    w(f"nodes: {counts['matched']:,} matched, {counts['changed']:,} changed, "
      f"{counts['added']:,} added, {counts['removed']:,} removed  "
      f"({result.match_ratio():.1%} paired, {result.seconds:.2f} s)\n")
    for section, entries in result.graph_entries().items():
        for e in entries:
            if e.status != "matched":
                w(f"{section.removesuffix('s'):<9}{_MARK[e.status]} {e.key}: "
                  f"{_side(e.a)} → {_side(e.b)}\n")
    for status in ("changed", "removed", "added"):
        chosen: list[Any] = []
        for pattern, group in result.patterns(status):
            if len(group) < 3:  # rare changes are listed one by one
                chosen += group
                continue
            names = ", ".join(e.title for e in group[:2])
            w(f"{_MARK[status]} {len(group):,} × {pattern}: {names}, "
              f"… and {len(group) - 2:,} more\n")
        for entry in chosen[:limit]:
            w(f"{_MARK[status]} {entry.title} ({entry.op_type})\n")
            for c in entry.changes:
                detail = c.weight.summary() if c.weight else f"{_side(c.a)} → {_side(c.b)}"
                w(f"    {c.kind} {c.name}: {detail}\n")
        if len(chosen) > limit:
            w(f"  … and {len(chosen) - limit:,} more {status} (see --json)\n")
    if result.identical:
        w("identical\n")


def _side(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, dict) and "name" in value:
        shape = value.get("shape")
        dims = "?" if shape is None else "×".join("?" if d is None else str(d) for d in shape)
        return f"{value['name']} {value.get('dtype') or '?'}[{dims}]"
    return str(value)
