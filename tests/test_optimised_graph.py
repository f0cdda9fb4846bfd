"""What onnxruntime runs: its optimised graph, saved to a temporary folder and diffed."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

import pytest
from onnx import TensorProto, helper

from onnxstudio.errors import Cancelled, RunError
from onnxstudio.model import load_model
from onnxstudio.model.diff import diff_models
from onnxstudio.runner.cancel import CancelToken
from onnxstudio.runner.optimised import discard, save_optimised, save_optimised_isolated
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


def refused_model(folder: Path) -> Path:
    """A model whose operator no onnxruntime knows."""
    node = helper.make_node("NoSuchOp", ["x"], ["y"], domain="no.such.domain")
    graph = helper.make_graph(
        [node], "bad", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    model = make_model(graph)
    model.opset_import.append(helper.make_opsetid("no.such.domain", 1))
    return save(model, folder / "bad.onnx")


def _folders() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("onnxstudio-optimised-*"))


@pytest.mark.parametrize("save_it", [save_optimised, save_optimised_isolated])
def test_a_model_onnxruntime_refuses_is_a_run_error(tmp_path, save_it):
    path = refused_model(tmp_path)
    before = _folders()
    with pytest.raises(RunError, match=r"bad\.onnx") as refused:
        save_it(path)
    assert "\n" not in str(refused.value)  # one line, the child's as the in-process one
    assert "onnxruntime cannot load this model" in str(refused.value)
    assert _folders() == before


def test_the_window_s_optimised_graph_comes_from_a_child_process(tmp_path, monkeypatch):
    """onnxruntime keeps the GIL while it creates a session (onnxruntime#27063): this
    process never creates one, and the child's graph is the one a session here writes."""
    import onnxruntime

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("an InferenceSession was created in this process")

    source = conv_bn_relu(tmp_path / "net.onnx")
    monkeypatch.setattr(onnxruntime, "InferenceSession", refuse)
    optimised = save_optimised_isolated(source, SessionConfig(optimization="basic"))
    monkeypatch.undo()
    here = save_optimised(source, SessionConfig(optimization="basic"))
    try:
        assert optimised.name == "net.basic.onnx" and optimised.parent != here.parent
        ops = [n.op_type for n in load_model(optimised, shape_inference=False).graph.nodes]
        assert ops == [n.op_type for n in load_model(here, shape_inference=False).graph.nodes]
        assert ops == ["Conv", "Relu"]  # the BatchNormalization folded into the Conv
    finally:
        discard(optimised)
        discard(here)


def test_a_cancelled_optimisation_leaves_no_folder(tmp_path):
    source = conv_bn_relu(tmp_path / "net.onnx")
    token = CancelToken()
    token.cancel()  # the window closed: the child is killed as it starts
    before = _folders()
    with pytest.raises(Cancelled):
        save_optimised_isolated(source, cancel=token)
    assert _folders() == before
