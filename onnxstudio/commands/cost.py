"""`onnxstudio cost MODEL`: MACs, parameters and memory per node, per scope and in total."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from onnxstudio.model.formatting import human_bytes, human_count


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "cost", help="MACs, parameters and activation memory per node and scope",
        description="Count what each node computes (multiply-accumulates as onnx-tool "
                    "counts them; other operators as element operations), the weights it "
                    "reads, the bytes it writes, and the activations alive at once. "
                    "Symbolic dimensions are 1 unless given with --dim.")
    p.add_argument("model", help="path to an .onnx file")
    p.add_argument("--json", action="store_true",
                   help="print {total, nodes, scopes, assumptions} as one JSON object")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE",
                   help="size of a symbolic dimension (repeatable; default 1)")
    p.add_argument("--csv", type=Path, metavar="FILE", help="also write the node table as CSV")
    p.add_argument("--top", type=int, default=15, metavar="K",
                   help="nodes and scopes in the text tables (default 15)")


def run(args: argparse.Namespace) -> int:
    from onnxstudio.export.atomic import atomic_write
    from onnxstudio.layout.cost_table import cost_table
    from onnxstudio.model.load import read_model_proto
    from onnxstudio.model.reader import build_model
    from onnxstudio.runner.synthetic import parse_dim_sizes

    dims = parse_dim_sizes(",".join(args.dim))
    path = Path(args.model)
    proto, external = read_model_proto(path)
    model = build_model(proto, path, external_data=external)
    cost = cost_table(model, proto, dims)
    if args.csv:
        atomic_write(args.csv, cost.to_csv(), protect=[path])
    if args.json:
        sys.stdout.write(json.dumps(cost.as_json()) + "\n")  # C encoder: dump is Python
        return 0
    _print_table(path, cost, max(0, args.top))
    return 0


def _print_table(path: Path, cost: Any, top: int) -> None:
    w = sys.stdout.write
    whole = cost.macs or 1
    w(f"{path.name}: {human_count(cost.macs)} MACs, {human_count(cost.element_ops)} element "
      f"ops, {human_count(cost.params)} parameters ({human_bytes(cost.weight_bytes)})\n")
    peak_at = next((n for n in cost.nodes if n.id == cost.peak_node), None)
    where = f" at {peak_at.op_type} {peak_at.name or peak_at.id}" if peak_at else ""
    w(f"activations written {human_bytes(cost.activation_bytes)}, peak alive "
      f"{human_bytes(cost.peak_activation_bytes)}{where}\n")
    ranked = cost.ranked()[:top]
    w(f"\ntop {len(ranked)} nodes by MACs\n")
    w(f"  {'MACs':>9} {'share':>6} {'params':>8} {'output':>9}  op / node\n")
    for n in ranked:
        w(f"  {human_count(n.macs):>9} {100 * n.macs / whole:5.1f}% {human_count(n.params):>8} "
          f"{human_bytes(n.output_bytes):>9}  {n.op_type} {n.name or n.id}\n")
    scopes = sorted(cost.scopes, key=lambda s: (s.depth, -s.macs))[:top]
    if scopes:
        w("\nscopes (outermost first)\n")
        for s in scopes:
            w(f"  {human_count(s.macs):>9} {100 * s.macs / whole:5.1f}% "
              f"{human_count(s.params):>8} {human_bytes(s.output_bytes):>9}  "
              f"{'  ' * (s.depth - 1)}{s.name}\n")
    w("\nassumptions\n")
    for line in cost.assumptions:
        w(f"  - {line}\n")
