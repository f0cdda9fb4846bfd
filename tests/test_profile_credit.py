"""Every kernel of an optimised run is credited to model nodes: float16 casts around NCHWc
Convs, int8 layout reorders, transformer fusions (Gelu, FusedMatMul, Gemm reshapes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic
from onnxruntime.transformers.float16 import convert_float_to_float16

from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.runner.profile import ProfileResult, profile
from onnxstudio.runner.session import SessionConfig
from tests.builders import make_model, save
from tests.conftest import ladder_model


def _classifier() -> onnx.ModelProto:
    """x[1,16,32,32] -> 3 x (Conv, BatchNormalization, Relu) -> MaxPool -> GlobalAveragePool ->
    Flatten -> Gemm -> Softmax: the shape of a small image classifier."""
    rng = np.random.default_rng(0)
    inits, nodes, x = [], [], "x"
    for k in range(3):
        inits += [numpy_helper.from_array(rng.standard_normal((16, 16, 3, 3)).astype(np.float32)
                                          * 0.1, f"w{k}"),
                  numpy_helper.from_array(np.ones(16, np.float32), f"s{k}"),
                  numpy_helper.from_array(np.zeros(16, np.float32), f"b{k}"),
                  numpy_helper.from_array(np.zeros(16, np.float32), f"m{k}"),
                  numpy_helper.from_array(np.ones(16, np.float32), f"v{k}")]
        nodes += [helper.make_node("Conv", [x, f"w{k}"], [f"c{k}"], name=f"conv{k}", pads=[1] * 4),
                  helper.make_node("BatchNormalization", [f"c{k}", f"s{k}", f"b{k}", f"m{k}",
                                                          f"v{k}"], [f"n{k}"], name=f"bn{k}"),
                  helper.make_node("Relu", [f"n{k}"], [f"r{k}"], name=f"relu{k}")]
        x = f"r{k}"
    inits += [numpy_helper.from_array(rng.standard_normal((10, 16)).astype(np.float32), "fc"),
              numpy_helper.from_array(np.zeros(10, np.float32), "fcb")]
    nodes += [helper.make_node("MaxPool", [x], ["max"], name="maxpool", kernel_shape=[2, 2],
                               strides=[2, 2]),
              helper.make_node("GlobalAveragePool", ["max"], ["pool"], name="pool"),
              helper.make_node("Flatten", ["pool"], ["flat"], name="flatten"),
              helper.make_node("Gemm", ["flat", "fc", "fcb"], ["logits"], name="fc", transB=1),
              helper.make_node("Softmax", ["logits"], ["prob"], name="softmax")]
    graph = helper.make_graph(
        nodes, "classifier",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 32, 32])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 10])], inits)
    return make_model(graph, opset=17)


def _profile(path: Path) -> ProfileResult:
    request = RunRequest(path, random=True, config=SessionConfig(optimization="all"))
    return profile(request, runs=2)


def _mapped_share(result: ProfileResult) -> float:
    return sum(n.time_ms for n in result.nodes) / result.kernel_ms


def _conv_credits(result: ProfileResult, model: onnx.ModelProto) -> dict[str, list[str]]:
    nodes = model.graph.node
    return {n.name: sorted(nodes[i].name for i in n.covers)
            for n in result.nodes if n.op_type == "Conv"}


def test_float16_classifier_credits_the_casted_nchwc_convs(tmp_path: Path) -> None:
    # onnxruntime runs float16 Convs in float32 behind inserted casts, as NCHWc kernels
    # named "InsertedPrecisionFreeCast_<value>_nchwc" between "reorder_token_*" tensors.
    fp16 = convert_float_to_float16(_classifier(), keep_io_types=True)
    path = save(fp16, tmp_path / "fp16.onnx")
    result = _profile(path)
    assert not [k.name for k in result.unmapped if "InsertedPrecisionFreeCast" in k.name]
    assert _mapped_share(result) > 0.99
    credits = _conv_credits(result, fp16)
    assert sorted(credits) == ["conv0", "conv1", "conv2"]
    for k in range(3):  # each Conv holds its folded BatchNormalization and fused Relu
        assert {f"bn{k}", f"relu{k}"} <= set(credits[f"conv{k}"])
    assert credits["conv1"] == ["bn1", "relu1"]  # and nothing past the kernels around it
    convs = next(o for o in result.op_types() if o.op_type == "Conv")
    assert convs.count == 3  # the heatmap paints the three Convs, nothing left unmapped


def test_int8_classifier_credits_layout_reorders(tmp_path: Path) -> None:
    source = save(_classifier(), tmp_path / "fp32.onnx")
    quantize_dynamic(str(source), str(tmp_path / "int8.onnx"), weight_type=QuantType.QInt8)
    result = _profile(tmp_path / "int8.onnx")
    assert not result.unmapped, [k.name for k in result.unmapped]
    # The float pools run as NCHWc after a ReorderInput and before a ReorderOutput.
    reorders = {n.name for n in result.nodes for k in n.kernels if k.startswith("Reorder")}
    assert reorders == {"maxpool", "pool"}


def test_transformer_fusions_are_credited_to_the_nodes_they_replaced() -> None:
    model_path = ladder_model("bert12.onnx")
    result = _profile(model_path)
    nodes = onnx.load(str(model_path), load_external_data=False).graph.node
    assert not result.unmapped, [k.name for k in result.unmapped][:5]
    by_kernel = {k: n for n in result.nodes for k in n.kernels}
    gelu = next(n for k, n in by_kernel.items() if k.startswith("Gelu"))
    # Gelu replaces x * 0.5 * (1 + erf(x / sqrt 2)): Div, Erf, Add and two Muls.
    assert {"Div", "Erf", "Add", "Mul"} <= {nodes[i].op_type for i in [gelu.index, *gelu.covers]}
    gemm = next(n for k, n in by_kernel.items() if k.startswith("gemm_input_reshape"))
    assert gemm.op_type == "MatMul" and [nodes[i].op_type for i in gemm.covers] == ["Add"]
    scaled = next(n for k, n in by_kernel.items() if "MatMulScaleFusion" in k)
    assert scaled.op_type == "MatMul"


@pytest.mark.parametrize("optimization", ["disable", "basic"])
def test_lower_levels_still_map_one_to_one_or_by_tensors(tmp_path: Path,
                                                         optimization: str) -> None:
    path = save(_classifier(), tmp_path / "fp32.onnx")
    request = RunRequest(path, random=True, config=SessionConfig(optimization=optimization))
    result = profile(request)
    assert not result.unmapped
    assert _mapped_share(result) == pytest.approx(1.0)


def test_resnet50_residual_add_and_relu_are_credited_to_the_conv_that_runs_them() -> None:
    # NCHWc graphs have no model tensors between kernels; the last Conv of each block
    # takes the residual as a Sum input and applies the Relu ("activation"), so the
    # GlobalAveragePool reaching back through vanished tensors must not collect them.
    model_path = ladder_model("resnet50.onnx")
    result = _profile(model_path)
    credits = _conv_credits(result, onnx.load(str(model_path), load_external_data=False))
    assert credits["/layer4/layer4.2/conv3/Conv"] == [
        "/layer4/layer4.2/Add", "/layer4/layer4.2/bn3/BatchNormalization",
        "/layer4/layer4.2/relu_out/Relu"]
    pool = next(n for n in result.nodes if n.op_type == "GlobalAveragePool")
    assert pool.covers == []
