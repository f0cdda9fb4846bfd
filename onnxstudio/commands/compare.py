"""`onnxstudio compare MODEL INPUT --a CONFIG --b CONFIG`: where two runs part ways."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from onnxstudio.commands.run import _json_safe, add_input_options, requests
from onnxstudio.model.formatting import format_number


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]
               ) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "compare", help="run one input on two configurations and diff every value",
        description="Run MODEL on INPUT (prepared as `onnxstudio run` does) with two "
                    "configurations and print the differences of each output and each "
                    "node's outputs (max abs, max rel, cosine), and the first node, in "
                    "topological order, whose output exceeds the tolerance. CONFIG is "
                    "ort:PROVIDER:LEVEL (e.g. ort:cpu:all, ort:cpu:disabled, ort:cuda:all) "
                    "or reference (onnx's ReferenceEvaluator).")
    add_input_options(p, session=False)
    p.add_argument("--a", default="ort:cpu:all", metavar="CONFIG",
                   help="first configuration (default ort:cpu:all)")
    p.add_argument("--b", default="ort:cpu:disabled", metavar="CONFIG",
                   help="second configuration (default ort:cpu:disabled)")
    p.add_argument("--b-model", type=Path, metavar="MODEL",
                   help="run B on this copy of the model instead (values paired by "
                        "structure, then name)")
    # Checked in run() by the panel's parser, so a bad value is one line and exit 2.
    p.add_argument("--tolerance", default=None, metavar="T",
                   help="diverged when max|a-b| > T·max(1, max|a|), T ≥ 0 (default auto: by "
                        "dtype, 1e-3 for float32, 2e-3 for float16)")
    p.add_argument("--cap-mb", type=int, default=1024, metavar="MB",
                   help="memory for captured intermediates per side (default 1024)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--top", type=int, default=10, metavar="K",
                   help="most divergent nodes in the text report")
    return p


def run(args: argparse.Namespace) -> int:
    from onnxstudio.errors import InputError
    from onnxstudio.runner.compare import compare, parse_config
    from onnxstudio.runner.tolerance import tolerance_choice

    tolerance = None if args.tolerance is None else tolerance_choice(args.tolerance)
    config_a, config_b = parse_config(args.a), parse_config(args.b)
    if args.b_model is not None and not args.b_model.is_file():
        raise InputError(f"{args.b_model.name}: no such model file")
    request = requests(args)[0]
    result = compare(request, config_a, config_b, tolerance,
                     model_b=args.b_model, cap_bytes=args.cap_mb << 20)
    if args.json:
        print(json.dumps(_json_safe(result.as_json())))
        return 0
    print(f"{result.model.name} on {result.source}: A={result.a.label}  B={result.b.label}  "
          f"{result.tolerance_note}")
    for w in result.warnings:
        print(f"  warning: {w}")
    for d in result.outputs:
        flag = "DIVERGES" if d.exceeds else "ok"
        print(f"  output {d.name}: max abs {format_number(d.max_abs, 3)}, "
              f"max rel {format_number(d.max_rel, 3)}, "
              f"cosine {d.cosine:.6f}  {flag}")
    fd = result.first_divergence
    if fd is None:
        print(f"  no node output exceeds the tolerance ({len(result.intermediates)} compared)")
    else:
        print(f"  first diverging node: {fd.name or fd.id} ({fd.op_type}), output {fd.value}")
    worst = sorted(result.intermediates, key=lambda d: -d.max_rel)[: max(0, args.top)]
    if worst:
        print("  largest relative differences:")
        for d in worst:
            print(f"    {d.max_rel:10.3g} rel {d.max_abs:10.3g} abs  cos {d.cosine:.6f}  {d.name}")
    return 0
