"""The window profiles in a child process (runner/profile_child.py): the same result as
profiling in-process, a failure comes back as the same one line, and a large result in
pieces."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from onnx import TensorProto, helper

from onnxstudio.errors import RunError
from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.runner.profile import KernelTime, NodeTime, ProfileResult, profile
from onnxstudio.runner.profile_child import (
    NODES_PER_PIECE,
    _read_answer,
    _write_answer,
    profile_isolated,
)
from tests.builders import make_model, save
from tests.conftest import REPO

SAMPLE = REPO / "resources" / "sample" / "digits_cnn.onnx"


def test_a_child_profiles_the_nodes_an_in_process_profile_does() -> None:
    request = RunRequest(SAMPLE, random=True)
    isolated = profile_isolated(request, runs=3, warmup=1)
    here = profile(request, runs=3, warmup=1)
    assert isolated.model == SAMPLE and isolated.runs == here.runs == 3
    assert sorted(n.id for n in isolated.nodes) == sorted(n.id for n in here.nodes)
    assert isolated.total_ms > 0 and isolated.source == here.source


def test_a_model_onnxruntime_refuses_is_one_line_naming_it(tmp_path: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("NoSuchOp", ["x"], ["y"], domain="example.custom")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    model = make_model(graph)
    model.opset_import.append(helper.make_opsetid("example.custom", 1))
    path = save(model, tmp_path / "custom.onnx")
    with pytest.raises(RunError) as isolated:
        profile_isolated(RunRequest(path, random=True), runs=1)
    with pytest.raises(RunError) as here:
        profile(RunRequest(path, random=True), runs=1)
    assert str(isolated.value) == str(here.value)
    assert str(isolated.value).startswith("custom.onnx: ")


def test_a_large_result_comes_back_whole_in_pieces_the_window_can_wait_between(
        tmp_path: Path) -> None:
    """One ``pickle.load`` of dag100k's 100k node times held the GIL, and froze the
    window, for 310 ms: the child writes them in pieces, read one at a time."""
    count = 2 * NODES_PER_PIECE + 7
    nodes = [NodeTime(i, f"node{i}", "Relu", 0.001 * i, [f"k{i}"], [i + 1])
             for i in range(count)]
    result = ProfileResult(SAMPLE, "random inputs", "all", "CPUExecutionProvider", 1,
                           5.0, nodes, [KernelTime("copy", "MemcpyToHost", 0.5)], {1: 0})
    path = tmp_path / "result.pickle"
    with path.open("wb") as stream:
        _write_answer(result, stream)
    with path.open("rb") as stream:
        head, total = pickle.load(stream), pickle.load(stream)
        pieces = []
        while stream.peek(1):
            pieces.append(pickle.load(stream))
    assert head.nodes == [] and total == count
    assert [len(p) for p in pieces] == [NODES_PER_PIECE, NODES_PER_PIECE, 7]
    with path.open("rb") as stream:
        back = _read_answer(stream)
    assert back == result and back.kernel_ms == pytest.approx(result.kernel_ms)
    with path.open("wb") as stream:
        _write_answer("model.onnx: onnxruntime refused it", stream)
    with path.open("rb") as stream:
        assert _read_answer(stream) == "model.onnx: onnxruntime refused it"


def test_the_child_reports_each_run_as_it_finishes() -> None:
    """dag100k's ten runs took minutes under a sweeping bar: the child says each run."""
    heard: list[tuple[int, int]] = []
    result = profile_isolated(RunRequest(SAMPLE, random=True), runs=3, warmup=1,
                              progress=lambda done, total: heard.append((done, total)))
    assert heard == [(1, 4), (2, 4), (3, 4), (4, 4)] and result.runs == 3


def test_the_profile_panel_bar_fills_run_by_run(qtbot) -> None:
    from onnxstudio.ui.insight.profile_panel import ProfileOptions
    from onnxstudio.ui.main_window import MainWindow, sample_model_path
    from tests.conftest import shown_window

    window: MainWindow = shown_window(qtbot)
    tab = window.open_paths([str(sample_model_path())])[0]
    qtbot.waitUntil(lambda: not tab.busy and tab.layout_data is not None, timeout=60000)
    seen: list[tuple[str, int]] = []
    bar = window.insight.profile_panel.job.progress
    window.insight._profiler.progress.connect(
        lambda stage, _f: seen.append((stage, bar.maximum())))
    window.insight.start_profile(ProfileOptions("all", 2, 1))
    qtbot.waitUntil(lambda: window.insight.profile_panel.result() is not None, timeout=60000)
    assert seen[-1] == ("Profiling: run 3 of 3", 1000)  # determinate, not a sweep
