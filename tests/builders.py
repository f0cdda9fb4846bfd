"""Small generated models for tests, with an IR version onnxruntime accepts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# onnx's newest IR can be newer than onnxruntime's; pin one both accept.
IR_VERSION = 10
OPSET = 21


def make_model(graph: onnx.GraphProto, opset: int = OPSET, **kwargs) -> onnx.ModelProto:
    opsets = kwargs.pop("opset_imports", [helper.make_opsetid("", opset)])
    model = helper.make_model(graph, opset_imports=opsets, **kwargs)
    model.ir_version = IR_VERSION
    return model


def save(model: onnx.ModelProto, path: Path) -> Path:
    onnx.save(model, str(path))
    return path


def tiny_mlp(with_scopes: bool = True) -> onnx.ModelProto:
    """x[1,4] -> MatMul(W1) -> Add(b1) -> Relu -> MatMul(W2) -> Softmax -> y[1,3]."""
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((4, 8)).astype(np.float32), "W1")
    b1 = numpy_helper.from_array(np.zeros(8, np.float32), "b1")
    w2 = numpy_helper.from_array(rng.standard_normal((8, 3)).astype(np.float32), "W2")
    p = "/layer1/" if with_scopes else ""
    q = "/head/" if with_scopes else ""
    nodes = [
        helper.make_node("MatMul", ["x", "W1"], ["h0"], name=f"{p}MatMul"),
        helper.make_node("Add", ["h0", "b1"], ["h1"], name=f"{p}Add"),
        helper.make_node("Relu", ["h1"], ["h2"], name=f"{p}Relu"),
        helper.make_node("MatMul", ["h2", "W2"], ["logits"], name=f"{q}MatMul"),
        helper.make_node("Softmax", ["logits"], ["y"], name=f"{q}Softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])],
        initializer=[w1, b1, w2],
    )
    return make_model(graph, producer_name="onnxstudio-tests")


def relu_chain(count: int, bad: bool = False) -> onnx.ModelProto:
    """x[2,8] -> Relu ×count (scoped names) -> y; ``bad``: a final Add of mismatched shapes."""
    nodes = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"/block.{i // 20}/Relu_{i}")
             for i in range(count)]
    nodes[0].input[0] = "x"
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])]
    if bad:
        inputs.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, [3, 5]))
        nodes.append(helper.make_node("Add", [f"v{count}", "z"], ["sum"], name="/head/Add"))
    out = "sum" if bad else f"v{count}"
    graph = helper.make_graph(nodes, "chain", inputs,
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)])
    return make_model(graph)


def bert_like(path: Path, layers: int = 4, prefix: str = "/encoder", norms: bool = False,
              scores: bool = False) -> Path:
    """Scoped MatMuls (and, with ``norms``, LayerNormalizations; with ``scores``, a
    second MatMul named as the attention scores', ".../attention/self/MatMul") with
    weights, named as a BERT export's: long node names that keep a layer index."""
    nodes, weights, value = [], [], "x"
    ones = numpy_helper.from_array(np.ones(64, dtype=np.float32), "ones")
    for i in range(layers):
        scope = f"{prefix}/layer.{i}/attention/self/query"
        w = f"encoder.layer.{i}.attention.self.query.weight"
        weights.append(numpy_helper.from_array(np.eye(64, dtype=np.float32), w))
        nodes.append(helper.make_node("MatMul", [value, w], [f"{scope}/MatMul_output_0"],
                                      name=f"{scope}/MatMul"))
        value = f"{scope}/MatMul_output_0"
        if scores:
            name = f"{prefix}/layer.{i}/attention/self/MatMul"
            nodes.append(helper.make_node("MatMul", [value, w], [f"{name}_output_0"],
                                          name=name))
            value = f"{name}_output_0"
        if norms:
            norm = f"{prefix}/layer.{i}/output/LayerNorm/LayerNormalization"
            nodes.append(helper.make_node("LayerNormalization", [value, "ones", "ones"],
                                          [f"{norm}_output_0"], name=norm))
            value = f"{norm}_output_0"
    graph = helper.make_graph(
        nodes, "bert_like", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info(value, TensorProto.FLOAT, [1, 64])],
        initializer=[*weights, ones] if norms else weights)
    return save(make_model(graph), path)
