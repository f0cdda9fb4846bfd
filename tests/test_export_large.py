"""Graphs too large for one image still export whole: reduced scale or tiles, never cropped."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from onnxstudio.export import raster
from onnxstudio.export.build import layout_for_export
from onnxstudio.export.formats import export_layout
from onnxstudio.export.options import ExportCancelled, ExportOptions
from onnxstudio.export.sheet import plan_sheet
from onnxstudio.layout.types import Layout
from onnxstudio.model import load_model
from tests.conftest import ladder_model
from tests.export_support import grid_layout


def _ink(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        pixels = np.asarray(image.convert("RGB"))
    return np.any(pixels != pixels[0, 0], axis=2)


def _assert_whole(path: Path, layout: Layout, options: ExportOptions) -> None:
    """Same aspect as the sheet, and ink near all four edges of the diagram."""
    sheet = plan_sheet(layout, None, options)
    ink = _ink(path)
    h, w = ink.shape
    assert max(w, h) <= raster.MAX_SIDE
    assert abs(w - h * sheet.width / sheet.height) <= 1.5  # the layout's aspect, not cropped
    s = max(w, h) / max(sheet.width, sheet.height)  # the long side: least rounding
    rects = [(b.x, b.y, b.x + b.width, b.y + b.height) for b in [*layout.boxes, *layout.groups]]
    rects += [(x, y, x, y) for e in layout.edges for x, y in e.points]  # routes may go round
    x0 = (min(r[0] for r in rects) + sheet.dx) * s
    y0 = (min(r[1] for r in rects) + sheet.dy) * s
    x1 = (max(r[2] for r in rects) + sheet.dx) * s
    y1 = (max(r[3] for r in rects) + sheet.dy) * s
    rows, cols = np.nonzero(ink)
    assert abs(rows.min() - y0) <= 3 and abs(rows.max() - y1) <= 3
    assert abs(cols.min() - x0) <= 3 and abs(cols.max() - x1) <= 3


def test_too_tall_png_is_scaled_down_whole_with_notice(qapp, tmp_path: Path) -> None:
    layout = grid_layout(30, 200)  # 6,000 boxes, about 4,200 × 15,200 units
    options = ExportOptions(scale=4.0)
    out = tmp_path / "big.png"
    result = export_layout(layout, None, out, options)
    assert result.notices and "exported whole" in result.notices[0]
    assert max(result.size) == raster.MAX_SIDE
    _assert_whole(out, layout, options)
    # The last row of boxes is there: ink in the bottom band, across every column.
    ink = _ink(out)
    bottom = ink[-int(ink.shape[0] * 0.004) - 3:, :]
    assert bottom.any()


def test_tiles_stitch_to_the_single_image(qapp, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    layout = grid_layout(6, 12)
    whole = tmp_path / "whole.png"
    export_layout(layout, None, whole, ExportOptions(scale=1.0))
    monkeypatch.setattr(raster, "MAX_SIDE", 300)
    tiled = tmp_path / "t.png"
    result = export_layout(layout, None, tiled, ExportOptions(scale=1.0, tile=True))
    assert len(result.files) > 4 and all(p.exists() for p in result.files)
    assert not tiled.exists() and result.notices
    with Image.open(whole) as image:
        expected = np.asarray(image.convert("RGB")).astype(int)
    stitched = np.zeros_like(expected)
    for path in result.files:
        r, c = (int(v) for v in path.stem.split("-r")[1].split("c"))
        with Image.open(path) as tile:
            part = np.asarray(tile.convert("RGB"))
            assert max(part.shape[:2]) <= 300
        y, x = (r - 1) * 300, (c - 1) * 300
        stitched[y:y + part.shape[0], x:x + part.shape[1]] = part
    assert np.abs(stitched - expected).mean() < 0.5


def test_png_cancel_leaves_nothing(qapp, tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []
    out = tmp_path / "c.png"
    with pytest.raises(ExportCancelled):
        export_layout(grid_layout(30, 200), None, out, ExportOptions(scale=1.0),
                      progress=lambda d, t: calls.append((d, t)), cancel=lambda: len(calls) > 2)
    assert list(tmp_path.iterdir()) == []


def test_progress_reaches_total(qapp, tmp_path: Path) -> None:
    for fmt in ("png", "svg", "pdf"):
        calls: list[tuple[int, int]] = []
        export_layout(grid_layout(20, 60), None, tmp_path / f"p.{fmt}", ExportOptions(),
                      progress=lambda d, t, calls=calls: calls.append((d, t)))
        assert calls and calls[-1][0] == calls[-1][1]
        assert [d for d, _ in calls] == sorted(d for d, _ in calls)


@pytest.mark.slow
def test_bert48_expanded_png_is_whole(qapp, tmp_path: Path) -> None:
    model = load_model(ladder_model("bert48.onnx"))
    options = ExportOptions(expand="all", scale=2.0)
    layout = layout_for_export(model, options)
    assert sum(b.kind == "node" for b in layout.boxes) > 2500
    out = tmp_path / "bert48.png"
    result = export_layout(layout, model, out, options)
    assert result.notices  # 180k units tall cannot fit at scale 2
    _assert_whole(out, layout, options)
