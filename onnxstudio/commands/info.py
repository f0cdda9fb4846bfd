"""`onnxstudio info MODEL [--json]`: what a model is, without opening a window."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from onnxstudio.model import load_model
from onnxstudio.model.formatting import human_bytes, human_count
from onnxstudio.model.summary import model_summary


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("info", help="summarise a model (opsets, inputs, outputs, operators)")
    p.add_argument("model", help="path to an .onnx file")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--no-shape-inference", action="store_true",
                   help="skip onnx shape inference (faster on huge graphs)")


def _dims(shape: list[Any] | None) -> str:
    if shape is None:
        return "?"
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    model = load_model(args.model, shape_inference=not args.no_shape_inference)
    info = model_summary(model)
    info["load_seconds"] = round(time.perf_counter() - start, 4)
    if args.json:
        json.dump(info, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    w = sys.stdout.write
    w(f"{info['path']}  ({human_bytes(info['file_size'])})\n")
    w(f"  IR version      {info['ir_version']}\n")
    w(f"  producer        {info['producer'] or '-'}\n")
    w("  opsets          " + ", ".join(f"{d} {v}" for d, v in info["opset_imports"].items()) + "\n")
    w(f"  nodes           {info['node_count']}"
      + (f" ({info['node_count_total']} with nested bodies)"
         if info["node_count_total"] != info["node_count"] else "") + "\n")
    external = ", external data" if info["external_data"] else ""
    w(f"  parameters      {human_count(info['parameters'])} "
      f"({human_bytes(info['weight_bytes'])}{external})\n")
    if info["subgraphs"] or info["functions"]:
        w(f"  subgraphs       {info['subgraphs']}, local functions {info['functions']}\n")
    for title in ("inputs", "outputs"):
        w(f"  {title}\n")
        for io in info[title]:
            w(f"    {io['name']:<28} {io['dtype'] or '?':<9} {_dims(io['shape'])}\n")
    w("  operators\n")
    for op in info["operators"]:
        domain = "" if op["domain"] == "ai.onnx" else f"{op['domain']}::"
        version = f"v{op['since_version']}" if op["since_version"] else "no schema"
        w(f"    {op['count']:>6} × {domain}{op['op_type']} ({version})\n")
    if info["metadata"]:
        w("  metadata\n")
        for key, value in info["metadata"].items():
            w(f"    {key}: {value[:80]}\n")
    for warning in info["warnings"]:
        w(f"  warning: {warning}\n")
    w(f"  loaded in {info['load_seconds']:.2f} s\n")
    return 0
