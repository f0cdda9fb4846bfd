"""What the panels read when a model lands is computed by the open task, off the GUI
thread: the dimension legend, the run panel's settings key, the minimap's overview."""

from __future__ import annotations

from pathlib import Path

import onnx
from onnx import TensorProto, helper

from onnxstudio.layout.labels import model_dim_abbreviations
from onnxstudio.model.open import open_model
from onnxstudio.render.theme import theme_named
from onnxstudio.runner import choices
from onnxstudio.ui.canvas.model_tab import ModelTab
from onnxstudio.ui.inspector.model_panel import ModelPanel
from tests.builders import make_model, save


def relu_chain(count: int, seq: str = "sequence_length") -> onnx.ModelProto:
    """x[seq, 8] -> Relu × count -> y (no scopes: every node is its own box)."""
    nodes = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"relu{i}")
             for i in range(count)]
    nodes[0].input[0] = "x"
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [seq, 8])],
        [helper.make_tensor_value_info(f"v{count}", TensorProto.FLOAT, None)])
    return make_model(graph)


def test_dimension_legend_is_dropped_when_inferred_types_arrive(tmp_path: Path) -> None:
    model, shapes = open_model(save(relu_chain(4), tmp_path / "chain.onnx"))
    assert model_dim_abbreviations(model) == {"sl": "sequence_length"}
    assert "types:dim_abbreviations" in model.derived
    assert shapes.apply(model) > 0  # new types: views that read them are stale now
    assert "types:dim_abbreviations" not in model.derived
    assert model.graph.values["v2"].type.describe() == "float32[sequence_length×8]"
    assert model_dim_abbreviations(model) == {"sl": "sequence_length"}


def test_settings_key_is_kept_until_the_file_changes(tmp_path: Path) -> None:
    path = save(relu_chain(4), tmp_path / "chain.onnx")
    first = choices.model_key(path)
    assert choices.model_key(path) == first
    save(relu_chain(5), path)  # rewritten in place: another size and time, another key
    assert choices.model_key(path) != first


def _wait_shown(qtbot, tab: ModelTab) -> None:
    tab.resize(900, 700)
    tab.show()
    with qtbot.waitSignal(tab.loaded, timeout=120000):
        tab.start()
    qtbot.waitUntil(lambda: not tab.busy, timeout=120000)


def test_tab_lands_with_the_legend_and_settings_key_ready(qtbot, tmp_path: Path) -> None:
    path = save(relu_chain(30), tmp_path / "chain.onnx")
    tab = ModelTab(path)
    qtbot.addWidget(tab)
    _wait_shown(qtbot, tab)
    assert "types:dim_abbreviations" in tab.model.derived
    assert any(key[0] == str(path.resolve()) for key in choices._KEYS)
    panel = ModelPanel()
    qtbot.addWidget(panel)
    panel.set_model(tab.model)
    assert panel.tree.find_row("sl", "Dimension abbreviations").text(1) == "sequence_length"


def test_graph_is_painted_before_the_panels_fill(qtbot, tmp_path: Path) -> None:
    """The view paints the graph in the turn after it lands; the panels (``loaded``) and
    shape inference come a turn later, so the window never does all three at once."""
    from PySide6.QtCore import QEvent, QObject

    tab = ModelTab(save(relu_chain(30), tmp_path / "chain.onnx"))
    qtbot.addWidget(tab)
    tab.resize(900, 700)
    tab.show()
    seen: list[str] = []

    class Paints(QObject):
        def eventFilter(self, _obj, event) -> bool:
            if event.type() == QEvent.Type.Paint and tab.layout_data is not None:
                seen.append("paint")
            return False

    paints = Paints()
    tab.view.viewport().installEventFilter(paints)
    tab.loaded.connect(lambda _m: seen.append(f"loaded, busy={tab.busy}"))
    with qtbot.waitSignal(tab.loaded, timeout=120000):
        tab.start()
    qtbot.waitUntil(lambda: not tab.busy, timeout=120000)
    assert seen[0] == "paint"
    assert [s for s in seen if s.startswith("loaded")] == ["loaded, busy=True"]
    assert tab.model is not None and tab.model.graph.values["v2"].type.describe() == \
        "float32[sequence_length×8]"  # shapes arrived after


def _lightness(image) -> tuple[float, int]:
    """Mean lightness of the minimap's inner area and how many distinct colours it has."""
    seen = [image.pixelColor(x, y) for y in range(8, image.height() - 8, 2)
            for x in range(8, image.width() - 8, 2)]
    return sum(c.lightness() for c in seen) / len(seen), len({c.name() for c in seen})


def test_minimap_image_is_rendered_off_thread_once(qtbot, tmp_path: Path) -> None:
    """The minimap's first paint starts a worker on its image; it is drawn from then on
    and rendered again only when what it shows changes (here the theme)."""
    tab = ModelTab(save(relu_chain(2_100, seq="n"), tmp_path / "long.onnx"))
    qtbot.addWidget(tab)
    _wait_shown(qtbot, tab)
    view, minimap = tab.view, tab.view.minimap
    view.zoom_in()  # a 2,100-node chain never fits whole: the minimap is wanted
    qtbot.waitUntil(minimap.isVisible, timeout=10000)

    def settled() -> bool:  # painted with an image of what the view shows now
        minimap.grab()
        return minimap._image is not None and not minimap._rendering

    qtbot.waitUntil(settled, timeout=10000)
    offered = minimap._image
    shown = minimap.grab().toImage()
    assert minimap._image is offered and not minimap._rendering  # drawn, not rendered again
    light, colours = _lightness(shown)
    assert colours > 3  # the chain is drawn, not only the minimap's background
    view.set_theme(theme_named("dark" if view.theme().name == "light" else "light"))
    minimap.grab()  # the stale image is not drawn; a worker renders the new one
    qtbot.waitUntil(lambda: minimap._image is not offered, timeout=10000)
    again = minimap.grab().toImage()  # painted again, in the new theme's colours
    assert abs(_lightness(again)[0] - light) > 40


def test_a_heatmap_arrives_with_its_minimap_overview(qtbot, tmp_path: Path) -> None:
    """A profile's heatmap is folded and its overview painted by the profile task: the
    minimap shows that image instead of painting 2,000 boxes on the GUI thread."""
    from onnxstudio.render.overlay import OverlayData, build_overlay
    from onnxstudio.ui.canvas.drawing import overview_image

    tab = ModelTab(save(relu_chain(2_100, seq="n"), tmp_path / "h.onnx"))
    qtbot.addWidget(tab)
    _wait_shown(qtbot, tab)
    tab.view.zoom_in()
    qtbot.waitUntil(tab.view.minimap.isVisible, timeout=10000)
    times = {n.id: 0.0 for n in tab.model.graph.nodes}  # all cold but the last one
    times[tab.model.graph.nodes[-1].id] = 5.0
    data = OverlayData("profile", "Time per node (ms)", times, total=sum(times.values()))
    overlay = build_overlay(tab.layout_data, tab.model.graph, data)
    overview = overview_image(tab.view.painter(), tab.view.devicePixelRatioF(), overlay)
    tab.set_overlay(data, overlay, overview)
    tab.view.minimap.grab()
    assert tab.view.minimap._image is overview  # drawn as given, not painted again
    tab.set_overlay(None)  # the heatmap goes: its overview must not stay on the minimap
    tab.view.minimap.grab()
    qtbot.waitUntil(lambda: tab.view.minimap._image is not overview, timeout=10000)


def test_long_routes_are_drawn_from_paths_the_layout_task_built(qtbot, tmp_path: Path,
                                                                monkeypatch) -> None:
    """A skip connection past many nodes is a long curve; its QPainterPath is built with
    the layout, off the GUI thread, and the first paint draws that one."""
    from onnxstudio.render import qt_surface

    # its straight run down the chain is one segment: "long" here is a few segments
    monkeypatch.setattr(qt_surface, "CACHED_PATH_SEGMENTS", 3)
    chain = [helper.make_node("Relu", [f"h{i}"], [f"h{i + 1}"]) for i in range(24)]
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["h0"]), *chain,
         helper.make_node("Add", ["h0", "h24"], ["y"])], "skip",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])])
    tab = ModelTab(save(make_model(graph), tmp_path / "skip.onnx"))
    qtbot.addWidget(tab)
    _wait_shown(qtbot, tab)
    built = tab._drawing.paths  # type: ignore[union-attr]
    assert built  # the skip's route
    tab.view.viewport().grab()
    cached = tab.view._surface._paths  # type: ignore[union-attr]
    assert all(cached[key][1] is path for key, (_segments, path) in built.items())


def test_a_failure_in_the_panels_views_leaves_the_graph_shown_and_the_tab_idle(
        qtbot, tmp_path: Path, monkeypatch) -> None:
    from onnxstudio.ui.canvas import landing

    def broken(_model: object) -> None:
        raise RuntimeError("views broke")

    monkeypatch.setattr(landing, "prepare_views", broken)
    tab = ModelTab(save(relu_chain(5), tmp_path / "chain.onnx"))
    qtbot.addWidget(tab)
    tab.resize(900, 700)
    tab.show()
    with qtbot.waitSignal(tab.failed, timeout=120000) as failed:
        tab.start()
    qtbot.waitUntil(lambda: not tab.busy, timeout=120000)
    assert "views broke" in failed.args[0] and tab.layout_data is not None and not tab.error
