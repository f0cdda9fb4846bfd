"""Opening draws before shapes are known; inferred shapes arrive afterwards, in place."""

from __future__ import annotations

from pathlib import Path

import pytest
from onnx import helper

from onnxstudio.layout.build import build_layout
from onnxstudio.model import load_model
from onnxstudio.model.open import ISOLATE_INFERENCE_NODES, open_model
from onnxstudio.ui.canvas.model_tab import ModelTab
from onnxstudio.ui.inspector.inspector import Inspector
from tests.builders import relu_chain, save, tiny_mlp
from tests.conftest import shared_model


def test_open_model_gives_the_graph_first_and_its_shapes_after(tmp_path: Path) -> None:
    path = save(tiny_mlp(), tmp_path / "m.onnx")
    model, shapes = open_model(path)
    assert model.graph.values["h1"].type.shape is None  # not inferred yet
    assert model.graph.values["x"].type.shape == ("batch", 4)  # declared: there at once
    assert shapes.apply(model) > 0
    assert model.graph.values["h1"].type.describe() == "float32[batch×8]"
    # the same types as opening with shapes in one go
    whole = load_model(path)
    assert {n: v.type for n, v in model.graph.values.items()} == {
        n: v.type for n, v in whole.graph.values.items()}


def test_large_graph_infers_in_a_child_process(tmp_path: Path) -> None:
    count = ISOLATE_INFERENCE_NODES + 50
    model, shapes = open_model(save(relu_chain(count), tmp_path / "chain.onnx"))
    assert shapes.child is not None and shapes.proto is None
    assert shapes.apply(model) == count - 1  # every intermediate (the output is declared)
    assert model.graph.values[f"v{count // 2}"].type.describe() == "float32[2×8]"


def test_child_inference_failure_becomes_a_warning(tmp_path: Path) -> None:
    model, shapes = open_model(save(relu_chain(ISOLATE_INFERENCE_NODES + 10, bad=True),
                                    tmp_path / "bad.onnx"))
    assert not any("shape inference" in w for w in model.warnings)
    shapes.apply(model)
    assert any("shape inference failed" in w for w in model.warnings)
    # lenient inference still gave the shapes it could
    assert model.graph.values["v5"].type.describe() == "float32[2×8]"


def test_cancelled_inference_leaves_the_model_as_it_was(tmp_path: Path) -> None:
    model, shapes = open_model(save(relu_chain(ISOLATE_INFERENCE_NODES + 10),
                                    tmp_path / "chain.onnx"))
    shapes.cancel()
    assert shapes.apply(model) == 0
    assert model.graph.values["v5"].type.shape is None


def test_tab_relabels_edges_and_node_panel_when_shapes_arrive(qtbot, tmp_path: Path) -> None:
    path = save(relu_chain(ISOLATE_INFERENCE_NODES + 20), tmp_path / "chain.onnx")
    tab = ModelTab(path)
    qtbot.addWidget(tab)
    tab.resize(900, 700)
    tab.show()
    inspector = Inspector(lambda: tab)
    tab.loaded.connect(inspector.show_model)
    tab.shapesReady.connect(lambda model: inspector.refresh(model, tab.view.selected_ids()))
    first: list = []
    tab.layoutChanged.connect(lambda layout: first.append(layout) if not first else None)
    with qtbot.waitSignal(tab.shapesReady, timeout=120000):
        tab.start()
    qtbot.waitUntil(lambda: not tab.busy, timeout=60000)
    labels = {e.value: e.label for e in tab.layout_data.edges}
    assert labels["v7"] == "2×8"
    # only the labels were swapped: the boxes drawn first are the boxes shown now
    assert tab.layout_data is not first[0] and tab.layout_data.boxes is first[0].boxes
    # ... and the painter kept the routes it smoothed; its hit index answers from the
    # relabelled layout (an edge's tooltip shows its shape)
    painter = tab.view.painter()
    assert painter is not None and painter.routes_from is not None
    assert painter.index.layout is tab.layout_data
    edge = next(i for i, e in enumerate(tab.layout_data.edges) if e.value == "v7")
    assert painter.drawn(edge) is painter.routes_from.drawn(edge)
    node = next(n for n in tab.model.graph.nodes if n.name.endswith("/Relu_7"))
    tab.view.set_selection([node.id])
    inspector.show_selection(tab.model, [node.id])
    shown = inspector.node.tree.find_row("Y", "Outputs")
    assert shown is not None and shown.text(1) == "v8\nfloat32[2×8]"


def test_closing_a_tab_mid_inference_stops_the_child(qtbot, tmp_path: Path) -> None:
    tab = ModelTab(save(relu_chain(ISOLATE_INFERENCE_NODES + 20), tmp_path / "chain.onnx"))
    qtbot.addWidget(tab)
    with qtbot.waitSignal(tab.loaded, timeout=120000):
        tab.start()
    pending = tab._landing.pending_shapes
    child = pending.child if pending else None
    tab.shutdown()
    assert child is None or child._child is None or child._child.process.poll() is not None
    assert not tab.busy


def test_layout_without_shapes_has_the_same_geometry(tmp_path: Path) -> None:
    """Drawing first and labelling later must not move anything."""
    path = save(tiny_mlp(), tmp_path / "m.onnx")
    bare, _ = open_model(path)
    shaped = load_model(path)
    a, b = build_layout(bare), build_layout(shaped)
    assert [(x.id, x.x, x.y, x.width, x.height) for x in a.boxes] == [
        (x.id, x.x, x.y, x.width, x.height) for x in b.boxes]
    assert [e.points for e in a.edges] == [e.points for e in b.edges]


def test_relabelling_gives_what_a_new_layout_would(tmp_path: Path) -> None:
    """Shapes that arrive after the first paint only swap edge labels: the result is the
    layout a fresh build with the shapes gives, boxes and routes untouched."""
    from onnxstudio.layout.relabel import relabelled

    model, shapes = open_model(save(relu_chain(30), tmp_path / "chain.onnx"))
    first = build_layout(model)
    assert "" in {e.label for e in first.edges}  # the bare graph: intermediates unknown
    assert shapes.apply(model) > 0
    swapped = relabelled(first, model.graph)
    assert swapped is not None and swapped.boxes is first.boxes
    fresh = build_layout(model)
    assert [(e.source, e.target, e.value, e.label, e.points) for e in swapped.edges] == [
        (e.source, e.target, e.value, e.label, e.points) for e in fresh.edges]
    inner = {e.label for e in swapped.edges if not e.target.startswith("out:")}
    assert inner == {"2×8"}  # the output's own declared type has no shape: ""


def test_relabelling_declines_when_an_output_box_would_change(tmp_path: Path) -> None:
    """An output declared without a type prints the inferred one once it is known, which
    may change its box's size: the tab lays the graph out again instead."""
    from onnxstudio.layout.relabel import relabelled

    chain = relu_chain(10)
    del chain.graph.output[:]
    chain.graph.output.append(helper.make_empty_tensor_value_info("v10"))
    model, shapes = open_model(save(chain, tmp_path / "untyped.onnx"))
    first = build_layout(model)
    out = next(b for b in first.boxes if b.kind == "output")
    assert out.details == ("?[?]",)
    assert relabelled(first, model.graph) is not None  # nothing new yet: labels only
    shapes.apply(model)
    assert model.graph.values["v10"].type.describe() == "float32[2×8]"
    assert relabelled(first, model.graph) is None


@pytest.mark.parametrize("relative", [
    "zoo/onnx_light/light_squeezenet.onnx",  # weights made by folded ConstantOfShape
    "zoo/onnx_light/light_inception_v1.onnx",
    "zoo/mnist/mnist.onnx",
])
def test_relabelling_real_models_gives_a_fresh_layout_or_declines(relative: str) -> None:
    """Whatever the tab shows once shapes arrive, relabelled or laid out again, is the
    layout a fresh open with the shapes gives: no box cut to a text it no longer prints."""
    from onnxstudio.layout.relabel import relabelled
    from onnxstudio.layout.state import default_state

    model, shapes = open_model(shared_model(relative))
    first = build_layout(model, default_state(model.graph))
    shapes.apply(model)
    swapped = relabelled(first, model.graph)
    fresh = build_layout(model, default_state(model.graph))
    if swapped is None:
        return
    assert [(b.id, b.x, b.y, b.width, b.height, b.details) for b in swapped.boxes] == [
        (b.id, b.x, b.y, b.width, b.height, b.details) for b in fresh.boxes]
    assert [(e.value, e.label, e.points) for e in swapped.edges] == [
        (e.value, e.label, e.points) for e in fresh.edges]
