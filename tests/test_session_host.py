"""The window runs a big model's session in a child process (runner/session_host.py):
the same answer as in-process, no onnxruntime session in the window's process, one
child per model kept between runs and ended with its tab; cancel, a model onnxruntime
refuses and a child that dies each give one line, and the window runs the next request.

``HOST_BYTES`` is lowered to 0 so the small models here count as big."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from onnxstudio.resources import resource
from onnxstudio.runner import session_host
from onnxstudio.runner.pipeline import ImageSource, Pipeline, RunRequest
from tests.conftest import opened_tab, shown_window
from tests.runner_models import refused_model, slow_model

TIMEOUT = 60_000
SAMPLE = resource("sample", "digits_cnn.onnx")
DIGIT = resource("sample", "digit_7.png")



@pytest.fixture(scope="module")
def slow(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 MatMul+Tanh on 512x512: a run is still going when the test cancels it."""
    return slow_model(tmp_path_factory.mktemp("host") / "slow.onnx", size=512, depth=60)


def _hosts(window: Any) -> dict[Path, int]:
    return window.run_panel.controller._worker.pipeline.hosts.pids()


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie nobody reaped yet has ended too
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


def _run_image(qtbot: Any, window: Any) -> str:
    panel = window.run_panel
    with qtbot.waitSignal(panel.runFinished, timeout=TIMEOUT):
        panel.open_images([DIGIT])
    return str(panel.results.top_table.item(0, 0).text())


def test_a_big_models_run_is_the_in_process_answer_from_a_child_kept_for_the_next(
        qtbot: Any, created: list[Any]) -> None:
    here = Pipeline()
    session_host.HOST_BYTES = 1 << 62  # this one in-process: the answer to match
    expected = here.execute(RunRequest(SAMPLE, images=[ImageSource("7", DIGIT)]))[0].top1()
    session_host.HOST_BYTES = 0
    created.clear()
    window = shown_window(qtbot)
    tab = opened_tab(qtbot, window, SAMPLE)
    assert expected is not None
    assert _run_image(qtbot, window) == expected[0] == "7"
    assert created == []  # no onnxruntime session in the window's process
    (pid,) = _hosts(window).values()
    assert pid != os.getpid() and not _gone(pid)
    assert _run_image(qtbot, window) == "7"  # the second run: the same child, no creation
    assert _hosts(window) == {SAMPLE: pid} and created == []
    assert window.run_panel.results.latency_label.text().startswith("Latency ")

    window.close_tab(window.tabs.indexOf(tab))
    qtbot.waitUntil(lambda: _gone(pid), timeout=TIMEOUT)
    assert _hosts(window) == {}


def test_cancel_stops_the_childs_run_and_the_window_runs_the_next(
        qtbot: Any, created: list[Any], slow: Path) -> None:
    window = shown_window(qtbot)
    opened_tab(qtbot, window, slow)
    panel = window.run_panel
    panel.run_random()
    qtbot.waitUntil(lambda: "Running" in panel.controls.status_label.text(), timeout=TIMEOUT)
    (pid,) = _hosts(window).values()
    panel.cancel()
    assert panel.controls.status_label.text() == "Cancelled"
    assert panel.error_text() == ""
    qtbot.wait(300)
    assert _hosts(window) == {slow: pid}  # the run stopped, the session kept for the next
    opened_tab(qtbot, window, SAMPLE)
    assert _run_image(qtbot, window) == "7"
    assert created == []


def test_a_refused_model_is_the_in_process_line_and_the_window_runs_the_next(
        qtbot: Any, created: list[Any], tmp_path: Path) -> None:
    refused = refused_model(tmp_path / "refused.onnx")
    window = shown_window(qtbot)
    opened_tab(qtbot, window, refused)
    panel = window.run_panel
    with qtbot.waitSignal(panel.runFailed, timeout=TIMEOUT) as failed:
        panel.run_random()
    line = failed.args[0]
    assert line.startswith("refused.onnx: onnxruntime cannot load this model")
    assert "FrobnicateTensor" in line and "\n" not in line
    session_host.HOST_BYTES = 1 << 62
    with pytest.raises(Exception) as here:
        Pipeline().execute(RunRequest(refused, random=True))
    assert str(here.value) == line  # word for word what the in-process run says
    session_host.HOST_BYTES = 0
    opened_tab(qtbot, window, SAMPLE)
    assert _run_image(qtbot, window) == "7"


def test_a_child_that_dies_mid_run_is_one_line_and_the_next_run_starts_another(
        qtbot: Any, created: list[Any], slow: Path) -> None:
    window = shown_window(qtbot)
    opened_tab(qtbot, window, slow)
    panel = window.run_panel
    panel.run_random()
    qtbot.waitUntil(lambda: "Running" in panel.controls.status_label.text(), timeout=TIMEOUT)
    (pid,) = _hosts(window).values()
    with qtbot.waitSignal(panel.runFailed, timeout=TIMEOUT) as failed:
        os.kill(pid, signal.SIGKILL)  # as onnxruntime crashing would end it
    assert failed.args[0] == "slow.onnx: onnxruntime's process stopped (killed by SIGKILL)"
    assert panel.error_text().startswith("slow.onnx: onnxruntime's process stopped")
    opened_tab(qtbot, window, SAMPLE)
    assert _run_image(qtbot, window) == "7"
    assert pid not in _hosts(window).values() and created == []
