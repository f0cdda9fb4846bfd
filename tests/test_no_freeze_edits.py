"""Issue 34, edits and diffs: what lands with them is spread over turns of the event loop
(the canvas first, the panels a turn later), so no one handler freezes the window."""

from __future__ import annotations

from pathlib import Path

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
