"""The window reads whole: status bar, dock tabs, theme switches, export outcome."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QRectF, QUrl
from PySide6.QtGui import QDesktopServices, QPalette
from PySide6.QtWidgets import QDialog, QFileDialog, QLabel, QTabBar

from onnxstudio.ui.dialogs import export_destination as dest
from onnxstudio.ui.dialogs import export_dialog as ed
from onnxstudio.ui.main_window import MainWindow
from onnxstudio.ui.tasks import TaskRunner
from tests.builders import save, tiny_mlp
from tests.conftest import opened_tab, shown_window


@pytest.fixture
def window(qtbot) -> MainWindow:
    yield shown_window(qtbot)
    TaskRunner.wait_all()


def test_status_message_never_runs_under_the_counts(window: MainWindow, qtbot,
                                                    tmp_path: Path) -> None:
    opened_tab(qtbot, window, save(tiny_mlp(), tmp_path / "m.onnx"))
    bar = window.status_bar
    long = "m.onnx: " + "a very long reason that goes on " * 20
    bar.showMessage(long, 5000)
    qtbot.wait(50)
    label = bar.message_label
    right = window.status_line.nodes.geometry()
    assert bar.currentMessage() == long and label.toolTip() == long
    assert label.geometry().right() < right.left()  # side by side, never overlapping
    assert label.is_elided() and window.status_line.nodes.text() == "5 nodes (5 shown)"


def test_dock_tabs_show_whole_names(window: MainWindow, qtbot) -> None:
    for key in ("profile", "compare", "tensor"):
        window.show_panel(key)
    qtbot.wait(100)
    bars = [b for b in window.findChildren(QTabBar) if b.parent() is window]
    assert bars
    for bar in bars:
        texts = [bar.tabText(i) for i in range(bar.count())]
        assert bar.elideMode().name == "ElideNone" and bar.usesScrollButtons(), texts
    # The right side's eight panels run down the dock's edge: at 1280x800 every tab is
    # whole in view (a bottom bar had room for four and showed the first cut: "odel").
    right = next(b for b in bars if "Compare" in [b.tabText(i) for i in range(b.count())])
    assert right.shape() in (QTabBar.Shape.RoundedEast, QTabBar.Shape.TriangularEast)
    assert right.count() == 8
    for i in range(right.count()):
        assert right.rect().contains(right.tabRect(i)), right.tabText(i)
        assert right.tabRect(i).height() >= right.fontMetrics().horizontalAdvance(
            right.tabText(i)), right.tabText(i)


def test_live_dark_switch_repaints_style_sheet_text(window: MainWindow, qtbot) -> None:
    window.set_appearance("light")
    tagline = next(w for w in window.welcome.findChildren(QLabel) if "Drop an" in w.text())
    light = tagline.palette().color(QPalette.ColorRole.WindowText).lightness()
    window.set_appearance("dark")
    qtbot.wait(50)
    dark = tagline.palette().color(QPalette.ColorRole.WindowText).lightness()
    assert dark > light  # light text on the dark page, not the light theme's dark text
    window.set_appearance("light")


def test_finished_export_says_where_with_open_folder(window: MainWindow, qtbot, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    opened_tab(qtbot, window, save(tiny_mlp(), tmp_path / "m.onnx"))
    out = tmp_path / "out" / "diagram.svg"
    out.parent.mkdir()
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda *a, **k: (str(out), dest.file_filters()[0]))
    monkeypatch.setattr(ed.ExportOptionsDialog, "exec", lambda self: QDialog.DialogCode.Accepted)
    opened: list[QUrl] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url) or True)
    window.export_diagram()
    bar = window.status_bar
    qtbot.waitUntil(lambda: bar.action_button.isVisible(), timeout=30000)
    assert out.exists()
    assert "diagram.svg" in bar.currentMessage() and str(out.parent) in bar.currentMessage()
    assert bar.action_button.text() == "Open folder"
    bar.action_button.click()
    assert opened and opened[0].toLocalFile() == str(out.parent)


def _long_chain(n: int):
    from onnx import TensorProto, helper

    from tests.builders import make_model

    nodes = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"relu_{i}")
             for i in range(n)]
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info(f"v{n}", TensorProto.FLOAT, [1, 8])])
    return make_model(graph)


def test_long_graph_opens_readable_at_its_input_and_fit_shows_it_whole(
        window: MainWindow, qtbot, tmp_path: Path) -> None:
    from onnxstudio.layout import viewport
    from onnxstudio.layout.sizing import TITLE_FONT_PX

    tab = opened_tab(qtbot, window, save(_long_chain(300), tmp_path / "chain.onnx"))
    view = tab.view
    assert view.current_scale() * TITLE_FONT_PX >= viewport.READABLE_TITLE_PX - 0.01
    assert view.viewport().rect().contains(view.map_box_to_view("in:v0"))
    view.fit()  # a 300-box chain cannot fit legibly: Fit shows it whole all the same
    assert view.current_scale() < viewport.FIT_MIN_SCALE
    assert set(view.visible_box_ids()) == {b.id for b in tab.layout_data.boxes}
    assert view.visible_scene_rect().contains(QRectF(
        0, 0, tab.layout_data.width, tab.layout_data.height))


def test_model_panel_says_how_long_dims_are_abbreviated(qtbot, tmp_path: Path) -> None:
    from onnx import TensorProto, helper

    from onnxstudio.model import load_model
    from onnxstudio.ui.inspector.model_panel import ModelPanel
    from tests.builders import make_model

    dims = ["batch_size", "sequence_length", 8]
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)])
    panel = ModelPanel()
    qtbot.addWidget(panel)
    panel.set_model(load_model(save(make_model(graph), tmp_path / "m.onnx")))
    row = panel.tree.find_row("sl", "Dimension abbreviations")
    assert row is not None and row.text(1) == "sequence_length"


def test_overlay_legend_is_as_wide_as_its_text(qtbot) -> None:
    from onnxstudio.render.overlay import Overlay, OverlayData
    from onnxstudio.ui.canvas.graph_view import GraphView

    view = GraphView()
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    title = "ort:cpu:all vs ort:cpu:disable (tolerance 0.001)"
    legend = (("#1a9850", "≤ 1e-4 × tol"), ("#a6d96a", "1e-2 × tol"), ("#fdae61", "= tolerance"),
              ("#d73027", "≥ 100 × tol"))
    first = (("#ffffcc", "0"), ("#b10026", "1 ms"))
    view.set_overlay(Overlay(OverlayData("profile", "Time per node", {}), {}, {}, {}, first))
    qtbot.wait(50)  # then a comparison replaces the heatmap: the legend must grow
    view.set_overlay(Overlay(OverlayData("divergence", title, {}), {}, {}, {}, legend))
    qtbot.wait(50)
    shown = view.legend
    assert shown.isVisible()
    assert shown.title.width() >= shown.title.fontMetrics().horizontalAdvance(title)
    assert shown.geometry().right() <= view.width()


def test_opsets_table_shows_whole_domains(qtbot, tmp_path: Path) -> None:
    from onnx import TensorProto, helper

    from onnxstudio.model import load_model
    from onnxstudio.ui.inspector.opset_panel import OpsetPanel
    from tests.builders import make_model

    graph = helper.make_graph(
        [helper.make_node("FastGelu", ["x"], ["y"], domain="com.microsoft")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = make_model(graph)
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    panel = OpsetPanel()
    qtbot.addWidget(panel)
    panel.resize(420, 500)
    panel.set_model(load_model(save(model, tmp_path / "m.onnx")))
    table = panel.table
    width = table.fontMetrics().horizontalAdvance("com.microsoft")
    assert table.columnWidth(1) > width


def test_many_opset_domains_never_widen_the_window(window: MainWindow, qtbot) -> None:
    """Ultraface imports eight domains: the status bar's opset list elides instead."""
    window.status_line.opsets.setText("  ".join(f"com.example.domain{i} v1" for i in range(12)))
    qtbot.wait(50)
    assert window.minimumSizeHint().width() < 1280
    assert window.status_line.opsets.toolTip().startswith("com.example.domain0")
    window.status_bar.showMessage("Opened m.onnx in 0.01 s")
    qtbot.wait(50)
    label = window.status_bar.message_label
    assert label.width() >= label.fontMetrics().horizontalAdvance("Opened m.onnx in 0.01 s")


def test_status_counts_name_the_collapsed_groups(window: MainWindow, qtbot,
                                                  tmp_path: Path) -> None:
    """A big model opens with its groups collapsed: "1 shown" alone read like a bug."""
    tab = opened_tab(qtbot, window, save(tiny_mlp(), tmp_path / "m.onnx"))
    groups = [b for b in tab.layout_data.boxes if b.kind == "group"]
    frames = [g.id for g in tab.layout_data.groups]
    assert not groups and frames  # the small model opens expanded
    for frame in frames:
        tab.toggle(frame)  # collapse every group, as a 100k-node model opens
    qtbot.waitUntil(lambda: not tab.busy and any(
        b.kind == "group" for b in tab.layout_data.boxes), timeout=60000)
    kinds = [b.kind for b in tab.layout_data.boxes]
    text = window.status_line.nodes.text()
    assert text == (f"5 nodes ({kinds.count('node')} shown, "
                    f"{kinds.count('group')} group{'s' if kinds.count('group') > 1 else ''} "
                    "collapsed)")


def test_model_panel_shares_a_narrow_dock_between_names_and_values(qtbot) -> None:
    """The sample's metadata keys are long ("Image.NominalPixelRange"): in a wide panel
    they show whole; narrowed, names give way (their tooltip keeps them) and values keep
    a readable column instead of 50 px of one-word lines."""
    from onnxstudio.model import load_model
    from onnxstudio.ui.inspector.model_panel import ModelPanel
    from onnxstudio.ui.main_window import sample_model_path

    panel = ModelPanel()
    qtbot.addWidget(panel)
    panel.resize(620, 700)
    panel.show()
    panel.set_model(load_model(sample_model_path()))
    tree = panel.tree
    key = next(tree.topLevelItem(i).child(j) for i in range(tree.topLevelItemCount())
               for j in range(tree.topLevelItem(i).childCount())
               if tree.topLevelItem(i).child(j).text(0) == "Image.NominalPixelRange")
    indent = 2 * tree.indentation() + 6  # under its section; the text margins
    assert tree.columnWidth(0) >= tree.fontMetrics().horizontalAdvance(key.text(0)) + indent
    panel.resize(300, 700)
    qtbot.waitUntil(lambda: tree.viewport().width() < 300)
    width = tree.viewport().width()
    assert tree.columnWidth(1) >= width // 3
    assert key.toolTip(0) == "Image.NominalPixelRange"
