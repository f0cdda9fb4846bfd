"""File → Export…: the dialogs, the worker thread, Cancel, and the remembered folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialog, QFileDialog, QMessageBox

from onnxstudio.export.options import ExportOptions
from onnxstudio.ui.dialogs import export_destination as dest
from onnxstudio.ui.dialogs import export_dialog as ed
from onnxstudio.ui.settings import app_settings
from onnxstudio.ui.tasks import TaskRunner
from tests.export_support import chain_layout, grid_layout


@pytest.fixture(autouse=True)
def _drain_workers():
    yield
    TaskRunner.wait_all()


def test_export_runs_in_background_and_remembers_folder(qtbot, tmp_path: Path) -> None:
    out = tmp_path / "g.png"
    flow = ed.start_export(None, None, chain_layout(), ed.ViewSnapshot(), path=out,
                           options=ExportOptions(scale=1.5))
    assert flow is not None
    with qtbot.waitSignal(flow.finished, timeout=30000) as blocker:
        pass
    assert blocker.args[0].path == out and out.read_bytes().startswith(b"\x89PNG")
    assert app_settings().value(dest.LAST_FOLDER_KEY) == str(tmp_path)
    assert app_settings().value(dest.LAST_FORMAT_KEY) == "png"


def test_dialog_flow_appends_extension_and_asks_before_replacing(
        qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    picked = {"name": str(tmp_path / "diagram"), "filter": dest.file_filters()[1]}  # PNG
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda *a, **k: (picked["name"], picked["filter"]))
    monkeypatch.setattr(ed.ExportOptionsDialog, "exec", lambda self: QDialog.DialogCode.Accepted)
    asked: list[str] = []
    answer = {"value": QMessageBox.StandardButton.No}

    def question(parent, title, text, *args):  # type: ignore[no-untyped-def]
        asked.append(text)
        return answer["value"]

    monkeypatch.setattr(QMessageBox, "question", question)
    flow = ed.start_export(None, None, chain_layout(), None)
    assert flow is not None and flow.path == tmp_path / "diagram.png"
    qtbot.waitUntil(lambda: flow.result is not None, timeout=30000)
    assert not asked  # new file: no question
    before = (tmp_path / "diagram.png").read_bytes()
    assert ed.start_export(None, None, chain_layout(6), None) is None  # "No": kept
    assert asked and "already exists" in asked[0]
    assert (tmp_path / "diagram.png").read_bytes() == before
    answer["value"] = QMessageBox.StandardButton.Yes
    flow = ed.start_export(None, None, chain_layout(6), None)
    assert flow is not None
    qtbot.waitUntil(lambda: flow.result is not None, timeout=30000)
    assert (tmp_path / "diagram.png").read_bytes() != before


def test_cancel_writes_nothing(qtbot, tmp_path: Path) -> None:
    out = tmp_path / "big.pdf"
    out.write_bytes(b"precious")
    flow = ed.start_export(None, None, grid_layout(60, 400), ed.ViewSnapshot(), path=out,
                           options=ExportOptions())
    assert flow is not None
    with qtbot.waitSignal(flow.cancelled, timeout=5000):
        flow.cancel()
    TaskRunner.wait_all()
    qtbot.wait(50)
    assert out.read_bytes() == b"precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.pdf"]
    assert flow.result is None


def test_failure_is_reported(qtbot, tmp_path: Path) -> None:
    flow = ed.start_export(None, None, chain_layout(), ed.ViewSnapshot(),
                           path=tmp_path / "missing" / "g.svg", options=ExportOptions())
    assert flow is not None
    with qtbot.waitSignal(flow.failed, timeout=30000) as blocker:
        pass
    assert "does not exist" in blocker.args[0]


def test_options_dialog(qtbot, tmp_path: Path) -> None:
    view = ed.ViewSnapshot(theme="dark", visible_rect=(0, 0, 100, 100), selection=[])
    dialog = ed.ExportOptionsDialog(None, tmp_path / "g.png", grid_layout(30, 200), None, view)
    qtbot.addWidget(dialog)
    dialog.scale.setValue(1.0)
    small = dialog.size_label.text()
    dialog.scale.setValue(8.0)
    assert small != dialog.size_label.text() and "exported whole" in dialog.size_label.text()
    assert not dialog.region.model().item(2).isEnabled()  # nothing selected
    dialog.theme.setCurrentIndex(1)
    options = dialog.options()
    assert options.format == "png" and options.scale == 8.0 and options.theme_name() == "dark"
    pdf = ed.ExportOptionsDialog(None, tmp_path / "g.pdf", chain_layout(), None, view)
    qtbot.addWidget(pdf)
    pdf.paper.setCurrentIndex(1)
    assert pdf.options().paginate == "A4"


def test_snapshot_of_a_graph_view(qtbot) -> None:
    from onnxstudio.render.theme import DARK
    from onnxstudio.ui.canvas.graph_view import GraphView

    view = GraphView(theme=DARK)
    qtbot.addWidget(view)
    view.resize(400, 300)
    view.set_layout(chain_layout())
    view.set_selection(["n1"])
    snap = ed.snapshot_view(view)
    assert snap.theme == "dark" and snap.selection == ["n1"]
    assert snap.visible_rect is not None and snap.visible_rect[2] > 0


def test_ctrl_e_in_the_main_window_exports_what_is_shown(
        qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real window: open a model, Ctrl+E, pick a file; the SVG holds every shown box."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QKeySequence

    from onnxstudio.ui.main_window import MainWindow
    from tests.builders import save, tiny_mlp

    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1000, 700)
    window.show()
    tab = window.open_paths([str(save(tiny_mlp(), tmp_path / "mlp.onnx"))])[0]
    qtbot.waitUntil(lambda: not tab.busy and tab.layout_data is not None, timeout=60000)
    assert window.commands["export"].shortcut() == QKeySequence("Ctrl+E")
    out = tmp_path / "shown.svg"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    flows: list[ed.ExportFlow] = []
    real_start = ed.ExportFlow.start
    monkeypatch.setattr(ed.ExportFlow, "start",
                        lambda self: (flows.append(self), real_start(self))[1])
    monkeypatch.setattr(ed.ExportOptionsDialog, "exec", lambda self: QDialog.DialogCode.Accepted)
    qtbot.keyClick(window, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: bool(flows) and flows[0].result is not None, timeout=30000)
    text = out.read_text()
    for box in tab.layout_data.boxes:
        assert f'data-id="{box.id}"' in text


def test_cancel_during_relayout(qtbot, tmp_path: Path, capfd: pytest.CaptureFixture) -> None:
    from onnxstudio.model import load_model
    from tests.conftest import ladder_model

    model = load_model(ladder_model("dag30k.onnx"))
    out = tmp_path / "all.svg"
    flow = ed.start_export(None, model, grid_layout(2, 2), ed.ViewSnapshot(), path=out,
                           options=ExportOptions(expand="all"))
    assert flow is not None
    qtbot.wait(100)
    with qtbot.waitSignal(flow.cancelled, timeout=5000):
        flow.cancel()
    TaskRunner.wait_all()
    assert not out.exists() and "Traceback" not in capfd.readouterr().err


def test_dialog_offers_to_keep_the_canvas_heatmap(qtbot, tmp_path: Path) -> None:
    from onnxstudio.render.overlay import OverlayData

    heat = OverlayData("profile", "Time per node", {"n0": 1.0})
    plain = ed.ExportOptionsDialog(None, tmp_path / "g.svg", chain_layout(), None,
                                   ed.ViewSnapshot())
    qtbot.addWidget(plain)
    assert plain.options().overlay is None and plain.heat.parent() is None
    dialog = ed.ExportOptionsDialog(None, tmp_path / "g.svg", chain_layout(), None,
                                    ed.ViewSnapshot(overlay=heat))
    qtbot.addWidget(dialog)
    assert "Time per node" in dialog.heat.text() and dialog.options().overlay is heat
    dialog.heat.setChecked(False)
    assert dialog.options().overlay is None
    dot = ed.ExportOptionsDialog(None, tmp_path / "g.dot", chain_layout(), None,
                                 ed.ViewSnapshot(overlay=heat))
    qtbot.addWidget(dot)
    assert dot.options().overlay is None  # DOT carries no colours


def test_a_tall_graph_exports_readable_by_default(qtbot, tmp_path: Path) -> None:
    """A 3,000-box column (BERT-like): the PNG dialog picks tiles and the PDF dialog pages
    of A4, each saying what will be written, before anything is."""
    tall = grid_layout(1, 3000)
    png = ed.ExportOptionsDialog(None, tmp_path / "g.png", tall, None, ed.ViewSnapshot())
    qtbot.addWidget(png)
    assert png.tile.isChecked() and png.options().tile
    assert "tiles" in png.size_label.text()
    pdf = ed.ExportOptionsDialog(None, tmp_path / "g.pdf", tall, None, ed.ViewSnapshot())
    qtbot.addWidget(pdf)
    assert pdf.options().paginate == "A4"
    assert "pages of A4" in pdf.pages_label.text()
    pdf.paper.setCurrentIndex(0)  # one page: the dialog says it is unreadable
    assert "too small to read" in pdf.pages_label.text()
    small = ed.ExportOptionsDialog(None, tmp_path / "s.pdf", chain_layout(), None,
                                   ed.ViewSnapshot())
    qtbot.addWidget(small)
    assert small.options().paginate is None and not small.tile.isChecked()


def test_a_finished_export_with_notices_opens_no_modal(
        qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "information", lambda *a, **k: shown.append(a[2]))
    flow = ed.ExportFlow(None, None, grid_layout(1, 3000), tmp_path / "g.png",
                         ExportOptions(scale=1.0), ed.ViewSnapshot())
    with qtbot.waitSignal(flow.finished, timeout=60000) as blocker:
        flow.start()
    assert blocker.args[0].notices and shown == []


def _fan_out(width: int) -> Path:
    """x -> ``width`` parallel Relus -> Concat -> y: a graph far wider than tall."""
    from onnx import TensorProto, helper

    from tests.builders import make_model, save

    nodes = [helper.make_node("Relu", ["x"], [f"r{i}"], name=f"Relu_{i}") for i in range(width)]
    nodes.append(helper.make_node("Concat", [f"r{i}" for i in range(width)], ["y"],
                                  name="Concat", axis=0))
    graph = helper.make_graph(
        nodes, "fan", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [width, 4])])
    import tempfile

    return save(make_model(graph), Path(tempfile.mkdtemp()) / "fan.onnx")


def _laid_out(path: Path, direction: str):
    from onnxstudio.layout.build import build_layout
    from onnxstudio.layout.state import default_state
    from tests.test_layout_cache import opened

    model = opened(path)
    return model, build_layout(model.graph, default_state(model.graph), direction)


def test_the_export_turns_a_graph_when_the_other_direction_fits(qtbot, tmp_path: Path) -> None:
    """A 150-wide fan-out shown top to bottom is one 11,000 px row: the PNG dialog picks
    left to right and says why, and the image written is the turned graph; a long chain
    stays top to bottom (turned it would be longer still), and the dialog says that."""
    model, wide = _laid_out(_fan_out(150), "TB")
    assert wide.width > 8 * wide.height
    png = ed.ExportOptionsDialog(None, tmp_path / "fan.png", wide, model, ed.ViewSnapshot())
    qtbot.addWidget(png)
    assert png.options().direction == "LR"
    assert png.direction_note.text().startswith("Left to right chosen: it fits, with text")
    assert png.size_label.text().startswith("about ")
    assert png.size_label.text().endswith(" px left to right")  # fits: no limit named
    from dataclasses import replace

    flow = ed.start_export(None, model, wide, ed.ViewSnapshot(), tmp_path / "fan.png",
                           replace(png.options(), scale=0.25))  # a small image: quick
    assert flow is not None
    qtbot.waitUntil(lambda: flow.result is not None, timeout=60000)
    from PySide6.QtGui import QImage

    image = QImage(str(tmp_path / "fan.png"))
    assert image.height() > 4 * image.width()

    from tests.builders import relu_chain, save

    model, tall = _laid_out(save(relu_chain(600), tmp_path / "chain.onnx"), "TB")
    pdf = ed.ExportOptionsDialog(None, tmp_path / "chain.pdf", tall, model, ed.ViewSnapshot())
    qtbot.addWidget(pdf)
    assert pdf.options().direction is None
    assert pdf.direction_note.text().startswith("Top to bottom kept: left to right would be")
    svg = ed.ExportOptionsDialog(None, tmp_path / "fan.svg", wide, model, ed.ViewSnapshot())
    qtbot.addWidget(svg)  # no size limit: the direction shown is kept, nothing said
    assert svg.options().direction is None and svg.direction_note.isHidden()
