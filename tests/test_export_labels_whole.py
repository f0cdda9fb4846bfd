"""Exported SVGs of real models: text that has room is whole, inputs carry schema names.

The check a reader makes: every ``<text>`` with an ellipsis in it must stand for a
label of more than ``MAX_LABEL_CHARS`` characters (or be a line the layout itself
shortened), and no folded input reads ``inN`` where the operator's schema names it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from onnxstudio.export.build import layout_for_export
from onnxstudio.export.formats import export_layout
from onnxstudio.export.options import ExportOptions
from onnxstudio.layout import sizing
from onnxstudio.layout.types import Layout
from onnxstudio.model import load_model
from onnxstudio.model.graph import Model
from onnxstudio.model.schemas import input_names
from tests.conftest import shared_model

MODELS = [
    "zoo/onnx_light/light_squeezenet.onnx",
    "zoo/onnx_light/light_inception_v2.onnx",
    "zoo/style_transfer/fns-candy.onnx",
    "ortdata/examples/Ultraface.version-RFB-320.onnx",
    "ortdata/examples/pytorch_superresolution_with_pre_post_processing_op18.onnx",
    "ortdata/onnxruntime/test/testdata/transformers/tiny_gpt2_beamsearch_fp16.onnx",
    "ortdata/onnxruntime/test/testdata/bert_toy_optimized.onnx",
    "ortdata/onnxruntime/test/testdata/transform/fusion/gpt2_past_mask_one_layer.onnx",
    "node/node/test_qlinearconv/model.onnx",
    "packaged/silero_vad/silero_vad_16k_op15.onnx",
]

_TEXT = re.compile(r"<text[^>]*>([^<]*)</text>")
_IN_N = re.compile(r"^in(\d+) ")


def _unescape(text: str) -> str:
    return (text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
            .replace("&#39;", "'").replace("&amp;", "&"))


def _sources(layout: Layout) -> set[str]:
    out: set[str] = set()
    for b in layout.boxes:
        out.update([b.title, b.subtitle, *b.details])
    for g in layout.groups:
        out.add(g.label)
    out.update(e.label for e in layout.edges)
    return out


def _elided_only_when_long(drawn: str, sources: set[str]) -> bool:
    if drawn in sources:  # the layout's own text (a chunk title "a … b", "… 3 more")
        return True
    head, _, tail = drawn.partition("…")
    return any(len(s) > sizing.MAX_LABEL_CHARS and s.startswith(head) and s.endswith(tail)
               for s in sources)


def _export_svg(model: Model, expand: str, out: Path) -> tuple[Layout, list[str]]:
    options = ExportOptions(format="svg", expand=expand)
    layout = layout_for_export(model, options)
    export_layout(layout, model, out, options)
    return layout, [_unescape(t) for t in _TEXT.findall(out.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("expand", ["current", "collapsed"])
@pytest.mark.parametrize("relative", MODELS)
def test_svg_labels_are_whole_and_inputs_named(relative: str, expand: str,
                                               tmp_path: Path) -> None:
    model = load_model(shared_model(relative))
    layout, texts = _export_svg(model, expand, tmp_path / "graph.svg")
    assert texts
    sources = _sources(layout)
    cut = [t for t in texts if "…" in t and not _elided_only_when_long(t, sources)]
    assert not cut, f"{relative}: labels elided though short: {cut[:5]}"
    nodes = {n.id: n for n in model.graph.nodes}
    for b in layout.boxes:
        node = nodes.get(b.id)
        if node is None:
            continue
        names, variadic = input_names(node.op_type, node.domain, node.schema.since_version)
        for line in b.details:
            m = _IN_N.match(line)
            assert m is None or (not variadic and int(m[1]) >= len(names)), (
                f"{relative}: {node.op_type} shows {line!r} though its schema names it")
