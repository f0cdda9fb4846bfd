"""`onnxstudio run MODEL INPUT...`: preprocess, run, explain — the same path as the panel."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from onnxstudio.errors import InputError


def _floats(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(v) for v in text.replace(" ", "").split(",") if v)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas: {text!r}") from exc


def _size(text: str) -> tuple[int, int]:
    parts = text.lower().replace("×", "x").split("x")
    try:
        if len(parts) == 1:
            return int(parts[0]), int(parts[0])
        if len(parts) == 2:
            return int(parts[0]), int(parts[1])
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"expected HxW (e.g. 224x224): {text!r}")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "run", help="run a model on images, .npy files or random inputs",
        description="Run MODEL on each INPUT (an image, a .npy file, or NAME=FILE.npy for a "
                    "named input) and print the answer. Preprocessing follows the model's "
                    "metadata and input shape first; the options fill in what the model "
                    "does not say.")
    add_input_options(p)
    p.add_argument("--json", action="store_true", help="one JSON object per input")
    p.add_argument("--labels", type=Path, metavar="FILE", help="class names, one per line")
    p.add_argument("--top", type=int, default=5, metavar="K")
    p.add_argument("--benchmark", type=int, default=0, metavar="N",
                   help="also time N runs and report median and p90")
    return p


def add_input_options(p: argparse.ArgumentParser, session: bool = True) -> None:
    """MODEL, INPUT... and the preprocessing (and, with ``session``, session) options,
    shared by `run`, `profile` and `compare` so an input is prepared the same way."""
    p.add_argument("model", type=Path, help="the .onnx model")
    p.add_argument("inputs", nargs="*", metavar="INPUT", help="images or .npy files")
    p.add_argument("--preset", choices=["imagenet", "caffe", "raw255", "unit", "symmetric"])
    p.add_argument("--channels", choices=["rgb", "bgr", "gray"])
    p.add_argument("--layout", choices=["nchw", "nhwc"])
    p.add_argument("--size", type=_size, metavar="HxW", help="for symbolic H/W (default 224x224)")
    p.add_argument("--resize", choices=["crop", "stretch", "letterbox"])
    p.add_argument("--mean", type=_floats, metavar="M[,M,M]")
    p.add_argument("--std", type=_floats, metavar="S[,S,S]")
    p.add_argument("--scale", type=float, help="multiply pixels by this before mean/std")
    if session:
        p.add_argument("--provider", help="execution provider (default CPUExecutionProvider)")
        p.add_argument("--optimization", choices=["disable", "basic", "extended", "all"],
                       default="all", help="graph optimisation level")
        p.add_argument("--threads", type=int, default=0,
                       help="intra-op threads (0: automatic)")
    p.add_argument("--random", action="store_true", help="run once with random inputs")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE",
                   help="size of a symbolic dimension for --random")


def requests(args: argparse.Namespace) -> list[Any]:
    """RunRequests from the options of add_input_options (one per input source)."""
    return _requests(args)


def _requests(args: argparse.Namespace) -> list[Any]:
    from onnxstudio.runner.pipeline import ImageSource, RunRequest
    from onnxstudio.runner.preprocess import PreprocessOptions
    from onnxstudio.runner.session import CPU, SessionConfig

    options = PreprocessOptions(preset=args.preset, channels=args.channels, layout=args.layout,
                                size=args.size, resize=args.resize, mean=args.mean,
                                std=args.std, scale=args.scale)
    config = SessionConfig(getattr(args, "provider", None) or CPU,
                           getattr(args, "optimization", "all"), getattr(args, "threads", 0))
    common: dict[str, Any] = {"options": options, "config": config,
                              "top_k": getattr(args, "top", 5),
                              "labels_file": getattr(args, "labels", None),
                              "benchmark_runs": getattr(args, "benchmark", 0)}
    if not args.model.is_file():
        raise InputError(f"{args.model.name}: no such model file")
    if args.random or not args.inputs:
        sizes: dict[str, int] = {}
        for item in args.dim:
            name, _, value = item.partition("=")
            if not value.isdigit():
                raise InputError(f"--dim {item!r}: expected NAME=SIZE")
            sizes[name] = int(value)
        return [RunRequest(args.model, random=True, dim_sizes=sizes, **common)]
    named = {k: Path(v) for k, _, v in (a.partition("=") for a in args.inputs if "=" in a)}
    plain = [Path(a) for a in args.inputs if "=" not in a]
    requests = []
    if named:
        requests.append(RunRequest(args.model, npy=named, **common))
    for path in plain:
        if path.suffix.lower() == ".npy":
            requests.append(RunRequest(args.model, npy={"": path}, **common))
        else:
            requests.append(RunRequest(args.model, images=[ImageSource(str(path), path)],
                                       **common))
    return requests


def _text(outcome: Any) -> str:
    lines = [f"== {outcome.source}"]
    lines += [f"   fed {f.describe()}" for f in outcome.fed]
    if outcome.preprocessed is not None:
        lines += [f"   {r}" for r in outcome.preprocessed.plan.reasons]
    for v in outcome.views:
        lines.append(f"   output {v.name}: {v.summary or v.kind} [{v.kind}]")
        if v.top:
            note = " (softmax applied)" if v.softmax_applied else ""
            lines.append(f"     top {len(v.top)} — labels: {v.labels_source}{note}")
            lines += [f"     {t.score:8.4f}  {t.index:5d}  {t.label}" for t in v.top]
        elif v.stats:
            lines.append("     " + "  ".join(f"{k}={val:.4g}" for k, val in v.stats.items()))
    lines.append(f"   latency {outcome.latency_ms:.2f} ms")
    if outcome.benchmark is not None:
        b = outcome.benchmark
        lines.append(f"   benchmark {len(b.times_ms)} runs: median {b.median_ms:.2f} ms, "
                     f"p90 {b.p90_ms:.2f} ms")
    return "\n".join(lines)


def _json_safe(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_json_safe(v) for v in obj]
    return obj


def run(args: argparse.Namespace) -> int:
    from onnxstudio.runner.pipeline import Pipeline

    pipeline = Pipeline()
    for request in _requests(args):
        for outcome in pipeline.execute(request):
            if args.json:
                data = outcome.as_json(request.model)
                if outcome.benchmark is not None:
                    data["benchmark_ms"] = {"median": outcome.benchmark.median_ms,
                                            "p90": outcome.benchmark.p90_ms}
                print(json.dumps(_json_safe(data)))
            else:
                print(_text(outcome))
            sys.stdout.flush()
    return 0
