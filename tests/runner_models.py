"""Generated models for the runner tests (slow, refused, super-resolution-like)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from tests.builders import make_model, save


def slow_model(path: Path, size: int = 1024, depth: int = 400) -> Path:
    """x[size,size] -> (MatMul W -> Tanh) x depth: seconds of work, cancellable between nodes."""
    w = np.random.default_rng(0).standard_normal((size, size)).astype(np.float32) / size**0.5
    nodes = []
    prev = "x"
    for i in range(depth):
        nodes.append(helper.make_node("MatMul", [prev, "W"], [f"m{i}"]))
        nodes.append(helper.make_node("Tanh", [f"m{i}"], [f"t{i}"]))
        prev = f"t{i}"
    nodes.append(helper.make_node("Identity", [prev], ["y"]))
    graph = helper.make_graph(
        nodes, "slow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [size, size])],
        initializer=[numpy_helper.from_array(w, "W")])
    return save(make_model(graph), path)


def refused_model(path: Path) -> Path:
    """A valid protobuf with an operator onnxruntime does not know."""
    graph = helper.make_graph(
        [helper.make_node("FrobnicateTensor", ["x"], ["y"], domain="com.example.bogus")],
        "refused",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])])
    model = make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                             helper.make_opsetid("com.example.bogus", 1)])
    return save(model, path)


def upscale_y_model(path: Path, factor: int = 3) -> Path:
    """Super-resolution-shaped: Y[1,1,H,W] -> Resize(x factor) -> Y[1,1,fH,fW]."""
    scales = numpy_helper.from_array(np.array([1, 1, factor, factor], np.float32), "scales")
    graph = helper.make_graph(
        [helper.make_node("Resize", ["input", "", "scales"], ["output"], mode="linear")],
        "upscale",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 1, "h", "w"])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 1, "H", "W"])],
        initializer=[scales])
    return save(make_model(graph), path)


def nhwc_uint8_model(path: Path) -> Path:
    """uint8 NHWC image in, its mean per channel out (float)."""
    graph = helper.make_graph(
        [helper.make_node("Cast", ["image"], ["f"], to=TensorProto.FLOAT),
         helper.make_node("ReduceMean", ["f", "axes"], ["y"], keepdims=0)],
        "nhwc",
        [helper.make_tensor_value_info("image", TensorProto.UINT8, [1, "h", "w", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
        initializer=[numpy_helper.from_array(np.array([1, 2], np.int64), "axes")])
    return save(make_model(graph), path)
