"""`onnxstudio export MODEL OUT`: write the graph diagram (SVG, PNG, PDF, DOT, JSON) headless."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from onnxstudio.errors import ExportError, OnnxStudioError
from onnxstudio.export.options import FORMATS, PAPER_SIZES, ExportOptions


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]
               ) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "export",
        help="write the graph diagram as SVG, PNG, PDF, DOT or JSON",
        description="Lay out MODEL's graph and write it to OUT; the format follows OUT's "
        "extension unless --format is given. Works without a display.",
    )
    parser.add_argument("model", help="the .onnx model to draw")
    parser.add_argument("out", help="the file to write (.svg, .png, .pdf, .dot, .json)")
    parser.add_argument("--format", choices=FORMATS, help="override the extension")
    parser.add_argument("--scale", type=float, default=2.0,
                        help="PNG pixels per layout unit (default 2)")
    parser.add_argument("--direction", choices=("TB", "LR"), default=None,
                        help="top-to-bottom or left-to-right (default TB)")
    expand = parser.add_mutually_exclusive_group()
    expand.add_argument("--expand-all", action="store_true", help="open every group")
    expand.add_argument("--collapse-all", action="store_true", help="close every group")
    parser.add_argument("--theme", choices=("light", "dark"), default="light")
    parser.add_argument("--title", action="store_true",
                        help="add a title block: model file, producer, opsets, date")
    parser.add_argument("--paper", choices=PAPER_SIZES, default=None,
                        help="PDF: paginate onto this paper size instead of one large page")
    parser.add_argument("--tile", action="store_true",
                        help="PNG too large for one image: write tiles OUT-rRcC.png at the "
                        "requested scale instead of reducing the scale")
    return parser


def _options(args: argparse.Namespace) -> ExportOptions:
    return ExportOptions(
        format=args.format,
        scale=args.scale,
        direction=args.direction,
        expand="all" if args.expand_all else "collapsed" if args.collapse_all else "current",
        theme=args.theme,
        title_block=args.title,
        paginate=args.paper,
        tile=args.tile,
    )


def _export(args: argparse.Namespace) -> int:
    from onnxstudio.export.atomic import check_destination
    from onnxstudio.export.formats import export_layout, format_for_path, needs_qt

    model_path, out = Path(args.model), Path(args.out)
    options = _options(args)
    options.validate()
    fmt = format_for_path(out, options.format)
    options.format = fmt
    check_destination(out, [model_path])  # before the (possibly slow) load
    inferring = None
    if needs_qt(fmt):
        from onnxstudio.export.qtapp import ensure_gui_app

        ensure_gui_app()  # sets the offscreen platform first when there is no display
    from onnxstudio.concurrency.fork import may_fork

    if may_fork():  # not beside Qt, nor without fork: then all in this process
        # Shapes are inferred in a fork started once onnx's core is loaded: it reads the
        # model while this process imports the rest (never the whole onnx package: see
        # onnx_core).
        import onnxstudio.model.onnx_core  # noqa: F401
        from onnxstudio.model.infer_child import ForkedInference

        inferring = ForkedInference(model_path)
    from onnxstudio.export.build import layout_for_export
    from onnxstudio.layout.cache import stores_later
    from onnxstudio.model import load_model

    with stores_later() as stores:  # what the layout cache keeps: written after the file
        try:
            model = load_model(model_path, inferring=inferring)
        finally:
            if inferring is not None:
                inferring.cancel()  # collected by now, unless the load failed
        layout = layout_for_export(model, options)
    result = export_layout(layout, model, out, options)
    for keep in stores:
        keep()
    for notice in result.notices:
        print(f"onnxstudio: note: {notice}", file=sys.stderr)
    what = f", {result.size[0]:.0f}×{result.size[1]:.0f}" if any(result.size) else ""
    pages = f", {result.pages} pages" if result.pages > 1 else ""
    if len(result.files) > 1:
        print(f"wrote {len(result.files)} tiles {result.files[0]} … {result.files[-1].name} "
              f"({fmt}{what} in all)")
    else:
        print(f"wrote {result.path} ({fmt}{what}{pages})")
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        return _export(args)
    except OnnxStudioError:
        raise
    except MemoryError as exc:
        raise ExportError(f"{args.out}: out of memory while exporting; try a smaller "
                          "--scale or --collapse-all") from exc
