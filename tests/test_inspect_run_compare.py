"""Compare: a perturbed copy of a real model is caught at the node that reads the change."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from onnxstudio.cli import main
from onnxstudio.errors import InputError
from onnxstudio.resources import resource
from onnxstudio.runner.compare import (
    compare,
    difference,
    parse_config,
)
from onnxstudio.runner.pipeline import ImageSource, RunRequest
from onnxstudio.runner.tolerance import format_tolerance, parse_tolerance
from tests.conftest import shared_model


def _perturbed(model: Path, node_name: str, out: Path) -> Path:
    """A copy of ``model`` with one weight of ``node_name`` changed by +1."""
    proto = onnx.load(str(model))
    node = next(n for n in proto.graph.node if n.name == node_name)
    init = next(t for t in proto.graph.initializer if t.name == node.input[1])
    arr = numpy_helper.to_array(init).copy()
    arr.flat[0] += 1.0
    init.CopyFrom(numpy_helper.from_array(arr, init.name))
    onnx.save(proto, str(out))
    return out


def test_perturbed_weight_is_caught_at_its_node(tmp_path: Path) -> None:
    model = shared_model("zoo/mnist/mnist.onnx")
    image = shared_model("images/digit_3.jpg")
    changed = _perturbed(model, "Convolution110", tmp_path / "changed.onnx")
    request = RunRequest(model, images=[ImageSource(image.name, image)])
    cfg = parse_config("ort:cpu:disabled")
    result = compare(request, cfg, cfg, model_b=changed)
    assert result.first_divergence is not None
    assert result.first_divergence.name == "Convolution110"
    assert result.outputs[0].exceeds
    before = [d for d in result.intermediates
              if d.producer is not None and d.producer < result.first_divergence.index]
    assert before and all(d.max_abs == 0.0 for d in before)


@pytest.mark.parametrize("a,b", [("ort:cpu:all", "ort:cpu:disabled"),
                                 ("ort:cpu:disabled", "reference")])
def test_same_model_agrees_across_configurations(a: str, b: str) -> None:
    model = shared_model("zoo/mnist/mnist.onnx")
    image = shared_model("images/digit_3.jpg")
    request = RunRequest(model, images=[ImageSource(image.name, image)])
    result = compare(request, parse_config(a), parse_config(b))
    assert result.first_divergence is None
    assert len(result.intermediates) == len(onnx.load(str(model)).graph.node)
    assert all(d.cosine > 0.9999 for d in result.outputs)


def test_cli_compare_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = shared_model("zoo/mnist/mnist.onnx")
    image = shared_model("images/digit_3.jpg")
    changed = _perturbed(model, "Convolution28", tmp_path / "changed.onnx")
    assert main(["compare", str(model), str(image), "--a", "ort:cpu:all", "--b",
                 "ort:cpu:all", "--b-model", str(changed), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["first_divergence"]["name"] == "Convolution28"
    assert data["outputs"][0]["exceeds"] is True
    assert {"max_abs", "max_rel", "cosine"} <= set(data["nodes"][0])
    assert main(["compare", str(model), str(image), "--a", "bogus"]) == 2


def test_difference_metrics() -> None:
    a = np.array([1.0, 2.0, 0.0], dtype=np.float32)
    d = difference("v", a, a * 1.01, 1e-3)
    assert d.max_abs == pytest.approx(0.02, rel=1e-4)
    assert d.max_rel == pytest.approx(0.01 / 1.01, rel=1e-4)
    assert d.cosine == pytest.approx(1.0) and d.exceeds
    assert not difference("v", a, a, 0.0).exceeds
    assert difference("v", a, a[:2], 1.0).exceeds  # shape mismatch


def test_parse_config() -> None:
    assert parse_config("ort:cpu:disabled").optimization == "disable"
    assert parse_config("reference").engine == "reference"
    assert parse_config("ort").provider == "CPUExecutionProvider"
    with pytest.raises(InputError):
        parse_config("ort:cpu:fastest")


def test_renamed_copy_is_compared_node_by_node(tmp_path: Path) -> None:
    """Side B, a copy with every node and tensor renamed (a re-export), is paired by the
    model diff: every intermediate is compared, and all agree."""
    from tests import diff_edits

    model = shared_model("zoo/mnist/mnist.onnx")
    image = shared_model("images/digit_3.jpg")
    proto = diff_edits.load(model)
    diff_edits.rename_everything(proto)
    renamed = diff_edits.save(proto, tmp_path / "renamed.onnx")
    request = RunRequest(model, images=[ImageSource(image.name, image)])
    cfg = parse_config("ort:cpu:disabled")
    result = compare(request, cfg, cfg, model_b=renamed)
    assert len(result.intermediates) == len(proto.graph.node)
    assert [d.name for d in result.outputs] == [o.name for o in onnx.load(str(model)).graph.output]
    assert result.first_divergence is None
    assert all(d.max_abs == 0.0 for d in result.intermediates + result.outputs)


@pytest.mark.parametrize("text", ["-1", "nan", "inf", "abc", ""])
def test_cli_refuses_a_bad_tolerance_in_one_line(text: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Checked before anything runs: -1 would call identical values divergent."""
    sample = resource("sample")
    assert main(["compare", str(sample / "digits_cnn.onnx"), str(sample / "digit_7.png"),
                 "--tolerance", text]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("onnxstudio: Tolerance:")


def test_tolerance_parser_accepts_what_it_can_print() -> None:
    for value in (0.0, 1e-3, 5e-5, 0.01, 2500.0):
        assert parse_tolerance(format_tolerance(value)) == pytest.approx(value)
    assert parse_tolerance(" 1e-4 ") == 1e-4
    with pytest.raises(InputError, match="not a number"):
        parse_tolerance("1e-3x")
    with pytest.raises(InputError, match="finite number ≥ 0"):
        parse_tolerance("-0.5")
