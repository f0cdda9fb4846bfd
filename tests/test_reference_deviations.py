"""Compare against onnx's reference evaluator says when the reference itself is known to
differ from onnxruntime (opset-1..12 Softmax family on >2-D inputs) or lacks an operator
(ImageScaler): each case is a real run of both."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from onnxstudio.errors import RunError
from onnxstudio.runner.compare import compare, parse_config
from onnxstudio.runner.pipeline import RunRequest
from tests.builders import make_model, save


def _op_model(path: Path, op: str, opset: int, shape: list[int], **attrs: object) -> Path:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node(op, ["r"], ["y"], name="head", **attrs)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = make_model(graph, opset=opset)
    model.ir_version = 7
    return save(model, path)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax", "Hardmax"])
def test_old_softmax_family_on_4d_is_a_known_reference_deviation(tmp_path: Path,
                                                                  op: str) -> None:
    model = _op_model(tmp_path / "m.onnx", op, 11, [2, 3, 4, 5])
    result = compare(RunRequest(model, random=True), parse_config("ort:cpu:all"),
                     parse_config("reference"))
    first = result.first_divergence
    assert first is not None and first.op_type == op
    assert first.known.startswith(f"a known deviation of onnx's reference evaluator: {op}-11 "
                                  "flattens its 4-D input to 2-D at axis 1")
    assert result.warnings[0].startswith(f"{op} 'head': a known deviation")
    assert result.as_json()["first_divergence"]["known_deviation"] == first.known


def test_the_same_softmax_at_opset_13_agrees_and_the_last_axis_is_no_deviation(
        tmp_path: Path) -> None:
    new = _op_model(tmp_path / "new.onnx", "Softmax", 13, [2, 3, 4, 5])
    result = compare(RunRequest(new, random=True), parse_config("ort:cpu:all"),
                     parse_config("reference"))
    assert result.first_divergence is None and not result.warnings
    last = _op_model(tmp_path / "last.onnx", "Softmax", 11, [2, 3, 4, 5], axis=3)
    result = compare(RunRequest(last, random=True), parse_config("ort:cpu:all"),
                     parse_config("reference"))
    assert result.first_divergence is None


def test_imagescaler_is_a_known_gap_of_the_reference(tmp_path: Path) -> None:
    model = _op_model(tmp_path / "caffe2.onnx", "ImageScaler", 9, [1, 3, 4, 4],
                      scale=2.0, bias=[0.0, 1.0, 2.0])
    with pytest.raises(RunError) as caught:
        compare(RunRequest(model, random=True), parse_config("ort:cpu:all"),
                parse_config("reference"))
    assert str(caught.value) == (
        "caffe2.onnx: onnx's reference evaluator has no ImageScaler (onnx dropped this "
        "experimental operator; onnxruntime still runs it), a known gap: compare two "
        "onnxruntime configurations instead")
    # onnxruntime itself runs it: the gap is the reference's.
    result = compare(RunRequest(model, random=True), parse_config("ort:cpu:all"),
                     parse_config("ort:cpu:disabled"))
    assert result.first_divergence is None
    assert np.isfinite(result.outputs[0].max_abs)
