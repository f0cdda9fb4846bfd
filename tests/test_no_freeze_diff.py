"""Issue 34, File → Diff With… and Show Optimised Graph: the diff tab opens in turns, so
no turn of the window does more than a piece of it."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from onnxstudio.ui import diffing
from onnxstudio.ui.diff import diff_tab
from tests import diff_edits
from tests.builders import save, tiny_mlp
from tests.conftest import shown_window


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    edited = tiny_mlp()
    diff_edits.change_attribute(edited, "Softmax", "axis", 1)
    return save(tiny_mlp(), tmp_path / "a.onnx"), save(edited, tmp_path / "b.onnx")


def test_a_diff_tab_shows_its_progress_first_then_its_canvases_then_compares(
        monkeypatch, qtbot, tmp_path: Path) -> None:
    """The handler that opened a diff built both canvases, the changes list and the pair
    details, polished and painted them, and started the worker, whose thread took the
    GIL in the middle of that first paint (BERT-96: 35-80 ms of frozen window, 17-25 ms
    of it the window's CPU). Now the handler shows the tab with its progress page only;
    the canvases come a turn later, the list the turn after, the worker last."""
    a, b = _pair(tmp_path)
    started: list[tuple[threading.Thread, int, bool]] = []
    real = diff_tab.compute

    def noted(path_a: Path, path_b: Path, context: Any) -> diff_tab.Computed:
        started.append((threading.current_thread(), len(tab.tabs()), tab.changes.isVisible()))
        return real(path_a, path_b, context)

    monkeypatch.setattr(diff_tab, "compute", noted)
    window = shown_window(qtbot)
    tab = diffing.open_diff(window, a, b)
    assert window.tabs.currentWidget() is tab
    assert tab._stage.isVisible() and tab._stage.text().startswith("Comparing a.onnx")
    assert tab.tabs() == [] and not tab.changes.isVisible()  # nothing more this turn
    assert tab.busy and window.current_tab() is None
    qtbot.waitUntil(lambda: len(tab.tabs()) == 2)
    assert window.current_tab() is tab.side_a  # the window's panels follow side A
    qtbot.waitUntil(lambda: tab.result is not None and all(
        side.layout_data is not None and not side.busy for side in tab.tabs()), timeout=60000)
    assert [(worker is threading.main_thread(), sides, shown)
            for worker, sides, shown in started] == [(False, 2, True)]
    softmax = next(n.id for n in tab.side_b.model.graph.nodes if n.op_type == "Softmax")
    qtbot.waitUntil(lambda: tab.changes.model.rowCount() == 1)
    assert tab.changes.isVisible()
    assert [e.b.id for e in tab.changes.rows() if e.b is not None] == [softmax]


def test_a_diff_tab_closed_before_its_worker_starts_never_starts_it(
        monkeypatch, qtbot, tmp_path: Path) -> None:
    """Closed in the turn it opened (a double click on Close), the tab's queued turns
    make nothing and compare nothing."""
    a, b = _pair(tmp_path)
    started: list[Path] = []
    monkeypatch.setattr(diff_tab, "compute", lambda path_a, *_: started.append(path_a))
    window = shown_window(qtbot)
    tab = diffing.open_diff(window, a, b)
    window.close_tab(window.tabs.indexOf(tab))
    qtbot.wait(100)
    assert started == [] and window.tabs.count() == 0


def test_overlapping_quiet_builds_keep_the_collector_off_until_the_last_ends() -> None:
    """A diff's comparison ran beside another quiet task (the Cost dock's count) that
    ended first and turned the collector on under it: dag100k's comparison then ran six
    full collections of the whole heap, 340-500 ms each with the GIL held, the window
    frozen for each. The collector stays off until the last quiet build ends."""
    import gc

    from onnxstudio.concurrency.collector import quiet_collector

    was_on = gc.isenabled()
    try:
        gc.enable()
        count, compare = quiet_collector(), quiet_collector()
        count.__enter__()
        compare.__enter__()
        count.__exit__(None, None, None)  # the count ends first
        assert not gc.isenabled()  # the comparison is still building
        compare.__exit__(None, None, None)
        assert gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        if not was_on:
            gc.disable()


def test_a_comparison_frees_its_big_maps_in_pieces(monkeypatch, tmp_path: Path) -> None:
    """Dropped at once, the matching's wiring and fingerprints, the producers' maps and
    the merged graph's reader lists each went in one chain of deallocations holding the
    GIL (dag100k's diff: 63, 23 and 19 ms on its worker, the window frozen meanwhile).
    Each is emptied in pieces by ``dismantle``, and the diff is the same."""
    from onnxstudio.concurrency import gil_runs
    from onnxstudio.model import diff, diff_match, diff_merge, diff_nodes
    from onnxstudio.model.open import open_model

    freed: list[str] = []

    def noted(*parts: object) -> None:
        freed.extend(type(p).__name__ for p in parts)
        gil_runs.dismantle(*parts)

    for module in (diff, diff_match, diff_merge, diff_nodes):
        monkeypatch.setattr(module, "dismantle", noted)
    models = []
    for path in _pair(tmp_path):
        model, shapes = open_model(path)
        shapes.cancel()  # the reader's types are enough here
        models.append(model)
    result = diff.diff_models(*models)
    merged, statuses = diff_merge.merged_model(result)
    assert sorted(freed) == ["_Side", "_Side", "_Wiring", "_Wiring", "dict", "dict", "dict",
                             "set", "set"]
    assert [e.op_type for e in result.nodes if e.status == "changed"] == ["Softmax"]
    assert sorted(set(statuses.values())) == ["changed", "matched"]
    relu = next(n for n in merged.graph.nodes if n.op_type == "Relu")
    assert merged.graph.values[relu.inputs[0]].consumers  # readers kept as tuples
