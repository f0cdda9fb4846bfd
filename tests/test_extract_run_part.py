"""runner.cut_check: a part runs on the full model's values at the cut and agrees with it."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest

from onnxstudio.errors import RunError
from onnxstudio.model import load_model
from onnxstudio.model.cut import cut_from_nodes, cut_from_tensors, write_cut
from onnxstudio.runner.cut_check import run_part
from tests.conftest import ladder_model, shared_model


def test_cnn_part_matches(tmp_path: Path) -> None:
    model = load_model(shared_model("zoo/onnx_light/light_squeezenet.onnx"))
    concats = [n.outputs[0] for n in model.graph.nodes if n.op_type == "Concat"]
    cut = cut_from_tensors(model, [concats[2]], [concats[4]])
    written = write_cut(model, cut, tmp_path / "fires.onnx")
    checks = run_part(model.path, written.path)
    assert [c.name for c in checks] == [concats[4]]
    assert all(c.matches for c in checks) and checks[0].max_abs_diff < 1e-4


def test_external_data_part_matches(tmp_path: Path) -> None:
    model = load_model(ladder_model("hf_bert12_dynamo.onnx"))
    cut = cut_from_nodes(model, [f"n{i}" for i in range(90, 130)])
    written = write_cut(model, cut, tmp_path / "part.onnx", external=True)
    assert written.data_path is not None
    checks = run_part(model.path, written.path)
    assert checks and all(c.matches for c in checks), [c.describe() for c in checks]


def test_a_different_part_is_caught(tmp_path: Path) -> None:
    """A part whose computation was altered no longer matches: the check has teeth."""
    model = load_model(shared_model("zoo/mnist/mnist.onnx"))
    relu = next(n for n in model.graph.nodes if n.op_type == "Relu")
    cut = cut_from_nodes(model, [relu.id])
    written = write_cut(model, cut, tmp_path / "relu.onnx")
    proto = onnx.load(str(written.path))
    proto.graph.node[0].op_type = "Sigmoid"
    onnx.save(proto, str(written.path))
    (check,) = run_part(model.path, written.path)
    assert not check.matches and "DIFFERS" in check.describe()


def test_unrelated_part_is_refused(tmp_path: Path) -> None:
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Relu", ["zz"], ["yy"])], "g",
                              [helper.make_tensor_value_info("zz", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("yy", TensorProto.FLOAT, [1])])
    other = tmp_path / "other.onnx"
    onnx.save(helper.make_model(graph, ir_version=9,
                                opset_imports=[helper.make_opsetid("", 17)]), str(other))
    with pytest.raises(RunError, match=r"has no tensor 'zz': is this part cut from it\?"):
        run_part(shared_model("zoo/mnist/mnist.onnx"), other)
