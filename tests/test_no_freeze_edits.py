"""Issue 34, edits and diffs: what lands with them is spread over turns of the event loop
(the canvas first, the panels a turn later), so no one handler freezes the window."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from onnxstudio.ui import tasks
from tests.builders import relu_chain, save
from tests.conftest import opened_tab, shown_window


def _quiet() -> bool:
    """No task runs and no turn is queued."""
    return not tasks._turns and not tasks.any_busy()


def test_an_edit_lands_on_the_canvas_first_and_fills_the_panels_a_turn_later(
        qtbot, monkeypatch, tmp_path: Path) -> None:
    """The rebuilt model's landing swapped the tab's model and refilled every panel in
    one handler (dag100k: 40 ms of the GUI thread, BERT-96 28 ms): the panels now fill
    in a turn of their own, after that handler has returned."""
    window = shown_window(qtbot)
    tab = opened_tab(qtbot, window, save(relu_chain(30), tmp_path / "chain.onnx"))
    landed: list[object] = []  # the models whose landing handler has returned
    window.edits.modelEdited.connect(lambda _tab, rebuilt: landed.append(rebuilt.model))
    shown: list[tuple[object, bool]] = []  # (model, its landing handler had returned)
    fill = window.show_in_panels

    def show_in_panels(tab_: object, model: object) -> None:
        shown.append((model, model in landed))
        fill(tab_, model)  # type: ignore[arg-type]

    monkeypatch.setattr(window, "show_in_panels", show_in_panels)
    window.edits.apply([{"op": "set_metadata", "key": "edited_by", "value": "a test"}])
    edits = window.edits.controllers[tab]
    try:
        qtbot.waitUntil(lambda: bool(landed) and not edits.busy and _quiet(), timeout=30000)
        assert [returned for model, returned in shown if model is landed[-1]] == [True]
        assert window.inspector.model.tree.find_row("edited_by", "Metadata") is not None
        assert window.docks["history"].isVisible()  # the first edit shows the history
    finally:
        edits.stack.setClean()  # closing asks nothing


def _pixel_rows(rows: np.ndarray, scale: float) -> set[tuple[float, ...]]:
    """The pixels each row starts and ends in."""
    return set(map(tuple, np.floor(rows * scale).tolist()))


def test_a_far_paint_draws_each_pixel_path_once(shown_view) -> None:
    """Fitted into a diff's side, BERT-96's layout handed Qt 31k route segments, most of
    them inside one pixel or drawn over each other (10-40 ms of a side's first paint):
    a far paint draws each line of pixels once (a dot for a segment inside one pixel),
    and every one of them."""
    from tests.render_support import grid_layout

    shown_view.set_layout(grid_layout(12_000, columns=3), keep_view=False)
    shown_view.fit()
    scale = shown_view.current_scale()
    shown_view.viewport().repaint()
    surface = shown_view._surface
    assert surface is not None
    drawn: list[np.ndarray] = []
    real = surface.lines
    surface.lines = lambda rows, stroke: (drawn.append(rows), real(rows, stroke))
    shown_view.viewport().repaint()
    every = shown_view.index().segments_in(None)
    assert len(drawn) == 1 and drawn[0].flags.c_contiguous
    assert len(drawn[0]) < len(every) / 2
    assert _pixel_rows(drawn[0], scale) == _pixel_rows(every, scale)


def test_a_diff_side_lands_and_the_panels_follow_a_turn_later(
        qtbot, monkeypatch, tmp_path: Path) -> None:
    """A diff's side landing refilled every panel in its landing handler (16-26 ms of
    BERT-96's diff and optimised graph): the panels follow in a turn of their own."""
    from onnxstudio.ui import diffing
    from onnxstudio.ui.canvas.landing import Landing

    landing = [False]  # inside a side's landing handler
    land = Landing._land

    def watched_land(self: Landing, opened: object) -> None:
        landing[0] = True
        try:
            land(self, opened)  # type: ignore[arg-type]
        finally:
            landing[0] = False

    monkeypatch.setattr(Landing, "_land", watched_land)
    window = shown_window(qtbot)
    shown: list[tuple[object, bool]] = []  # (model, shown inside a landing handler)
    fill = window.show_in_panels

    def show_in_panels(tab_: object, model: object) -> None:
        shown.append((model, landing[0]))
        fill(tab_, model)  # type: ignore[arg-type]

    monkeypatch.setattr(window, "show_in_panels", show_in_panels)
    diff = diffing.open_diff(window, save(relu_chain(30), tmp_path / "a.onnx"),
                             save(relu_chain(31), tmp_path / "b.onnx"))
    qtbot.waitUntil(lambda: all(side.model is not None and not side.busy
                                for side in diff.tabs()) and _quiet(), timeout=30000)
    side = window.current_tab()
    assert side is diff.side_a and side.model is not None
    assert any(model is side.model for model, _ in shown)
    assert [model for model, inside in shown if inside] == []
    name = window.inspector.model.tree.find_row("Name", "File")
    assert name is not None and name.text(1) == "a.onnx"  # the panels show side A


def test_a_diffs_changes_are_listed_once_its_canvases_are_laid_out(
        qtbot, tmp_path: Path) -> None:
    """The list's first paint is a few Python calls per cell, each waiting for the GIL
    while the sides' workers lay them out (BERT-96's optimised graph: 80-230 ms gaps
    with none of the window's CPU in them): the rows come once no side is busy."""
    from onnxstudio.ui import diffing
    from tests import diff_edits
    from tests.builders import tiny_mlp

    edited = tiny_mlp()
    diff_edits.remove_node(edited, "Relu")
    window = shown_window(qtbot)
    diff = diffing.open_diff(window, save(tiny_mlp(), tmp_path / "a.onnx"),
                             save(edited, tmp_path / "b.onnx"))
    filled: list[bool] = []  # for each fill of the list: was a side still busy
    diff.changes.model.modelReset.connect(lambda: filled.append(
        diff.changes.model.rowCount() > 0 and (diff.side_a.busy or diff.side_b.busy)))
    qtbot.waitUntil(lambda: diff.changes.model.rowCount() == 1 and _quiet(), timeout=30000)
    assert filled and not any(filled)
    assert [e.op_type for e in diff.changes.rows()] == ["Relu"]


def test_an_edited_models_costs_are_counted_once_its_tab_is_laid_out(
        qtbot, monkeypatch, tmp_path: Path) -> None:
    """With the Cost dock showing, an edit counted the new model's costs at once and its
    table landed while the re-layout's worker held the GIL: every cell Qt measured and
    painted waited for it (BERT-96: gaps of 0.4-0.9 s). The count starts once the tab
    is idle, and the table shows the edited model."""
    window = shown_window(qtbot)
    tab = opened_tab(qtbot, window, save(relu_chain(30), tmp_path / "chain.onnx"))
    window.commands["cost"].trigger()
    panel = window.cost.cost_panel
    qtbot.waitUntil(lambda: panel.result() is not None and not panel.busy and _quiet(),
                    timeout=30000)
    started: list[bool] = []  # for each count: was the tab busy when it started
    start = window.cost.start_cost

    def watched(dims_text: str | None = None) -> None:
        started.append(tab.busy)
        start(dims_text)

    monkeypatch.setattr(window.cost, "start_cost", watched)
    window.edits.edit_key(f"node-name:{tab.model.graph.nodes[0].id}", "renamed")
    edits = window.edits.controllers[tab]
    try:
        qtbot.waitUntil(lambda: not edits.busy and _quiet() and panel.result() is not None
                        and tab.model.graph.nodes[0].name == "renamed", timeout=30000)
        assert started and not any(started)
        names = {panel.node_model.rows[r].name for r in range(panel.node_model.rowCount())}
        assert "renamed" in names
    finally:
        edits.stack.setClean()  # closing asks nothing


def test_an_edit_committed_while_its_model_is_parsed_lands_once_parsed(
        qtbot, monkeypatch, tmp_path: Path) -> None:
    """An edit committed before the prefetch's parse was done waited for the rest of it
    in the handler (dag100k: up to 163 ms of a frozen window): the edit returns at once
    and is applied when the parse is done, in order with the next ones, one undo step
    each."""
    import threading

    from onnxstudio.model.edit import EditSession
    from onnxstudio.ui.edit import controller

    parse = threading.Event()
    order: list[str] = []
    real_open = EditSession.open

    def slow_open(path: object) -> EditSession:
        parse.wait(10)  # the old code waited here, in the handler
        order.append("parsed")
        return real_open(path)  # type: ignore[arg-type]

    monkeypatch.setattr(controller.EditSession, "open", staticmethod(slow_open))
    window = shown_window(qtbot)
    tab = opened_tab(qtbot, window, save(relu_chain(30), tmp_path / "chain.onnx"))
    first, second = tab.model.graph.nodes[0], tab.model.graph.nodes[1]
    window.edits.prefetch()
    window.edits.edit_key(f"node-name:{first.id}", "renamed")
    window.edits.edit_key(f"node-name:{second.id}", "renamed_too")
    order.append("returned")
    edits = window.edits.controllers[tab]
    try:
        assert edits.busy and edits.modified and tab.model.graph.nodes[0].name != "renamed"
        parse.set()
        qtbot.waitUntil(lambda: not edits.busy and _quiet() and tab.model is not None
                        and tab.model.graph.nodes[1].name == "renamed_too", timeout=30000)
        assert order == ["returned", "parsed"]
        assert tab.model.graph.nodes[0].name == "renamed"
        assert edits.stack.count() == 2 and edits.stack.canUndo()
    finally:
        parse.set()
        edits.stack.setClean()  # closing asks nothing


def test_the_panels_following_an_edit_leave_the_canvas_unpainted(qtbot,
                                                                  tmp_path: Path) -> None:
    """The panels refill with each edit's model, and the search panel's (no query, no
    matches) repainted the whole canvas for nothing: BERT-96's 15 ms, in the turn that
    fills the panels. The canvas paints only when its matches change."""
    from PySide6.QtCore import QEvent, QObject

    window = shown_window(qtbot)
    tab = opened_tab(qtbot, window, save(relu_chain(30), tmp_path / "chain.onnx"))
    qtbot.waitUntil(_quiet, timeout=30000)
    qtbot.wait(100)
    paints: list[int] = []

    class Paints(QObject):
        def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint:
                paints.append(1)
            return False

    counter = Paints()
    tab.view.viewport().installEventFilter(counter)
    window.inspector.search.set_model(tab.model)  # as each edit's model is shown
    qtbot.wait(100)
    assert paints == []
    window.inspector.search.edit.setText(tab.model.graph.nodes[3].name)
    window.inspector.search.run_search()
    qtbot.waitUntil(lambda: bool(paints), timeout=5000)  # a match is ringed
    assert tab.view.highlighted_ids() == {tab.model.graph.nodes[3].id}


def test_a_bert12_sized_edit_is_checked_in_a_child(qtbot, monkeypatch,
                                                    tmp_path: Path) -> None:
    """Above 400 nodes (as the open's shape inference) an edit's checks, trial run and
    shapes go to the child: BERT-12's 1,088 nodes were checked on the worker, whose
    checker, inference and onnxruntime session held the GIL 12-42 ms a call. The window's
    process runs none of them, and the edit lands checked."""
    import onnxruntime

    from onnxstudio.model import open as model_open
    from onnxstudio.runner import edit_check

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("checked in the window's process")

    window = shown_window(qtbot)
    tab = opened_tab(qtbot, window, save(relu_chain(500), tmp_path / "chain.onnx"))
    monkeypatch.setattr(edit_check, "check_edited", refuse)
    monkeypatch.setattr(model_open, "infer_shapes", refuse)
    monkeypatch.setattr(onnxruntime, "InferenceSession", refuse)
    edits = window.edits.controller(tab)
    window.edits.edit_key(f"node-name:{tab.model.graph.nodes[0].id}", "renamed")
    try:
        qtbot.waitUntil(lambda: not edits.busy and _quiet() and tab.model is not None
                        and tab.model.graph.nodes[0].name == "renamed", timeout=30000)
        assert edits.report.ok and not edits.report.cannot_run
        assert "renamed" in {e.name for e in tab.model.graph.nodes}
    finally:
        edits.stack.setClean()  # closing asks nothing
