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


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]
               ) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "run", help="run a model on images, folders, audio, .npy files, test data or random "
                    "inputs",
        description="Run MODEL on each INPUT (an image, a folder of images, a .wav clip, a "
                    ".npy file, NAME=FILE.npy for a named input, an .npz archive or a .pb "
                    "tensor, or a test_data_set_N folder of input_N.pb and output_N.pb "
                    "files) and print the answer. A test set's expected outputs give a "
                    "verdict per output (exit 1 on a failure); a folder of test_data_set_N "
                    "folders runs as a table. "
                    "Preprocessing follows the model's metadata, input shape and dtype, then "
                    "these options, then what the model file suggests (its family and "
                    "producer); each choice is printed with its reason. A folder whose "
                    "sub-folders are named after classes also gets accuracy and a confusion "
                    "matrix.")
    add_input_options(p)
    p.add_argument("--json", action="store_true", help="one JSON object per input")
    p.add_argument("--labels", type=Path, metavar="FILE", help="class names, one per line")
    p.add_argument("--top", type=int, default=5, metavar="K")
    p.add_argument("--benchmark", type=int, default=0, metavar="N",
                   help="also time N runs and report median and p90")
    p.add_argument("--threshold", type=float, default=None, metavar="S",
                   help="detectors: lowest score kept (default: the family's own, 0.7 for "
                        "face detectors, 0.25 for YOLO, else 0.5)")
    p.add_argument("--iou", type=float, default=0.45, metavar="R",
                   help="detectors: NMS overlap above which the weaker box goes (default 0.45)")
    p.add_argument("--save-outputs", type=Path, metavar="DIR",
                   help="write image outputs and detection/mask overlays as PNG into DIR")
    p.add_argument("--try-presets", action="store_true",
                   help="also run the first image with each likely preset, side by side")
    p.add_argument("--csv", type=Path, metavar="FILE",
                   help="folders: write the per-file table as CSV")
    return p


def add_input_options(p: argparse.ArgumentParser, session: bool = True) -> None:
    """MODEL, INPUT... and the preprocessing (and, with ``session``, session) options,
    shared by `run`, `profile` and `compare` so an input is prepared the same way."""
    p.add_argument("model", type=Path, help="the .onnx model")
    p.add_argument("inputs", nargs="*", metavar="INPUT", help="images or .npy files")
    p.add_argument("--preset", choices=["imagenet", "caffe", "raw255", "unit", "symmetric",
                                        "bgr255", "centred128"])
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
    p.add_argument("--zeros", action="store_true", help="run once with all-zero inputs")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE",
                   help="size of a symbolic dimension for --random/--zeros "
                        "(default: 1 for batch, 512 for audio, 8 tokens for text)")


def requests(args: argparse.Namespace) -> list[Any]:
    """RunRequests from the options of add_input_options (one per input source; folders
    are left to `run`, which walks them)."""
    from dataclasses import replace

    from onnxstudio.runner.pipeline import ImageSource
    from onnxstudio.runner.testdata import holds_test_data

    base = base_request(args)
    if args.random or base.zeros or not args.inputs:
        return [replace(base, random=True)]
    named = {k: Path(v) for k, _, v in (a.partition("=") for a in args.inputs if "=" in a)}
    out = [replace(base, npy=named)] if named else []
    for path in (Path(a) for a in args.inputs if "=" not in a):
        suffix = path.suffix.lower()
        if path.is_dir():
            if holds_test_data(path):
                out.append(replace(base, testdata=path))
            continue
        if suffix in (".pb", ".npz"):
            out.append(replace(base, testdata=path))
        elif suffix == ".npy":
            out.append(replace(base, npy={"": path}))
        elif suffix == ".wav":
            out.append(replace(base, audio=path))
        else:
            out.append(replace(base, images=[ImageSource(str(path), path)]))
    return out


def base_request(args: argparse.Namespace) -> Any:
    """A RunRequest with the options but no input yet."""
    from onnxstudio.runner.pipeline import RunRequest
    from onnxstudio.runner.preprocess import PreprocessOptions
    from onnxstudio.runner.session import CPU, SessionConfig
    from onnxstudio.runner.synthetic import parse_dim_sizes

    if not args.model.is_file():
        raise InputError(f"{args.model.name}: no such model file")
    options = PreprocessOptions(preset=args.preset, channels=args.channels, layout=args.layout,
                                size=args.size, resize=args.resize, mean=args.mean,
                                std=args.std, scale=args.scale)
    config = SessionConfig(getattr(args, "provider", None) or CPU,
                           getattr(args, "optimization", "all"), getattr(args, "threads", 0))
    return RunRequest(args.model, options=options, config=config,
                      top_k=getattr(args, "top", 5), labels_file=getattr(args, "labels", None),
                      benchmark_runs=getattr(args, "benchmark", 0),
                      threshold=getattr(args, "threshold", None), iou=getattr(args, "iou", 0.45),
                      dim_sizes=parse_dim_sizes(",".join(getattr(args, "dim", []))),
                      zeros=getattr(args, "zeros", False))


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
    if outcome.detections is not None:
        d = outcome.detections
        found = d.above()
        lines.append(f"   detector: {d.description}; {len(found)} above {d.threshold:g} "
                     f"after NMS (IoU {d.iou:g}), boxes in the original image's pixels")
        lines += ["     {:8.4f}  {:<16} [{:.1f}, {:.1f}, {:.1f}, {:.1f}]".format(
            x.score, x.label, *x.box) for x in found]
    if outcome.check is not None:
        from onnxstudio.commands.run_tests import verdict_lines
        lines += verdict_lines(outcome.check)
    if outcome.segmentation is not None:
        seg = outcome.segmentation
        lines.append(f"   segmenter: {seg.description}")
        lines += [f"     {frac:7.2%}  {label}" for _, label, frac in seg.areas[:10]]
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


def _print(data: Any, as_json: bool, text: str) -> None:
    print(json.dumps(_json_safe(data)) if as_json else text)
    sys.stdout.flush()


def _alternatives(pipeline: Any, request: Any, as_json: bool) -> None:
    """The first image under each likely preset, side by side (--try-presets)."""
    tried = pipeline.try_presets(request)
    rows = [{"preset": name, "top1": dict(zip(("label", "score"), o.top1() or ("", 0.0),
                                              strict=True))} for name, o in tried]
    ev = pipeline.evidence()
    text = [f"== presets side by side ({'strong' if ev.strong else 'weak'} evidence)"]
    text += [f"   {r['preset']:<11} {r['top1']['score']:8.4f}  {r['top1']['label']}"
             for r in rows]
    _print({"input": request.images[0].name, "alternatives": rows}, as_json, "\n".join(text))


def _run_folder(args: argparse.Namespace, pipeline: Any, folder: Path, template: Any) -> None:
    from onnxstudio.runner.folder import collect, run_folder, summarise, to_csv

    items = collect(folder)
    if not items:
        raise InputError(f"{folder.name}: no images in this folder")
    rows = []
    for row in run_folder(pipeline, template, items, keep_outcomes=True):
        rows.append(row)
        outcome, row.outcome = row.outcome, None
        if args.save_outputs and outcome is not None:
            from onnxstudio.runner.draw import save_outputs
            save_outputs(outcome, args.save_outputs)
        data: dict[str, Any] = {"file": row.item.name, "truth": row.item.truth, "top1": row.label,
                "index": row.index, "score": row.score, "correct": row.correct,
                "latency_ms": row.latency_ms, "error": row.error or None}
        if outcome is not None and outcome.detections is not None:
            data["detections"] = [d.as_json() for d in outcome.detections.above()]
        score = "" if row.score is None else f"{row.score:.4f}"
        mark = {True: "✓", False: "✗", None: " "}[row.correct]
        _print(data, args.json, f"{mark} {row.item.name:<40} {row.label or row.error:<24} "
                                f"{score:>8}  {row.latency_ms or 0:.1f} ms")
    summary = summarise(rows)
    if args.csv:
        args.csv.write_text(to_csv(rows), encoding="utf-8")
    text = [f"== {summary.images} images, {summary.errors} failed"]
    if summary.accuracy is not None:
        text.append(f"   accuracy {summary.accuracy:.2%} (sub-folder names as truth)")
        width = max(len(c) for c in summary.classes)
        text.append("   confusion (rows: truth, columns: predicted): " + " | ".join(
            summary.classes))
        text += [f"   {c:<{width}} " + " ".join(f"{n:4d}" for n in line)
                 for c, line in zip(summary.classes, summary.matrix, strict=True)]
    _print({"folder": str(folder), "summary": summary.as_json()}, args.json, "\n".join(text))


def _run_table(pipeline: Any, request: Any, as_json: bool) -> list[Any]:
    """A folder of test_data_set_N folders: one row per set, then the counts."""
    from onnxstudio.commands.run_tests import table_row, table_summary

    outcomes = pipeline.execute(request)
    for outcome in outcomes:
        _print(*table_row(outcome)[:1], as_json, table_row(outcome)[1])
    data, text = table_summary(request.testdata, outcomes)
    _print(data, as_json, text)
    return list(outcomes)


def run(args: argparse.Namespace) -> int:
    from onnxstudio.commands.run_tests import failed, is_table
    from onnxstudio.runner.pipeline import Pipeline
    from onnxstudio.runner.testdata import holds_test_data

    pipeline = Pipeline()
    folders = [Path(a) for a in args.inputs if "=" not in a and Path(a).is_dir()
               and not holds_test_data(Path(a))]
    for folder in folders:
        _run_folder(args, pipeline, folder, base_request(args))
    done = []
    for request in requests(args) if not folders or len(folders) < len(args.inputs) else []:
        if request.testdata is not None and is_table(request.testdata):
            done += _run_table(pipeline, request, args.json)
            continue
        if args.try_presets and request.images:
            _alternatives(pipeline, request, args.json)
        for outcome in pipeline.execute(request):
            done.append(outcome)
            if args.json:
                data = outcome.as_json(request.model)
                if outcome.benchmark is not None:
                    data["benchmark_ms"] = {"median": outcome.benchmark.median_ms,
                                            "p90": outcome.benchmark.p90_ms}
                _print(data, True, "")
            else:
                _print(None, False, _text(outcome))
            if args.save_outputs:
                from onnxstudio.runner.draw import save_outputs
                save_outputs(outcome, args.save_outputs)
    return 1 if failed(done) else 0
