"""Diffing an int4 LLM against its fp32 original: one line per repeated rewrite, no weights read."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onnxstudio.cli import main
from onnxstudio.model import load_model
from onnxstudio.model.diff import diff_models
from onnxstudio.model.weights import WeightStore
from tests.builders import IR_VERSION
from tests.llm_builders import BLOCK, _nbits

LAYERS, WIDTH = 6, 64


def _chain(quantised: bool) -> onnx.ModelProto:
    """x -> LAYERS × (MatMul or MatMulNBits, Relu) -> y."""
    rng = np.random.default_rng(0)
    nodes, inits, previous = [], [], "x"
    for i in range(LAYERS):
        if quantised:
            inits += _nbits(rng, f"l{i}.proj", WIDTH, WIDTH)
            nodes.append(helper.make_node(
                "MatMulNBits", [previous, f"l{i}.proj.weight_Q4", f"l{i}.proj.weight_scales"],
                [f"m{i}"], name=f"/l{i}/proj/MatMul_Q4", domain="com.microsoft", K=WIDTH,
                N=WIDTH, bits=4, block_size=BLOCK))
        else:
            inits.append(numpy_helper.from_array(
                rng.standard_normal((WIDTH, WIDTH)).astype(np.float32), f"l{i}.proj.weight"))
            nodes.append(helper.make_node("MatMul", [previous, f"l{i}.proj.weight"], [f"m{i}"],
                                          name=f"/l{i}/proj/MatMul"))
        nodes.append(helper.make_node("Relu", [f"m{i}"], [f"h{i}"], name=f"/l{i}/Relu"))
        previous = f"h{i}"
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, WIDTH])],
        [helper.make_tensor_value_info(previous, TensorProto.FLOAT, [1, WIDTH])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = IR_VERSION
    return model


def test_repeated_rewrites_read_as_one_line_with_a_count(tmp_path: Path, capsys) -> None:
    onnx.save(_chain(False), str(tmp_path / "fp32.onnx"))
    onnx.save(_chain(True), str(tmp_path / "int4.onnx"))
    assert main(["diff", str(tmp_path / "fp32.onnx"), str(tmp_path / "int4.onnx")]) == 1
    out = capsys.readouterr().out
    assert f"~ {LAYERS} × MatMul → MatMulNBits (inputs; weight float32 → uint8): " \
           "/l0/proj/MatMul → /l0/proj/MatMul_Q4" in out
    assert out.count("\n~ ") == 1  # no list of six near-identical entries
    assert main(["diff", str(tmp_path / "fp32.onnx"), str(tmp_path / "int4.onnx"),
                 "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["patterns"] == [{
        "status": "changed", "count": LAYERS,
        "text": "MatMul → MatMulNBits (inputs; weight float32 → uint8)"}]


def test_weights_of_different_shapes_or_dtypes_are_not_read(tmp_path: Path,
                                                             monkeypatch) -> None:
    onnx.save(_chain(False), str(tmp_path / "fp32.onnx"))
    onnx.save(_chain(True), str(tmp_path / "int4.onnx"))
    reads: list[str] = []
    original = WeightStore.read

    def counting(self: WeightStore, name: str) -> np.ndarray:
        reads.append(name)
        return original(self, name)

    monkeypatch.setattr(WeightStore, "read", counting)
    result = diff_models(load_model(tmp_path / "fp32.onnx"), load_model(tmp_path / "int4.onnx"))
    assert result.summary()["changed"] == LAYERS
    assert reads == []
