"""The window's Compare, tensor capture and Write Stages of a big model run in a child process
(runner/inspect_child.py): the same answer as in-process, no onnxruntime session in the
window's process, a failure as the same one line, long row lists back in runs.

``HOST_BYTES`` is lowered to 0 so the small models here count as big."""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from onnxstudio.errors import RunError
from onnxstudio.resources import resource
from onnxstudio.runner import session_host
from onnxstudio.runner.compare import Comparison, Difference, compare, parse_config
from onnxstudio.runner.inspect_child import (
    ROWS_PER_PIECE,
    read_answer,
    window_compare,
    write_answer,
)
from onnxstudio.runner.intermediates import Capture, capture, tensor_stats
from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.ui.insight.compare_options import CompareOptions
from onnxstudio.ui.tasks import TaskRunner
from tests.builders import save
from tests.conftest import opened_tab, shown_window
from tests.runner_models import refused_model
from tests.test_split import skip_mlp

SAMPLE = resource("sample", "digits_cnn.onnx")



def test_the_windows_compare_of_a_big_model_is_the_in_process_table_from_a_child(
        qtbot: Any, created: list[Any]) -> None:
    a, b = parse_config("ort:cpu:all"), parse_config("reference")
    window = shown_window(qtbot)
    opened_tab(qtbot, window, SAMPLE)
    insight = window.insight
    insight.start_compare(CompareOptions(a, b, None))
    qtbot.waitUntil(lambda: insight.compare_panel.result() is not None, timeout=60000)
    shown = insight.compare_panel.result()
    assert created == []  # every session of the compare was in the child
    session_host.HOST_BYTES = 1 << 62
    here = compare(RunRequest(SAMPLE, random=True, dim_sizes={}), a, b, None)
    assert shown.intermediates == here.intermediates and shown.outputs == here.outputs
    assert len(shown.intermediates) == 12 and shown.first_divergence is None
    assert insight.compare_panel.verdict_text() != ""


def test_a_refused_models_compare_is_the_in_process_line(created: list[Any],
                                                         tmp_path: Path) -> None:
    model = refused_model(tmp_path / "refused.onnx")
    a, b = parse_config("ort:cpu:all"), parse_config("ort:cpu:disabled")
    request = RunRequest(model, random=True)
    with pytest.raises(RunError) as there:
        window_compare(request, a, b, None, None)
    assert created == []
    session_host.HOST_BYTES = 1 << 62
    with pytest.raises(RunError) as here:
        window_compare(request, a, b, None, None)
    assert str(there.value) == str(here.value)
    assert str(there.value).startswith("refused.onnx: ")


def test_write_stages_of_a_big_model_checks_the_chain_in_a_child(
        qtbot: Any, created: list[Any], tmp_path: Path) -> None:
    window = shown_window(qtbot)
    opened_tab(qtbot, window, save(skip_mlp(), tmp_path / "skip.onnx"))
    dialog = window.split_into_stages()
    assert dialog is not None
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.plan is not None, timeout=30000)
    dialog.hide()  # no message box in a test
    with qtbot.waitSignal(dialog.written, timeout=60000) as blocker:
        dialog.write_to(tmp_path / "stages")
    _written, check = blocker.args[0]
    assert check.ok and len(check.stages) == 4
    assert "match the whole model" in dialog.summary.text()
    assert created == []
    TaskRunner.wait_all()


def test_a_long_answer_comes_back_whole_in_runs_the_window_can_wait_between() -> None:
    rows = [Difference(f"v{i}", (1,), (1,), 0.0, 0.0, 1.0, False, i)
            for i in range(2 * ROWS_PER_PIECE + 5)]
    answer = Comparison(SAMPLE, "random inputs", parse_config("ort"),
                        parse_config("reference"), 1e-3, rows[:3], rows, None, ["w"])
    stream = io.BytesIO()
    write_answer(answer, stream)
    stream.seek(0)
    head, names = pickle.load(stream)
    assert names == ["intermediates"] and head.intermediates == [] and len(head.outputs) == 3
    assert pickle.load(stream) == len(rows)
    assert [len(pickle.load(stream)) for _ in range(3)] == [ROWS_PER_PIECE, ROWS_PER_PIECE, 5]
    stream.seek(0)
    assert read_answer(stream) == answer


def test_clicking_an_edge_of_a_big_model_captures_its_tensor_in_a_child(
        qtbot: Any, created: list[Any]) -> None:
    window = shown_window(qtbot)
    tab = opened_tab(qtbot, window, SAMPLE)
    panel = window.run_panel
    with qtbot.waitSignal(panel.runFinished, timeout=60000):
        panel.open_images([resource("sample", "digit_7.png")])
    assert tab.model is not None
    conv = next(n for n in tab.model.graph.nodes if n.op_type == "Conv")
    value = conv.outputs[0]
    window.insight.edge_clicked(value)
    view = window.insight.tensor_dock.view
    qtbot.waitUntil(lambda: view.current_name() == value, timeout=60000)
    assert created == []  # the capture's sessions were in the child
    session_host.HOST_BYTES = 1 << 62
    here = capture(window.run_panel.inspection_request(), [value])
    np.testing.assert_array_equal(view.current_array(), here.values[value])
    assert view.current_array().ndim == 4


def test_a_captures_tensors_come_back_one_per_load() -> None:
    values = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.ones(4, np.int64)}
    answer = Capture("random inputs", values, {n: tensor_stats(v) for n, v in values.items()})
    stream = io.BytesIO()
    write_answer(answer, stream)
    stream.seek(0)
    head, names = pickle.load(stream)
    assert names == ["values"] and head.values == {} and set(head.stats) == {"a", "b"}
    assert pickle.load(stream) == 2
    assert [len(pickle.load(stream)) for _ in range(2)] == [1, 1]
    stream.seek(0)
    back = read_answer(stream)
    assert set(back.values) == {"a", "b"} and back.stats == answer.stats
    np.testing.assert_array_equal(back.values["a"], values["a"])


def test_cancel_kills_the_compare_child(created: list[Any], tmp_path: Path) -> None:
    import threading

    from onnxstudio.errors import Cancelled
    from onnxstudio.runner.cancel import CancelToken
    from tests.runner_models import slow_model

    slow = slow_model(tmp_path / "slow.onnx", size=512, depth=60)
    token = CancelToken()
    killed: list[int] = []
    token.watch(lambda: killed.append(1))
    timer = threading.Timer(1.5, token.cancel)
    timer.start()
    try:
        with pytest.raises(Cancelled):
            window_compare(RunRequest(slow, random=True), parse_config("ort:cpu:all"),
                           parse_config("reference"), None, None, cancel=token)
    finally:
        timer.cancel()
    assert killed and created == []
