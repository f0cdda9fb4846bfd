"""`onnxstudio split MODEL OUTDIR --stages N`: cut a model into pipeline stages, headless."""

from __future__ import annotations

import argparse
import json
from typing import Any

from onnxstudio.errors import CutError


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]
               ) -> argparse.ArgumentParser:
    from onnxstudio.model.split import COST_KINDS

    parser = subparsers.add_parser(
        "split",
        help="cut a model into N consecutive stages for pipelining",
        description="Write OUTDIR/stage_1.onnx … stage_N.onnx, which chained compute "
        "exactly MODEL, and OUTDIR/manifest.json naming each stage's inputs and where "
        "they come from (the model or an earlier stage). Cuts balance the chosen cost "
        "while handing as few bytes as possible from stage to stage; the chain is then "
        "checked against the whole model on random inputs.",
    )
    parser.add_argument("model", help="the .onnx model to split")
    parser.add_argument("outdir", help="folder for the stages and manifest.json")
    parser.add_argument("--stages", type=int, metavar="N",
                        help="how many stages (cut where the cost balances)")
    parser.add_argument("--cut-after", action="append", default=[], metavar="NODE",
                        help="cut after this node (its name); repeat for more cuts")
    parser.add_argument("--cut", action="append", default=[], metavar="TENSOR",
                        help="cut after the node making this tensor; repeat for more cuts")
    parser.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE",
                        help="size of a symbolic dimension for the check's random inputs "
                        "and --by time (e.g. --dim sequence_length=128)")
    parser.add_argument("--by", choices=COST_KINDS, default="params",
                        help="what to balance: weight bytes, an operator FLOP estimate, or "
                        "time per node from a profile on random inputs (default: params)")
    parser.add_argument("--no-check", action="store_true",
                        help="do not run the chain against the whole model")
    parser.add_argument("--json", action="store_true", help="print the manifest as JSON")
    return parser


def _times(model_path: str, dims: dict[str, int]) -> dict[int, float]:
    """Per-node ms from onnxruntime's profiler, optimisations off so nodes map 1:1."""
    from pathlib import Path

    from onnxstudio.runner.pipeline import RunRequest
    from onnxstudio.runner.profile import profile
    from onnxstudio.runner.session import SessionConfig

    result = profile(RunRequest(Path(model_path), random=True, dim_sizes=dims,
                                config=SessionConfig(optimization="disable")),
                     runs=3, warmup=1)
    return {n.index: n.time_ms for n in result.nodes}


def _table(plan: Any) -> str:
    from onnxstudio.model.formatting import human_bytes

    lines = [f"{'stage':<14} {'nodes':>6} {'share':>6} {'weights':>9}  inputs"]
    for stage in plan.stages:
        share = stage.cost / plan.total_cost if plan.total_cost else 0.0
        fed = ", ".join(f"{i.name} ({i.source})" for i in stage.inputs)
        lines.append(f"{stage.file:<14} {len(stage.nodes):>6} {share:>6.1%} "
                     f"{human_bytes(stage.params):>9}  {fed}")
    handed = ", ".join(human_bytes(b) for b in plan.cut_bytes) or "–"
    lines.append(f"balance: costliest stage {plan.imbalance:.2f}× the ideal share "
                 f"(by {plan.by}); handed over at the cuts: {handed}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from onnxstudio.model import load_model
    from onnxstudio.model.split import plan_at, plan_split
    from onnxstudio.model.split_write import manifest_json, write_split
    from onnxstudio.runner.synthetic import parse_dim_sizes

    by_hand = bool(args.cut_after or args.cut)
    if by_hand == (args.stages is not None):
        raise CutError("give --stages N, or cuts with --cut-after NODE / --cut TENSOR")
    if args.stages is not None and args.stages < 1:
        raise CutError(f"--stages {args.stages}: give a number of stages of 1 or more")
    dims = parse_dim_sizes(",".join(args.dim))
    model = load_model(args.model)
    times = _times(args.model, dims) if args.by == "time" else None
    plan = plan_at(model, args.cut_after, args.cut, args.by, times) if by_hand else \
        plan_split(model, args.stages, args.by, times)
    written = write_split(model, plan, args.outdir)
    report = manifest_json(model, plan)
    check = None
    if not args.no_check:
        from onnxstudio.runner.split_check import check_chain

        check = check_chain(args.model, written.folder, report["stages"], dim_sizes=dims)
        report["check"] = check.as_json()
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(_table(plan))
        print(f"wrote {len(written.files)} stages and {written.manifest}")
        print(check.describe() if check is not None else "not checked (--no-check)")
    return 1 if check is not None and not check.ok else 0
