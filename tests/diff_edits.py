"""Edited copies of real models for the diff tests: renamed, one attribute, one weight,
one node removed, one inserted. Each edit returns what it touched so a test can find it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tests.builders import make_model
from tests.builders import save as save_model


def load(path: Path) -> onnx.ModelProto:
    return onnx.load(str(path))


def save(model: onnx.ModelProto, path: Path) -> Path:
    onnx.save(model, str(path))
    return path


def rename_everything(model: onnx.ModelProto) -> None:
    """Give every node and tensor (graph inputs/outputs and weights too) a new name."""
    graph = model.graph
    names: dict[str, str] = {}

    def new(name: str) -> str:
        if not name:
            return name
        return names.setdefault(name, f"renamed_{len(names)}")

    for vi in (*graph.input, *graph.output, *graph.value_info):
        vi.name = new(vi.name)
    for tensor in graph.initializer:
        tensor.name = new(tensor.name)
    for i, node in enumerate(graph.node):
        node.name = f"op_{i}"
        node.input[:] = [new(x) for x in node.input]
        node.output[:] = [new(x) for x in node.output]


def change_attribute(model: onnx.ModelProto, op_type: str, attr: str, value: object) -> str:
    """Set ``attr`` of the first ``op_type`` node; returns that node's name."""
    node = next(n for n in model.graph.node if n.op_type == op_type)
    kept = [a for a in node.attribute if a.name != attr]
    del node.attribute[:]
    node.attribute.extend([*kept, helper.make_attribute(attr, value)])
    return node.name


def perturb_weight(model: onnx.ModelProto, op_type: str) -> str:
    """Nudge one value of the weight (input 1) of the last ``op_type`` node whose weight
    no other node reads; returns the weight's name."""
    graph = model.graph
    reads: dict[str, int] = {}
    for n in graph.node:
        for x in n.input:
            reads[x] = reads.get(x, 0) + 1
    node = next(n for n in reversed(graph.node)
                if n.op_type == op_type and reads.get(n.input[1]) == 1)
    tensor = next(t for t in graph.initializer if t.name == node.input[1])
    array = numpy_helper.to_array(tensor).copy()
    array.flat[array.size // 2] += np.asarray(0.5, dtype=array.dtype)
    tensor.CopyFrom(numpy_helper.from_array(array, tensor.name))
    return tensor.name


def remove_node(model: onnx.ModelProto, op_type: str, nth: int = 0) -> str:
    """Drop the ``nth`` single-input ``op_type`` node, wiring its readers to its input."""
    graph = model.graph
    node = [n for n in graph.node if n.op_type == op_type][nth]
    source, gone = node.input[0], node.output[0]
    for other in graph.node:
        other.input[:] = [source if x == gone else x for x in other.input]
    graph.node.remove(node)
    return node.name


def insert_after(model: onnx.ModelProto, op_type: str, new_op: str, nth: int = 0) -> str:
    """Insert a one-input ``new_op`` node after the ``nth`` ``op_type`` node."""
    graph = model.graph
    index = [i for i, n in enumerate(graph.node) if n.op_type == op_type][nth]
    node = graph.node[index]
    out, fresh = node.output[0], node.output[0] + "_inserted"
    for other in graph.node:
        other.input[:] = [fresh if x == out else x for x in other.input]
    inserted = helper.make_node(new_op, [out], [fresh], name="inserted_" + new_op)
    graph.node.insert(index + 1, inserted)
    return inserted.name


def conv_bn_relu(path: Path) -> Path:
    """x → Conv → BatchNormalization → Relu → y: onnxruntime folds the BN into the Conv."""
    rng = np.random.default_rng(1)
    weights = [
        numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "W"),
        numpy_helper.from_array(np.ones(4, np.float32), "scale"),
        numpy_helper.from_array(np.zeros(4, np.float32), "bias"),
        numpy_helper.from_array(np.full(4, 0.1, np.float32), "mean"),
        numpy_helper.from_array(np.full(4, 2.0, np.float32), "var"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "W"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["b"],
                         name="bn"),
        helper.make_node("Relu", ["b"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes, "conv_bn_relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        initializer=weights)
    return save_model(make_model(graph, opset=17), path)
