"""The window profiles in a child process (runner/profile_child.py): the same result as
profiling in-process, and a failure comes back as the same one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from onnx import TensorProto, helper

from onnxstudio.errors import RunError
from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.runner.profile import profile
from onnxstudio.runner.profile_child import profile_isolated
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
