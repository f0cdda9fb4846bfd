"""`onnxstudio merge`: one model from a split's stages, or two models joined output to input."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from onnxstudio.errors import CutError


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "merge", help="rebuild a model from split stages, or join two models",
        description="`merge STAGES_DIR OUT.onnx` rebuilds one model from the manifest.json "
        "and stages `split` wrote (it computes what the chained stages compute). "
        "`merge A.onnx B.onnx OUT.onnx --connect A_OUT=B_IN ...` feeds B's inputs from A's "
        "outputs and writes one model running A then B.")
    parser.add_argument("sources", nargs="+", metavar="SOURCE",
                        help="a folder of stages, or two models A.onnx B.onnx")
    parser.add_argument("out", help="the new model file")
    parser.add_argument("--connect", action="append", default=[], metavar="A_OUT=B_IN",
                        help="feed B's input B_IN from A's output A_OUT; repeat for more")
    return parser


def _protected(sources: list[Path]) -> list[Path]:
    found: list[Path] = []
    for source in sources:
        if source.is_dir():
            found += [p for p in source.iterdir() if p.suffix in (".onnx", ".data")]
        else:
            found += [source, source.with_name(f"{source.name}.data")]
    return found


def run(args: argparse.Namespace) -> int:
    from onnxstudio.model.formatting import plural
    from onnxstudio.model.merge import merge_stages, merge_two, write_merged

    sources = [Path(s).expanduser() for s in args.sources]
    note = None
    if len(sources) == 1:
        if not sources[0].is_dir():
            raise CutError(f"{sources[0]}: give a folder of stages, or two models to join")
        if args.connect:
            raise CutError("--connect joins two models; a folder of stages needs none")
        merged = merge_stages(sources[0])
    elif len(sources) == 2:
        if not args.connect:
            raise CutError("joining two models needs --connect A_OUT=B_IN")
        merged, note = merge_two(sources[0], sources[1], args.connect)
    else:
        raise CutError("give a folder of stages, or two models A.onnx B.onnx")
    data = write_merged(merged, args.out, _protected(sources))
    g = merged.proto.graph
    print(f"wrote {args.out}: {plural(len(g.node), 'node')}, "
          f"{plural(len(g.input), 'input')}, {plural(len(g.output), 'output')}"
          + (f", weights in {data.name}" if data is not None else ""))
    if note:
        print(note)
    return 0
