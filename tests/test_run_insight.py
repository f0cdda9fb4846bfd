"""Issue 8 through the real window: profile heatmap on the canvas, a clicked edge's tensor,
and compare's divergence colours with the jump to the first diverging node."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper
from PySide6.QtCore import QPoint, Qt

from onnxstudio.layout.types import Layout
from onnxstudio.model.index import node_by_id
from onnxstudio.render.overlay import HEAT
from onnxstudio.runner.compare import parse_config
from onnxstudio.runner.feeds import request_feeds
from onnxstudio.runner.session import Session, SessionConfig
from onnxstudio.ui.canvas.model_tab import ModelTab
from onnxstudio.ui.insight.compare_options import CompareOptions
from onnxstudio.ui.insight.profile_panel import ProfileOptions
from onnxstudio.ui.main_window import MainWindow, sample_model_path
from tests.conftest import REPO, shared_model, shown_window

DIGIT = REPO / "resources" / "sample" / "digit_7.png"


@pytest.fixture
def window(qtbot) -> MainWindow:
    return shown_window(qtbot, 1400, 900)


def _open(window: MainWindow, qtbot, path: Path) -> ModelTab:
    tab = window.open_paths([str(path)])[0]
    qtbot.waitUntil(lambda: not tab.busy and tab.layout_data is not None, timeout=60000)
    return tab


def _run(window: MainWindow, qtbot, image: Path) -> None:
    run = window.run_panel
    assert run.open_images([image])  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: run.has_run() and not run.controller.busy,  # type: ignore[attr-defined]
                    timeout=60000)


def _relaid(qtbot, tab: ModelTab, before: Layout) -> None:
    qtbot.waitUntil(lambda: tab.layout_data is not before and not tab.busy, timeout=60000)


def _edge_point(tab: ModelTab, value: str) -> QPoint:
    """A viewport point on the drawn route of ``value``'s edge, clear of every box."""
    layout, view = tab.layout_data, tab.view
    assert layout is not None
    index = view.index()
    assert index is not None
    for i, e in enumerate(layout.edges):
        if e.value != value or len(e.points) < 2:
            continue
        for k in range(len(e.points) - 1):
            (x0, y0), (x1, y1) = e.points[k], e.points[k + 1]
            x, y = (x0 + x1) / 2, (y0 + y1) / 2
            if index.box_at(x, y) is None and index.edge_near(x, y, 3.0) == i:
                view.centerOn(x, y)
                return view.mapFromScene(x, y)
    raise AssertionError(f"no clickable point on {value}")


def test_profile_paints_a_heatmap_that_follows_collapsing(window: MainWindow, qtbot) -> None:
    tab = _open(window, qtbot, sample_model_path())
    _run(window, qtbot, DIGIT)
    insight = window.insight
    insight.start_profile(ProfileOptions("disable", 3, 1))
    qtbot.waitUntil(lambda: insight.profile_panel.result() is not None
                    and tab.view.overlay() is not None, timeout=60000)
    result = insight.profile_panel.result()
    assert result is not None and result.source == DIGIT.name  # the input the user ran
    overlay = tab.view.overlay()
    assert overlay is not None and overlay.data.kind == "profile"
    assert window.docks["profile"].isVisible()
    assert tab.view.legend.isVisible() and tab.view.legend.title.text() == "Time per node"
    drawn = {b.id for b in tab.layout_data.boxes}  # type: ignore[union-attr]
    slowest = next(n for n in result.nodes if n.id in drawn)
    assert overlay.fill(slowest.id) == HEAT[-1]
    # Hovering the slowest node tells its time.
    box = tab.layout_data.box(slowest.id)  # type: ignore[union-attr]
    tab.view.centerOn(*box.center)
    tip = tab.view._tooltip_text(tab.view.mapFromScene(*box.center))
    assert "Time" in tip and f"{slowest.time_ms:.3f} ms" in tip

    # Collapsed, the groups carry their members' total, and the heatmap stays on.
    before = tab.layout_data
    tab.collapse_all()
    _relaid(qtbot, tab, before)
    overlay = tab.view.overlay()
    assert overlay is not None
    groups = [b for b in tab.layout_data.boxes if b.kind == "group"]  # type: ignore[union-attr]
    assert groups and all(g.id in overlay.fills for g in groups)
    features = next(g for g in groups if "features" in g.title)
    inside = [n.time_ms for n in result.nodes
              if "features" in (node_by_id(tab.model, n.id).name or "")]  # type: ignore[union-attr]
    assert overlay.badges[features.id].endswith(("ms", "µs")) and inside
    assert f"{sum(inside):.3f} ms" in overlay.tips[features.id]

    # ✕ on the legend: plain colours, and the panel's checkbox follows.
    tab.view.legend.closed.emit()
    assert tab.view.overlay() is None and not insight.profile_panel.heatmap_enabled()
    insight.profile_panel.heatmap_check.setChecked(True)
    assert tab.view.overlay() is not None


def test_clicking_an_edge_shows_the_tensor_a_bare_session_returns(window: MainWindow,
                                                                  qtbot) -> None:
    model = shared_model("zoo/mnist/mnist.onnx")
    image = shared_model("images/digit_3.jpg")
    tab = _open(window, qtbot, model)
    dock = window.insight.tensor_dock
    value = "ReLU32_Output_0"
    # Before a run there is nothing to show, and the panel says why.
    qtbot.mouseClick(tab.view.viewport(), Qt.MouseButton.LeftButton,
                     pos=_edge_point(tab, value))
    assert window.docks["tensor"].isVisible()
    assert dock.view.current_name() is None
    _run(window, qtbot, image)
    qtbot.mouseClick(tab.view.viewport(), Qt.MouseButton.LeftButton,
                     pos=_edge_point(tab, value))
    qtbot.waitUntil(lambda: dock.view.current_name() == value, timeout=60000)
    shown = dock.view.current_array()

    request = window.run_panel.inspection_request()
    _, feeds = request_feeds(request, Session(model, SessionConfig(optimization="disable")))
    proto = onnx.load(str(model))
    proto.graph.output.append(onnx.ValueInfoProto(name=value))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    bare = ort.InferenceSession(proto.SerializeToString(), options,
                                providers=["CPUExecutionProvider"]).run([value], feeds)[0]
    np.testing.assert_array_equal(shown, bare)
    assert f"{float(bare.max()):.6g}" in dock.view.stats_text()
    assert dock.view.grid_image() is not None  # a 4-D activation: feature maps

    # A new input makes the old tensors stale: they are dropped, not shown.
    _run(window, qtbot, DIGIT)
    assert window.insight.captured() == {}


def test_compare_catches_a_perturbed_copy_and_jumps_to_it(window: MainWindow, qtbot,
                                                          tmp_path: Path) -> None:
    source = sample_model_path()
    proto = onnx.load(str(source))
    conv = next(n for n in proto.graph.node if n.op_type == "Conv")
    weight = next(t for t in proto.graph.initializer if t.name == conv.input[1])
    weight.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(weight) * 1.5, weight.name))
    perturbed = tmp_path / "perturbed.onnx"
    onnx.save(proto, str(perturbed))
    expected = f"n{list(proto.graph.node).index(conv)}"

    tab = _open(window, qtbot, source)
    _run(window, qtbot, DIGIT)
    insight = window.insight
    insight.compare_panel.set_model_b(perturbed)
    cpu = parse_config("ort:cpu:disabled")
    insight.start_compare(CompareOptions(cpu, cpu, 1e-3, perturbed))
    qtbot.waitUntil(lambda: insight.compare_panel.result() is not None
                    and tab.view.overlay() is not None, timeout=60000)
    result = insight.compare_panel.result()
    assert result is not None and result.first_divergence is not None
    assert result.first_divergence.id == expected
    overlay = tab.view.overlay()
    assert overlay is not None and overlay.data.kind == "divergence"
    assert overlay.badges[expected] == "✗"
    qtbot.mouseClick(insight.compare_panel.jump_button, Qt.MouseButton.LeftButton)
    assert tab.view.selected_ids() == [expected]
    assert window.inspector.node.box_id == expected  # the Node panel shows it too


def test_capture_all_then_clicking_a_node_shows_its_output(window: MainWindow, qtbot) -> None:
    tab = _open(window, qtbot, sample_model_path())
    insight = window.insight
    insight.capture_all()  # before any run: refused with a reason, nothing captured
    assert "Run the model first" in (insight.tensor_dock.view.error_message() or "")
    _run(window, qtbot, DIGIT)
    window.commands["tensors"].trigger()
    assert window.docks["tensor"].isVisible()
    insight.capture_all()
    model = tab.model
    assert model is not None
    outputs = {o for n in model.graph.nodes for o in n.outputs if o}
    qtbot.waitUntil(lambda: set(insight.captured()) >= outputs, timeout=60000)
    conv = next(b for b in tab.layout_data.boxes if b.title == "Conv")  # type: ignore[union-attr]
    tab.view.centerOn(*conv.center)
    qtbot.mouseClick(tab.view.viewport(), Qt.MouseButton.LeftButton,
                     pos=tab.view.mapFromScene(*conv.center))
    node = node_by_id(model, conv.id)
    assert node is not None
    # Served from what was captured: no new capture, shown at once.
    assert insight.tensor_dock.view.current_name() == node.outputs[0]
    np.testing.assert_array_equal(insight.tensor_dock.view.current_array(),
                                  insight.captured()[node.outputs[0]])
    assert node.op_type in insight.tensor_dock.node_label.text()
