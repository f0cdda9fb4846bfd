"""Issue 34, BERT-96's Show Optimised Graph: a diff's sides land with one paint each,
whole, and a far paint of a coloured graph picks its colours by numpy."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QObject

from onnxstudio.layout import viewport
from onnxstudio.ui import diffing
from onnxstudio.ui.canvas.model_tab import ModelTab
from tests.builders import relu_chain, save
from tests.conftest import shown_window


class _Paints(QObject):
    """Each side's paints with a graph: (its zoom, Fit's zoom for the viewport then,
    the layout painted)."""

    def __init__(self, sides: list[ModelTab]) -> None:
        super().__init__()
        self.sides = sides
        self.seen: dict[int, list[tuple[float, float, object]]] = {0: [], 1: []}
        for side in sides:
            side.view.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        for i, side in enumerate(self.sides):
            port = side.view.viewport()
            if watched is port and event.type() == QEvent.Type.Paint \
                    and side.layout_data is not None:
                fit = viewport.fit_scale(side.layout_data, port.width(), port.height())
                self.seen[i].append((side.view.current_scale(), fit, side.layout_data))
        return False


def test_a_diffs_sides_paint_whole_from_their_first_frame(qtbot, tmp_path: Path) -> None:
    """Each side of a long model opened as a single tab does (readable at its inputs,
    the curves there smoothed on the GUI thread), then the other side's fit moved it,
    then both were fitted, then relabelled with the shapes they already had: BERT-96's
    optimised graph painted each side six times as it landed. Now every frame of the
    landing shows the side whole and its drawing is the one first painted."""
    a = save(relu_chain(300), tmp_path / "a.onnx")
    b = save(relu_chain(120), tmp_path / "b.onnx")
    window = shown_window(qtbot)
    tab = diffing.open_diff(window, a, b)
    paints = _Paints([tab.side_a, tab.side_b])
    qtbot.waitUntil(lambda: tab.result is not None and all(
        side.layout_data is not None and not side.busy for side in tab.tabs()), timeout=60000)
    qtbot.wait(50)
    for i, side in enumerate((tab.side_a, tab.side_b)):
        seen = paints.seen[i]
        assert seen, "the side was never painted"
        zooms = [(scale, fit) for scale, fit, _ in seen]
        assert all(scale == pytest.approx(fit, rel=0.05) for scale, fit in zooms), zooms
        assert {id(layout) for _, _, layout in seen} == {id(side.layout_data)}
    assert tab.side_a.view.current_scale() < tab.side_b.view.current_scale()
    assert not tab.sync.waiting  # synchronised from now on
    tab.side_a.view.zoom_by(2.0)
    assert tab.side_b.view.current_scale() == pytest.approx(
        tab.side_a.view.current_scale(), rel=0.01)


def test_a_far_paint_of_a_coloured_graph_picks_its_colours_once(monkeypatch,
                                                                tmp_path: Path) -> None:
    """The boxes of a far paint under an overlay (a diff's colours, a heatmap) were
    coloured by a Python pass over every box in every frame (BERT-96: 10 ms each):
    the colours are worked out once per overlay, and each frame draws the same boxes
    in the same colours."""
    from onnxstudio.layout.cache import layout_model
    from onnxstudio.layout.state import default_state
    from onnxstudio.model.open import load_model
    from onnxstudio.render.boxes import PaintState
    from onnxstudio.render.overlay import DIFF_FILLS, Overlay, build_overlay, diff_overlay
    from onnxstudio.render.scene_painter import COARSE_SCALE, GraphPainter
    from onnxstudio.render.theme import LIGHT
    from tests.render_support import RecordingSurface

    model = load_model(save(relu_chain(40), tmp_path / "chain.onnx"), shape_inference=False)
    layout = layout_model(model, default_state(model.graph))
    nodes = [b.id for b in layout.boxes if b.kind not in ("input", "output", "group")]
    statuses = {node: ("changed" if i % 3 == 0 else "matched") for i, node in enumerate(nodes)}
    overlay = build_overlay(layout, model.graph, diff_overlay("d", statuses))
    asked: list[str] = []
    fill = Overlay.fill
    monkeypatch.setattr(Overlay, "fill", lambda self, box_id: asked.append(box_id)
                        or fill(self, box_id))
    painter = GraphPainter(layout, LIGHT)
    state = PaintState(overlay=overlay)
    frames = []
    for _ in range(2):
        surface = RecordingSurface()
        painter.paint(surface, None, COARSE_SCALE / 4, state)
        frames.append({args[1]: sorted(map(tuple, args[0]))
                       for call, args in surface.calls if call == "rects"
                       and args[1] in DIFF_FILLS})
    assert frames[0] == frames[1]
    changed = sorted(tuple(b) for b in painter.index.box_rects[
        [i for i, b in enumerate(layout.boxes) if statuses.get(b.id) == "changed"]].tolist())
    assert frames[0][DIFF_FILLS[1]] == changed
    assert len(asked) == len(layout.boxes) - sum(
        b.kind in ("input", "output") for b in layout.boxes)  # once, not per frame


def _relu_identity_chain(count: int) -> object:
    """x -> (Relu, Identity) × count -> y: every other box goes with View → Hide
    Nodes → Identity."""
    from onnx import TensorProto, helper

    from tests.builders import make_model

    nodes = []
    for i in range(count):
        nodes.append(helper.make_node("Relu", [f"v{2 * i}"], [f"v{2 * i + 1}"], name=f"relu{i}"))
        nodes.append(helper.make_node("Identity", [f"v{2 * i + 1}"], [f"v{2 * i + 2}"],
                                      name=f"same{i}"))
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info(f"v{2 * count}", TensorProto.FLOAT, [2, 8])])
    return make_model(graph)


def test_hiding_the_box_the_view_is_on_still_prepares_what_it_shows(monkeypatch, qtbot,
                                                                    tmp_path: Path) -> None:
    """View → Hide Nodes hid the box nearest the view's centre, so the layout task,
    looking for it, prepared nothing and the first paint placed every edge label it
    showed on the GUI thread (BERT-96: 32 ms of CPU, 57-107 ms frozen). The task now
    prepares the area around the centre the view keeps."""
    from onnxstudio.render.edge_labels import EdgeLabels
    from onnxstudio.ui.canvas import model_tab

    monkeypatch.setattr(model_tab, "finish", lambda drawing, _context: (drawing, {}))  # no rest
    window = shown_window(qtbot)
    from tests.conftest import opened_tab

    tab = opened_tab(qtbot, window, save(_relu_identity_chain(40), tmp_path / "c.onnx"))
    identity = next(n.id for n in tab.model.graph.nodes if n.name == "same20")
    tab.view.centerOn(identity)
    qtbot.wait(20)
    placing: list[bool] = []
    place = EdgeLabels._place
    monkeypatch.setattr(EdgeLabels, "_place", lambda self, *args: placing.append(
        threading.current_thread() is threading.main_thread()) or place(self, *args))
    before = tab.layout_data
    window.canvas_choices.set_hidden(frozenset({"identity"}), [tab])
    qtbot.waitUntil(lambda: tab.layout_data is not before and not tab.busy, timeout=60000)
    tab.view.viewport().repaint()
    assert tab.layout_data.box(identity) is None and len(tab.view.visible_box_ids()) > 3
    assert placing and not any(placing)  # placed, by the layout task only


def test_a_model_serialised_in_pieces_parses_as_the_model(monkeypatch) -> None:
    """An edit's snapshot is serialised record by record, handing the GIL over between
    runs: the bytes parse as the model, every field kept."""
    import onnx

    from onnxstudio.model import pieces
    from onnxstudio.model.pieces import serialise_in_pieces

    monkeypatch.setattr(pieces, "SERIALISE_RUN_BYTES", 4096)
    model = relu_chain(3000)
    model.doc_string = "a chain"
    onnx.helper.set_model_props(model, {"author": "tests"})
    model.graph.initializer.append(onnx.numpy_helper.from_array(
        __import__("numpy").ones((300, 300), "float32"), "w"))
    model.graph.value_info.extend(onnx.helper.make_tensor_value_info(
        f"v{i}", onnx.TensorProto.FLOAT, [2, 8]) for i in range(1, 50))
    runs: list[int] = []
    data = serialise_in_pieces(model, lambda: runs.append(1))
    parsed = onnx.ModelProto()
    parsed.ParseFromString(data)
    assert parsed == model and len(runs) > 20


def test_an_edit_is_serialised_for_its_check_on_a_worker(monkeypatch, qtbot,
                                                          tmp_path: Path) -> None:
    """The edited model's snapshot for the check was one SerializeToString on the GUI
    thread (BERT-96: 11-27 ms of a frozen window per edit): a worker makes it now, and
    the edit lands as before."""
    from onnxstudio.ui.edit import controller
    from tests.conftest import opened_tab

    made: list[bool] = []
    serialise = controller.serialise_in_pieces
    monkeypatch.setattr(controller, "serialise_in_pieces", lambda model, between: made.append(
        threading.current_thread() is threading.main_thread()) or serialise(model, between))
    window = shown_window(qtbot)
    tab = opened_tab(qtbot, window, save(relu_chain(30), tmp_path / "chain.onnx"))
    first = tab.model.graph.nodes[0]
    window.edits.prefetch()
    window.edits.edit_key(f"node-name:{first.id}", "renamed")
    edits = window.edits.controllers[tab]
    qtbot.waitUntil(lambda: not edits.busy and not tab.busy and tab.model is not None
                    and tab.model.graph.nodes[0].name == "renamed", timeout=30000)
    assert made and not any(made)
    edits.stack.setClean()  # closing asks nothing

