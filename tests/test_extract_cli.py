"""`onnxstudio extract`: writes a checked sub-model; bad cuts are one line and exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from onnxstudio.cli import main
from tests.conftest import REPO, ladder_model, shared_model

RELU1 = "ReLU32_Output_0"
POOL1 = "Pooling66_Output_0"


def _one_line_error(capsys: pytest.CaptureFixture[str], code: int, needle: str) -> None:
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("onnxstudio: ") and needle in err[0], err


def test_extracts_between_tensors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = shared_model("zoo/mnist/mnist.onnx")
    out = tmp_path / "part.onnx"
    code = main(["extract", str(model), str(out), "--inputs", RELU1, "--outputs", POOL1,
                 "--list"])
    assert code == 0
    text = capsys.readouterr().out
    assert f"input   {RELU1}: float32[1×8×28×28]" in text
    assert f"wrote {out} (1 node" in text
    onnx.checker.check_model(str(out))
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal((1, 8, 28, 28)).astype(np.float32)
    (y,) = session.run(None, {RELU1: x})
    assert y.shape == (1, 8, 14, 14)


def test_prefix_needs_only_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "head.onnx"
    assert main(["extract", str(shared_model("zoo/mnist/mnist.onnx")), str(out),
                 "--outputs", POOL1]) == 0
    proto = onnx.load(str(out))
    weights = {t.name for t in proto.graph.initializer}  # IR 3: weights are inputs too
    assert [i.name for i in proto.graph.input if i.name not in weights] == ["Input3"]


def test_external_data_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ffn.onnx"
    code = main(["extract", str(ladder_model("hf_bert12_dynamo.onnx")), str(out),
                 "--inputs", "layer_norm_5", "--outputs", "layer_norm_6", "--external-data"])
    assert code == 0, capsys.readouterr().err
    assert "ffn.onnx.data" in capsys.readouterr().out
    assert (tmp_path / "ffn.onnx.data").exists()
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal((1, 16, 64)).astype(np.float32)
    assert session.run(None, {"layer_norm_5": x})[0].shape == (1, 16, 64)


@pytest.mark.parametrize(("args", "needle"), [
    (["--inputs", "nope", "--outputs", POOL1], "no tensor named 'nope'"),
    (["--inputs", POOL1, "--outputs", RELU1], f"output '{RELU1}' is unreachable"),
    (["--inputs", ","], "an empty list of tensor names"),
    ([], "say where to cut"),
])
def test_bad_cuts_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                               args: list[str], needle: str) -> None:
    model = shared_model("zoo/mnist/mnist.onnx")
    code = main(["extract", str(model), str(tmp_path / "x.onnx"), *args])
    _one_line_error(capsys, code, needle)
    assert not (tmp_path / "x.onnx").exists()


def test_refuses_the_model_itself(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "m.onnx"
    model.write_bytes(shared_model("zoo/mnist/mnist.onnx").read_bytes())
    before = model.read_bytes()
    code = main(["extract", str(model), str(model), "--outputs", POOL1])
    _one_line_error(capsys, code, "refusing to write over")
    assert model.read_bytes() == before


def test_unreadable_model_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["extract", str(tmp_path / "missing.onnx"), str(tmp_path / "o.onnx"),
                 "--outputs", "y"])
    _one_line_error(capsys, code, "file not found")


def test_shell_exit_code_without_traceback(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "onnxstudio", "extract",
         str(shared_model("zoo/mnist/mnist.onnx")), str(tmp_path / "o.onnx"),
         "--outputs", "Nope"], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == "onnxstudio: no tensor named 'Nope' in the model"
