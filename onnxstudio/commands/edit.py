"""`onnxstudio edit MODEL OUT --script EDITS.json`: apply edits headless, check, save anew."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from onnxstudio.errors import EditError
from onnxstudio.model.formatting import plural


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]
               ) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "edit",
        help="apply edits (a script or shortcuts) and write the result to a new file",
        description="Apply the edits of --script, then the shortcut options in the order "
        "listed here, to a copy of MODEL; run onnx's checker and shape inference; write "
        "OUT (never MODEL or its external data). Errors from the checks refuse the save.",
    )
    parser.add_argument("model", help="the .onnx model to edit")
    parser.add_argument("out", help="the .onnx file to write")
    parser.add_argument("--script", metavar="EDITS.json", help="a script of edits (JSON)")
    parser.add_argument("--set-dim", action="append", default=[], metavar="NAME:AXIS=VALUE",
                        help="set one dimension of an input (or output) to a size or a "
                        "symbol (input:0=1, input:0=batch)")
    parser.add_argument("--rename-input", action="append", default=[], metavar="OLD=NEW")
    parser.add_argument("--add-output", action="append", default=[], metavar="TENSOR",
                        help="expose an intermediate tensor as a model output")
    parser.add_argument("--remove-node", action="append", default=[], metavar="NODE",
                        help="bypass a node with one data input and one output")
    parser.add_argument("--set-meta", action="append", default=[], metavar="KEY=VALUE",
                        help="set a metadata entry (KEY= removes it)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def run(args: argparse.Namespace) -> int:
    from onnxstudio.model.edit import EditSession, load_script, shortcut_edits

    model_path, out = Path(args.model), Path(args.out)
    if out.exists() and model_path.exists() and out.resolve() == model_path.resolve():
        raise EditError(f"{out.name}: refusing to write over the model file itself")
    edits = load_script(args.script) if args.script else []
    session = EditSession.open(model_path)
    edits += shortcut_edits(set_dim=args.set_dim, rename_input=args.rename_input,
                            add_output=args.add_output, remove_node=args.remove_node,
                            set_meta=args.set_meta,
                            outputs=[o.name for o in session.original.graph.output])
    if not edits:
        raise EditError("no edits given: use --script and/or a shortcut such as --set-dim")
    session.apply_all(edits)
    report = session.check()
    if report.errors:
        raise EditError(f"not saved: {report.errors[0]}")
    saved = session.save(out)
    if args.json:
        json.dump({"model": str(model_path), "out": str(saved.path),
                   "data": str(saved.data_path) if saved.data_path else None,
                   "edits": session.edits, **report.as_json()}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    for step in session.steps:
        print(f"  {step.label}")
    for warning in report.warnings:
        print(f"  warning: {warning}")
    data = f" + {saved.data_path.name}" if saved.data_path else ""
    print(f"wrote {saved.path}{data} ({plural(len(session.edits), 'edit')}, checks passed)")
    return 0
