"""Overlays: node values folded into drawn boxes (groups total their members), colours,
badges and tooltips, on a real profile of the bundled sample model."""

from __future__ import annotations

from pathlib import Path

import pytest

from onnxstudio.layout.build import build_layout
from onnxstudio.layout.scopes import graph_scope_tree
from onnxstudio.layout.state import ExpandState, default_state
from onnxstudio.model import Model, load_model
from onnxstudio.model.index import node_by_id
from onnxstudio.render.overlay import (
    AGREE,
    HEAT,
    NO_VALUE,
    OverlayData,
    box_values,
    build_overlay,
    profile_overlay,
    ramp,
    text_on,
)
from onnxstudio.render.scene_painter import GraphPainter, PaintState
from onnxstudio.render.theme import LIGHT
from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.runner.profile import ProfileResult, profile
from tests.render_support import RecordingSurface

SAMPLE = Path(__file__).resolve().parent.parent / "resources" / "sample" / "digits_cnn.onnx"


@pytest.fixture(scope="module")
def sample() -> Model:
    return load_model(SAMPLE)


@pytest.fixture(scope="module")
def timed() -> ProfileResult:
    return profile(RunRequest(SAMPLE, random=True), runs=3)


def test_ramp_ends_and_contrast() -> None:
    assert ramp(HEAT, 0.0) == HEAT[0] and ramp(HEAT, 1.0) == HEAT[-1]
    assert ramp(HEAT, 2.0) == HEAT[-1] and ramp(HEAT, float("nan")) == HEAT[-1]
    assert text_on(HEAT[0]) == "#1a1a1a"  # pale yellow: dark text
    assert text_on(HEAT[-1]) == "#ffffff"  # dark red: white text


def test_expanded_boxes_keep_their_own_times(sample: Model, timed: ProfileResult) -> None:
    layout = build_layout(sample, default_state(sample.graph))
    data = profile_overlay(timed)
    per_box = box_values(layout, sample.graph, data.values, lambda a, b: a + b)
    drawn = {b.id for b in layout.boxes}
    for node in timed.nodes:
        if node.id in drawn:
            assert per_box[node.id] == pytest.approx(node.time_ms)
    overlay = build_overlay(layout, sample.graph, data)
    slowest = next(n for n in timed.nodes if n.id in drawn)
    assert overlay.fill(slowest.id) == HEAT[-1]  # the slowest box is the hottest
    assert "ms" in overlay.badges[slowest.id] or "µs" in overlay.badges[slowest.id]
    assert "per run" in overlay.tips[slowest.id]
    assert overlay.fill("in:" + sample.graph.inputs[0]) == NO_VALUE


def test_collapsed_groups_show_the_total_of_their_nodes(sample: Model,
                                                        timed: ProfileResult) -> None:
    layout = build_layout(sample, ExpandState())  # everything collapsed
    groups = [b for b in layout.boxes if b.kind == "group"]
    assert groups, "the sample model has features/classifier scopes"
    data = profile_overlay(timed)
    per_box = box_values(layout, sample.graph, data.values, lambda a, b: a + b)
    # Nothing is lost or counted twice: the boxes add up to every boxed node's time.
    boxed = graph_scope_tree(sample.graph).group_of
    assert sum(per_box.values()) == pytest.approx(
        sum(n.time_ms for n in timed.nodes if n.id in boxed))
    features = next(g for g in groups if "features" in g.title)
    inside = [n for n in timed.nodes if node_by_id(sample, n.id) is not None
              and "features" in (node_by_id(sample, n.id).name or "")]  # type: ignore[union-attr]
    assert inside
    assert per_box[features.id] == pytest.approx(sum(n.time_ms for n in inside))


def test_painter_uses_overlay_fill_and_draws_badges(sample: Model,
                                                    timed: ProfileResult) -> None:
    layout = build_layout(sample, default_state(sample.graph))
    overlay = build_overlay(layout, sample.graph, profile_overlay(timed))
    surface = RecordingSurface()
    GraphPainter(layout, LIGHT).paint(surface, None, 1.0, PaintState(overlay=overlay))
    fills = {args[5] for call, args in surface.calls if call == "rounded_rect"}
    assert set(overlay.fills.values()) <= fills
    assert set(overlay.badges.values()) <= set(surface.texts())
    plain = RecordingSurface()
    GraphPainter(layout, LIGHT).paint(plain, None, 1.0, PaintState())
    assert not set(overlay.badges.values()) & set(plain.texts())


def test_divergence_colours_follow_the_tolerance(sample: Model) -> None:
    layout = build_layout(sample, default_state(sample.graph))
    ops = [b.id for b in layout.boxes if b.kind == "node"]
    values = {ops[0]: 0.0, ops[1]: 1e-6, ops[2]: 3.0, ops[3]: float("inf")}
    overlay = build_overlay(layout, sample.graph, OverlayData("divergence", "A vs B", values))
    assert overlay.fill(ops[0]) == AGREE[0]
    assert overlay.fill(ops[2]) not in AGREE[:3]  # past the tolerance: orange to red
    assert overlay.fill(ops[3]) == AGREE[-1]
    assert overlay.badges[ops[2]] == "✗" and overlay.badges[ops[1]] == "✓"


def test_exported_png_keeps_the_heatmap(qapp, sample: Model, timed: ProfileResult,
                                        tmp_path: Path) -> None:
    from PySide6.QtGui import QImage

    from onnxstudio.export.formats import export_layout
    from onnxstudio.export.options import ExportOptions

    layout = build_layout(sample, default_state(sample.graph))
    data = profile_overlay(timed)
    slowest = next(n for n in timed.nodes if layout.box(n.id) is not None)
    box = layout.box(slowest.id)
    assert box is not None
    margin = 24.0
    pixel = (int(box.x + margin + 6), int(box.y + margin + 8))  # header band, left of title
    for overlay, expected in ((data, HEAT[-1]), (None, LIGHT.node(box.category).fill)):
        out = tmp_path / f"heat-{overlay is not None}.png"
        export_layout(layout, sample, out, ExportOptions(scale=1.0, margin=margin,
                                                         overlay=overlay))
        image = QImage(str(out))
        assert image.pixelColor(*pixel).name() == expected


def test_one_outlier_does_not_turn_every_other_node_one_colour() -> None:
    """One 1,000 ms node among 99 of 0.5-2 ms: the heatmap colours by rank (the square
    root of a share of the slowest gave all 99 the palest tint)."""
    from onnxstudio.render.overlay import HeatScale

    times = [0.5 + i * 0.015 for i in range(99)] + [1000.0]
    scale = HeatScale.of(times)
    assert scale.ranked
    colours = {ramp(HEAT, scale.at(t)) for t in times[:99]}
    assert len(colours) >= 8
    assert scale.at(1000.0) == 1.0 and scale.legend()[-1][1].startswith("1")
    even = HeatScale.of([1.0 + i for i in range(100)])  # no outlier: shares, as before
    assert not even.ranked and even.at(100.0) == 1.0
