"""Hostile models for the hardening tests and the fuzz test: each is a recipe of issue 16."""

from __future__ import annotations

import contextlib
import io
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onnxstudio import cli
from tests.builders import make_model, save, tiny_mlp

SECRET = b"root:x:0:0:secret outside the model folder\n" * 8


@dataclass
class CliResult:
    code: int
    out: str
    err: str


def run_cli(*args: str | Path) -> CliResult:
    """The CLI's main in this process, stdout and stderr captured (no subprocess)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in args])
    return CliResult(code, out.getvalue(), err.getvalue())


def external(tensor: TensorProto, location: str, **info: str) -> TensorProto:
    """Turn ``tensor`` into a reference to external data (its values dropped)."""
    tensor.ClearField("raw_data")
    tensor.ClearField("float_data")
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), *info.items()):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return tensor


def weights_file(folder: Path, name: str = "w.bin") -> Path:
    """A weights file big enough for tiny_mlp's W1 (4×8 float32 = 128 bytes)."""
    path = folder / name
    path.write_bytes(np.zeros(64, np.float32).tobytes())
    return path


def secret_outside(tmp: Path) -> Path:
    """A file that must never be read: outside every model folder the tests make."""
    path = tmp / "secret.bin"
    path.write_bytes(SECRET)
    return path


def with_external_w1(location: str, **info: str) -> onnx.ModelProto:
    model = tiny_mlp()
    external(model.graph.initializer[0], location, **info)
    return model


def constant_pointing(location: str) -> onnx.ModelProto:
    """The weight lives in a Constant node's tensor attribute instead of an initializer."""
    model = tiny_mlp()
    w1 = model.graph.initializer[0]
    tensor = TensorProto()
    tensor.CopyFrom(w1)
    tensor.name = "W1_const"
    external(tensor, location, offset="0", length="128")
    del model.graph.initializer[0]
    model.graph.node.insert(0, helper.make_node("Constant", [], ["W1"], value=tensor))
    return model


def sparse_pointing(location: str) -> onnx.ModelProto:
    """W1 as a sparse initializer whose values are external data."""
    model = tiny_mlp()
    del model.graph.initializer[0]
    values = numpy_helper.from_array(np.ones(2, np.float32), "W1")
    external(values, location, offset="0", length="8")
    indices = numpy_helper.from_array(np.array([0, 5], np.int64), "W1_idx")
    model.graph.sparse_initializer.append(helper.make_sparse_tensor(values, indices, [4, 8]))
    return model


def body_pointing(location: str) -> onnx.ModelProto:
    """An If whose then-branch holds an external initializer."""
    tensor = external(numpy_helper.from_array(np.zeros(4, np.float32), "c"), location,
                      offset="0", length="16")
    branch = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["o"])], "then", [],
        [helper.make_tensor_value_info("o", TensorProto.FLOAT, [4])], initializer=[tensor])
    other = helper.make_graph(
        [helper.make_node("Constant", [], ["o2"], value=numpy_helper.from_array(
            np.ones(4, np.float32)))], "else", [],
        [helper.make_tensor_value_info("o2", TensorProto.FLOAT, [4])])
    graph = helper.make_graph(
        [helper.make_node("If", ["cond"], ["y"], then_branch=branch, else_branch=other)],
        "if_model", [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    return make_model(graph)


def function_pointing(location: str) -> onnx.ModelProto:
    """A local function whose Constant node reads external data."""
    tensor = external(numpy_helper.from_array(np.zeros(4, np.float32), "c"), location,
                      offset="0", length="16")
    function = helper.make_function(
        "local", "AddConst", ["x"], ["y"],
        [helper.make_node("Constant", [], ["c"], value=tensor),
         helper.make_node("Add", ["x", "c"], ["y"])],
        [helper.make_opsetid("", 21)])
    graph = helper.make_graph(
        [helper.make_node("AddConst", ["x"], ["y"], domain="local")], "fn_model",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    return make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                            helper.make_opsetid("local", 1)],
                      functions=[function])


PLACES = {"initializer": lambda loc: with_external_w1(loc, offset="0", length="128"),
          "constant": constant_pointing, "sparse": sparse_pointing,
          "subgraph": body_pointing, "function": function_pointing}


def deep_model(levels: int) -> bytes:
    """A model whose If bodies nest ``levels`` deep, serialised by hand (protobuf itself
    refuses to build what it could not parse back)."""
    inner = helper.make_graph([], "leaf", [], []).SerializeToString()
    for _ in range(levels):
        attr = _field(1, b"then_branch") + _field(6, inner) + _varint_field(20, 5)
        node = _field(4, b"If") + _field(5, attr)
        inner = _field(1, node) + _field(2, b"g")
    return _varint_field(1, 10) + _field(7, inner) + _field(8, _field(1, b"") + _varint_field(
        2, 21))


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _varint_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def save_in(folder: Path, model: onnx.ModelProto, name: str = "model.onnx") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return save(model, folder / name)


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path
