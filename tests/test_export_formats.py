"""SVG, PNG, PDF, DOT and JSON export of real models: complete, sized right, not blank."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from onnxstudio.export.build import layout_for_export
from onnxstudio.export.formats import export_layout
from onnxstudio.export.options import ExportOptions
from onnxstudio.export.region import layout_bounds
from onnxstudio.layout import labels
from onnxstudio.layout.types import Layout
from onnxstudio.model import Model, load_model
from tests.conftest import shared_model
from tests.test_export_dot import parse as parse_dot

MODELS = ["zoo/mnist/mnist.onnx", "zoo/onnx_light/light_resnet50.onnx"]
SVG_NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module", params=MODELS)
def laid_out(request: pytest.FixtureRequest) -> tuple[Model, Layout]:
    model = load_model(shared_model(request.param))
    return model, layout_for_export(model, ExportOptions(expand="all"))


def _sheet_size(layout: Layout, margin: float = 24.0) -> tuple[float, float]:
    _, _, w, h = layout_bounds(layout)
    return w + 2 * margin, h + 2 * margin


def test_svg_parses_and_names_every_node(qapp, laid_out, tmp_path: Path) -> None:
    model, layout = laid_out
    out = tmp_path / "g.svg"
    result = export_layout(layout, model, out, ExportOptions())
    root = ET.parse(out).getroot()
    assert root.tag == f"{SVG_NS}svg"
    groups = {g.get("data-id"): g for g in root.iter(f"{SVG_NS}g")}
    drawn_ops = {g.get("data-op-type") for g in groups.values() if g.get("class") == "node"}
    node_boxes = [b for b in layout.boxes if b.kind == "node"]
    assert all(b.id in groups for b in node_boxes)
    assert {b.title for b in node_boxes} <= drawn_ops
    # Every operator of the model appears, but constants the layout folds into consumers.
    folded = labels.folded_constants(model.graph)
    assert {n.op_type for n in model.graph.nodes if not labels.is_folded(n, folded)
            } <= drawn_ops
    texts = {t.text for t in root.iter(f"{SVG_NS}text")}
    assert {b.title for b in node_boxes} <= texts  # text kept as text: searchable
    w, h = _sheet_size(layout)
    assert result.size == pytest.approx((w, h))
    assert float(root.get("width")) == pytest.approx(w, abs=0.01)
    from PySide6.QtSvg import QSvgRenderer

    assert QSvgRenderer(str(out)).isValid()  # a real SVG renderer accepts it too


def test_svg_written_in_runs_is_the_same_file(laid_out, tmp_path: Path, monkeypatch) -> None:
    """The SVG is joined and encoded a run of parts at a time (at once, BERT-96's held the
    GIL for ~120 ms): whatever the run, the same bytes."""
    from onnxstudio.export import svg

    model, layout = laid_out
    written = []
    for run in (3, 10**9):
        monkeypatch.setattr(svg, "PARTS_PER_WRITE", run)
        out = export_layout(layout, model, tmp_path / f"{run}.svg", ExportOptions()).path
        written.append(Path(out).read_bytes())
    assert written[0] == written[1]
    assert ET.fromstring(written[0]).tag == f"{SVG_NS}svg"


@pytest.mark.parametrize("scale", [0.5, 0.25])
def test_png_size_follows_scale_and_is_not_blank(qapp, laid_out, tmp_path: Path,
                                                 scale: float) -> None:
    model, layout = laid_out
    out = tmp_path / "g.png"
    result = export_layout(layout, model, out, ExportOptions(scale=scale))
    w, h = _sheet_size(layout)
    with Image.open(out) as image:
        assert image.size == (round(w * scale), round(h * scale))
        pixels = np.asarray(image.convert("RGB"))
    assert result.size == image.size and not result.notices
    background = pixels[0, 0]
    assert tuple(background) == (255, 255, 255)
    ink = np.any(pixels != background, axis=2)
    assert 0.02 < ink.mean() < 0.9
    # Ink reaches the drawing's extent on all four sides: nothing is cut off.
    rows, cols = np.nonzero(ink)
    shapes = [(b.x, b.y, b.width, b.height) for b in layout.boxes] + [
        (g.x, g.y, g.width, g.height) for g in layout.groups]
    left = min(x for x, _, _, _ in shapes)
    top = min(y for _, y, _, _ in shapes)
    right = max(x + w for x, _, w, _ in shapes)
    bottom = max(y + h for _, y, _, h in shapes)
    m = 24  # the export's margin, in layout units
    assert rows.min() <= (m + top) * scale + 2
    assert rows.max() >= (m + bottom) * scale - 3
    assert cols.min() <= (m + left) * scale + 2
    assert cols.max() >= (m + right) * scale - 3


def _media_boxes(data: bytes) -> list[tuple[float, ...]]:
    found = re.findall(rb"/MediaBox\s*\[\s*([-\d.\s]+)\]", data)
    return [tuple(float(v) for v in box.split()) for box in found]


def test_pdf_has_one_page_of_the_diagram_aspect(qapp, laid_out, tmp_path: Path) -> None:
    model, layout = laid_out
    out = tmp_path / "g.pdf"
    result = export_layout(layout, model, out, ExportOptions())
    data = out.read_bytes()
    assert data.startswith(b"%PDF")
    boxes = _media_boxes(data)
    assert len(boxes) == 1 and result.pages == 1
    x0, y0, x1, y1 = boxes[0]
    w, h = _sheet_size(layout)
    # One layout unit is 0.75 pt, shrunk to the 200 in page limit of viewers if need be;
    # pages are whole points, so each side is within 1 pt.
    unit = 0.75 * min(1.0, 14_400 / (0.75 * max(w, h)))
    assert abs((x1 - x0) - w * unit) < 1 and abs((y1 - y0) - h * unit) < 1
    assert bool(result.notices) == (unit < 0.75)
    assert (x1 - x0) / (y1 - y0) == pytest.approx(w / h, rel=0.01)
    assert result.size == pytest.approx((x1 - x0, y1 - y0))


def test_pdf_is_written_out_with_the_gil_released(qapp, laid_out, tmp_path: Path,
                                                  monkeypatch) -> None:
    """QPainter.end writes the whole PDF holding the GIL (BERT-96's froze the window for
    ~1 s); on Linux it is called through ctypes, which releases the GIL, and the file is
    complete."""
    from onnxstudio.export import pdf

    native = pdf._native_end()
    if native is None:
        pytest.skip("QPainter::end is not found in this Qt build")
    addresses: list[int] = []

    def end(address: int) -> bool:
        addresses.append(address)
        return native(address)

    monkeypatch.setattr(pdf, "_native_end", lambda: end)
    model, layout = laid_out
    out = tmp_path / "g.pdf"
    result = export_layout(layout, model, out, ExportOptions())
    data = out.read_bytes()
    assert len(addresses) == 1 and result.pages == 1
    assert data.startswith(b"%PDF") and data.rstrip().endswith(b"%%EOF")
    assert len(_media_boxes(data)) == 1


def test_pdf_paginates_onto_paper(qapp, laid_out, tmp_path: Path) -> None:
    model, layout = laid_out
    out = tmp_path / "g.pdf"
    result = export_layout(layout, model, out, ExportOptions(paginate="A4", title_block=True))
    boxes = _media_boxes(out.read_bytes())
    assert len(boxes) == result.pages >= 1
    for x0, y0, x1, y1 in boxes:  # A4 is 595 × 842 pt, either way round
        assert sorted((round(x1 - x0), round(y1 - y0))) == [595, 842]


def test_dot_lists_every_node_and_edge(laid_out, tmp_path: Path) -> None:
    model, layout = laid_out
    out = tmp_path / "g.dot"
    export_layout(layout, model, out, ExportOptions())
    nodes, edges = parse_dot(out.read_text())
    assert len(nodes) == len(layout.boxes)
    assert len(edges) == len({(e.source, e.target) for e in layout.edges})
    text = out.read_text()
    assert all(f'"{b.title}' in text for b in layout.boxes if b.kind == "node")


def test_json_is_the_layout(laid_out, tmp_path: Path) -> None:
    model, layout = laid_out
    out = tmp_path / "g.json"
    export_layout(layout, model, out, ExportOptions())
    data = json.loads(out.read_text())
    assert len(data["nodes"]) == len(layout.boxes) and len(data["edges"]) == len(layout.edges)


def test_title_block_and_dark_theme(qapp, laid_out, tmp_path: Path) -> None:
    model, layout = laid_out
    out = tmp_path / "g.svg"
    export_layout(layout, model, out, ExportOptions(title_block=True, theme="dark"))
    text = out.read_text()
    assert model.path.name in text and "Opsets" in text and "#1e1f22" in text
    png = tmp_path / "g.png"
    result = export_layout(layout, model, png, ExportOptions(scale=0.5, title_block=True,
                                                             theme="dark"))
    _, h = _sheet_size(layout)
    with Image.open(png) as image:
        assert image.getpixel((0, 0)) == (0x1E, 0x1F, 0x22)
        assert image.size[1] > round(h * 0.5)  # the title band adds height
        assert result.size == image.size


def test_pdf_pages_leave_out_the_blank_ones(qapp, tmp_path: Path) -> None:
    """One far-off box widens the page grid to three columns; only its page is added,
    not two columns of blank pages (27 of BERT-12's 56 A4 pages were blank)."""
    from onnxstudio.export.pdf import plan_pages
    from onnxstudio.export.sheet import plan_sheet
    from onnxstudio.layout.types import Box
    from tests.export_support import grid_layout

    far = grid_layout(1, 200)
    far.boxes.append(Box("far", "node", 3000, 20, 100, 36, "Add"))
    far.width = 3120
    options = ExportOptions(paginate="A4")
    plan = plan_pages(far, plan_sheet(far, None, options), options, "A4")
    rows = {y for _x, y, _w, _h in plan.windows}
    columns = {x for x, _y, _w, _h in plan.windows}
    assert len(columns) == 2  # the blank middle column is left out
    assert len(plan.windows) == len(rows) + 1  # the column, and the far box's page
    spread = export_layout(far, None, tmp_path / "b.pdf", options)
    assert spread.pages == len(plan.windows)
    assert len(_media_boxes((tmp_path / "b.pdf").read_bytes())) == spread.pages
