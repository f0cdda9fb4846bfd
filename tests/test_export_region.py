"""Region choice: whole graph, the visible area, or the selection, in every format."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PIL import Image

from onnxstudio.errors import ExportError
from onnxstudio.export.formats import export_layout
from onnxstudio.export.options import ExportOptions
from onnxstudio.export.region import region_rect
from tests.export_support import chain_layout, grid_layout

SVG = "{http://www.w3.org/2000/svg}"


def test_visible_region_sizes_the_png(qapp, tmp_path: Path) -> None:
    layout = grid_layout(10, 10)
    options = ExportOptions(scale=2.0, region="visible", visible_rect=(100, 50, 300, 200))
    out = tmp_path / "v.png"
    export_layout(layout, None, out, options)
    with Image.open(out) as image:
        assert image.size == ((300 + 48) * 2, (200 + 48) * 2)


def test_selection_svg_shows_the_selected_boxes(qapp, tmp_path: Path) -> None:
    layout = grid_layout(10, 10)
    options = ExportOptions(region="selection", selection=["n3_3", "n4_4"])
    x, y, w, h = region_rect(layout, options)
    b3, b4 = layout.box("n3_3"), layout.box("n4_4")
    assert (x, y) == (b3.x - 16, b3.y - 16)
    assert (x + w, y + h) == (b4.x + b4.width + 16, b4.y + b4.height + 16)
    out = tmp_path / "s.svg"
    export_layout(layout, None, out, options)
    root = ET.parse(out).getroot()
    assert float(root.get("width")) == pytest.approx(w + 48)
    assert root.find(f"{SVG}clipPath") is not None
    ids = {g.get("data-id") for g in root.iter(f"{SVG}g")}
    assert {"n3_3", "n4_4"} <= ids and "n0_0" not in ids and "n9_9" not in ids


def test_selection_pdf_and_json(qapp, tmp_path: Path) -> None:
    import json

    layout = chain_layout(5)
    options = ExportOptions(region="selection", selection=["n1", "n2"])
    export_layout(layout, None, tmp_path / "s.pdf", options)
    assert (tmp_path / "s.pdf").read_bytes().startswith(b"%PDF")
    export_layout(layout, None, tmp_path / "s.json", options)
    data = json.loads((tmp_path / "s.json").read_text())
    assert {n["id"] for n in data["nodes"]} == {"n1", "n2"} and len(data["edges"]) == 1


def test_region_errors() -> None:
    layout = chain_layout()
    with pytest.raises(ExportError, match="nothing is selected"):
        ExportOptions(region="selection").validate()
    with pytest.raises(ExportError, match="not part of"):
        region_rect(layout, ExportOptions(region="selection", selection=["nope"]))
    with pytest.raises(ExportError, match="no part of the graph"):
        region_rect(layout, ExportOptions(region="visible", visible_rect=(5000, 5000, 10, 10)))
