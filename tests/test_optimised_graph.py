"""What onnxruntime runs: its optimised graph, saved to a temporary folder and diffed."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

import pytest
from onnx import TensorProto, helper

from onnxstudio.errors import RunError
from onnxstudio.model import load_model
from onnxstudio.model.diff import diff_models
from onnxstudio.runner.optimised import discard, save_optimised
from onnxstudio.runner.session import SessionConfig
from tests.builders import make_model, save
from tests.diff_edits import conv_bn_relu


def test_optimised_graph_goes_to_a_temporary_folder_and_shows_the_fusion(tmp_path):
    source = conv_bn_relu(tmp_path / "net.onnx")
    optimised = save_optimised(source, SessionConfig(optimization="basic"))
    try:
        assert optimised.parent.parent == Path(tempfile.gettempdir())
        assert sorted(p.name for p in tmp_path.iterdir()) == ["net.onnx"]  # nothing beside
        result = diff_models(load_model(source, shape_inference=False),
                             load_model(optimised, shape_inference=False))
        # the BatchNormalization is folded into the Conv's weights and bias
        assert [e.op_type for e in result.nodes if e.status == "removed"] == ["BatchNormalization"]
        [conv] = [e for e in result.nodes if e.op_type == "Conv"]
        assert conv.status == "changed"
        assert Counter(c.kind for c in conv.changes)["weight"] == 1
        assert [e.status for e in result.nodes if e.op_type == "Relu"] == ["matched"]
        [bn] = [e for e in result.nodes if e.status == "removed"]
        assert result.absorbed_by(bn) is conv.b  # folded into the Conv before it
        assert result.absorbed_by(conv) is None  # only removed nodes are absorbed
    finally:
        discard(optimised)
    assert not optimised.parent.exists()


def test_discard_leaves_other_folders_alone(tmp_path):
    keep = tmp_path / "model.onnx"
    keep.write_bytes(b"x")
    discard(keep)
    assert keep.exists()


def test_a_model_onnxruntime_refuses_is_a_run_error(tmp_path):
    node = helper.make_node("NoSuchOp", ["x"], ["y"], domain="no.such.domain")
    graph = helper.make_graph(
        [node], "bad", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    model = make_model(graph)
    model.opset_import.append(helper.make_opsetid("no.such.domain", 1))
    path = save(model, tmp_path / "bad.onnx")
    before = set(Path(tempfile.gettempdir()).glob("onnxstudio-optimised-*"))
    with pytest.raises(RunError, match=r"bad\.onnx"):
        save_optimised(path)
    assert set(Path(tempfile.gettempdir()).glob("onnxstudio-optimised-*")) == before
