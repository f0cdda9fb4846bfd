"""`onnxstudio edit`: scripts and shortcuts, checked output, one-line errors with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from onnxstudio.cli import main
from tests.conftest import shared_model

MNIST = "zoo/mnist/mnist.onnx"


def _one_line_error(capsys: pytest.CaptureFixture[str], code: int, needle: str) -> None:
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("onnxstudio: ") and needle in err[0], err


def test_shortcuts_write_a_model_that_runs(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "fixed.onnx"
    code = main(["edit", str(shared_model(MNIST)), str(out), "--rename-input", "Input3=image",
                 "--add-output", "Pooling66_Output_0", "--set-meta", "fixed_by=onnxstudio"])
    assert code == 0, capsys.readouterr().err
    text = capsys.readouterr().out
    assert "Rename input Input3 → image" in text and f"wrote {out} (3 edits" in text
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["image"]
    logits, pooled = session.run(None, {"image": np.zeros((1, 1, 28, 28), np.float32)})
    assert logits.shape == (1, 10) and pooled.shape == (1, 8, 14, 14)
    assert session.get_modelmeta().custom_metadata_map == {"fixed_by": "onnxstudio"}


def test_script_and_json_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    np.save(tmp_path / "bias.npy", np.zeros((1, 10), np.float32))
    script = tmp_path / "edits.json"
    script.write_text(json.dumps({"onnxstudio_edits": 1, "edits": [
        {"op": "remove_node", "node": "ReLU32"},
        {"op": "set_initializer", "name": "Parameter194", "npy": "bias.npy"},
        {"op": "set_dim", "input": "Input3", "axis": 0, "value": "N"}]}))
    out = tmp_path / "out.onnx"
    assert main(["edit", str(shared_model(MNIST)), str(out), "--script", str(script),
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is True and report["errors"] == [] and len(report["edits"]) == 3
    proto = onnx.load(str(out))
    assert "ReLU32" not in {n.name for n in proto.graph.node}
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "N"


def test_refusals_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = str(shared_model(MNIST))
    out = str(tmp_path / "o.onnx")
    _one_line_error(capsys, main(["edit", model, out, "--remove-node", "Times212"]),
                    "edit 1: remove_node: 'Times212' (MatMul) has 2 data inputs")
    _one_line_error(capsys, main(["edit", model, model, "--set-meta", "a=b"]),
                    "refusing to write over the model file itself")
    _one_line_error(capsys, main(["edit", model, out]), "no edits given")
    _one_line_error(capsys, main(["edit", model, out, "--set-dim", "Input3=1"]),
                    "expected NAME:AXIS=VALUE")
    bad = tmp_path / "bad.json"
    bad.write_text("[{\"op\": \"explode\"}]")
    _one_line_error(capsys, main(["edit", model, out, "--script", str(bad)]),
                    "unknown operation 'explode'")
    bad.write_text("{not json")
    _one_line_error(capsys, main(["edit", model, out, "--script", str(bad)]),
                    "not valid JSON")
    assert not Path(out).exists()
