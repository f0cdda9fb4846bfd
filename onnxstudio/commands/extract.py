"""`onnxstudio extract MODEL OUT --inputs ... --outputs ...`: cut a sub-model, headless."""

from __future__ import annotations

import argparse
from pathlib import Path

from onnxstudio.errors import CutError, OnnxStudioError


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]
               ) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "extract",
        help="cut the sub-model between tensors into a new file",
        description="Write the part of MODEL between the --inputs and --outputs tensors to "
        "OUT (a new file; never MODEL itself). Without --inputs the cut starts at the "
        "model inputs it needs; without --outputs it ends at the model outputs.",
    )
    parser.add_argument("model", help="the .onnx model to cut")
    parser.add_argument("out", help="the .onnx file to write")
    parser.add_argument("--inputs", help="comma-separated tensor names that become inputs")
    parser.add_argument("--outputs", help="comma-separated tensor names that become outputs")
    data = parser.add_mutually_exclusive_group()
    data.add_argument("--external-data", action="store_true",
                      help="always keep the weights in OUT.data beside OUT")
    data.add_argument("--inline-data", action="store_true",
                      help="always keep the weights inside OUT (up to protobuf's 2 GB)")
    parser.add_argument("--list", action="store_true",
                        help="print what the sub-model contains before writing it")
    return parser


def _names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise CutError("an empty list of tensor names")
    return names


def run(args: argparse.Namespace) -> int:
    from onnxstudio.model import load_model
    from onnxstudio.model.cut import cut_from_tensors, write_cut

    if args.inputs is None and args.outputs is None:
        raise CutError("say where to cut: --inputs and/or --outputs")
    model_path, out = Path(args.model), Path(args.out)
    if out.exists() and model_path.exists() and out.resolve() == model_path.resolve():
        raise CutError(f"{out.name}: refusing to write over the model file itself")
    model = load_model(model_path)
    cut = cut_from_tensors(model, _names(args.inputs), _names(args.outputs))
    if args.list:
        for kind, tensors in (("input", cut.inputs), ("output", cut.outputs)):
            for tensor in tensors:
                print(f"{kind:6}  {tensor.describe()}")
    external = True if args.external_data else False if args.inline_data else None
    try:
        written = write_cut(model, cut, out, external=external)
    except OnnxStudioError:
        raise
    except Exception as exc:  # one line for the user; the traceback behind --debug
        if getattr(args, "debug", False):
            raise
        raise CutError(f"{out}: extraction failed ({type(exc).__name__}: {exc})") from exc
    data = f" + {written.data_path.name}" if written.data_path else ""
    print(f"wrote {written.path}{data} ({cut.summary()})")
    return 0
