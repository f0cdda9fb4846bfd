"""onnx's node tests in ../shared/models through `run MODEL test_data_set_0 --json` agree
with bare onnxruntime on the same files (loaded with numpy_helper, compared as onnx's
backend runner compares: assert_allclose rtol 1e-3, atol 1e-7): pass, fail or cannot run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from onnxstudio.cli import main
from tests.conftest import SHARED_MODELS

SAMPLE = 30


def _sets() -> list[Path]:
    found = sorted(SHARED_MODELS.glob("node/*/*/test_data_set_0"))
    step = max(1, len(found) // SAMPLE)
    sample = found[::step][:SAMPLE]
    # onnxruntime's DFT misses onnx's expected values: the sample holds a real failure.
    return sample + [s for s in found if s.parent.name == "test_dft" and s not in sample]


def _load(path: Path, tp: onnx.TypeProto) -> Any:
    data = path.read_bytes()
    if tp.HasField("sequence_type"):
        return numpy_helper.to_list(onnx.SequenceProto.FromString(data))
    if tp.HasField("optional_type"):
        return numpy_helper.to_optional(onnx.OptionalProto.FromString(data))
    return numpy_helper.to_array(onnx.TensorProto.FromString(data))


def _same(out: Any, ref: Any) -> None:
    if isinstance(ref, list):
        assert isinstance(out, list) and len(out) == len(ref)
        for a, b in zip(out, ref, strict=True):
            _same(a, b)
    elif ref is None:
        assert out is None
    else:
        np.testing.assert_array_equal(out.shape, ref.shape)
        if ref.dtype == object:
            np.testing.assert_array_equal(out, ref)
            return
        assert out.dtype == ref.dtype
        np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-7)


def _bare(folder: Path) -> str:
    import onnxruntime as ort

    model = onnx.load(folder.parent / "model.onnx")
    inits = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    try:
        feeds = {inputs[k].name: _load(folder / f"input_{k}.pb", inputs[k].type)
                 for k in range(len(list(folder.glob("input_*.pb"))))}
        refs = [_load(folder / f"output_{k}.pb", model.graph.output[k].type)
                for k in range(len(list(folder.glob("output_*.pb"))))]
        options = ort.SessionOptions()
        options.log_severity_level = 4
        outs = ort.InferenceSession(model.SerializeToString(), options,
                                    providers=["CPUExecutionProvider"]).run(None, feeds)
    except Exception:  # any refusal is "cannot run"
        return "cannot run"
    try:
        for out, ref in zip(outs, refs, strict=False):
            _same(out, ref)
    except AssertionError:
        return "fail"
    return "pass"


def test_a_sample_of_onnx_node_tests_agrees_with_bare_onnxruntime(
        capsys: pytest.CaptureFixture[str]) -> None:
    sets = _sets()
    if not sets:
        pytest.skip("../shared/models/node not available")
    ours, bare = {}, {}
    for folder in sets:
        code = main(["run", str(folder.parent / "model.onnx"), str(folder), "--json"])
        out = capsys.readouterr().out.strip().splitlines()
        ours[folder.parent.name] = "cannot run" if code == 2 else json.loads(out[-1])["verdict"]
        bare[folder.parent.name] = _bare(folder)
    assert ours == bare
    assert len(ours) > SAMPLE // 2 and "pass" in ours.values() and "fail" in ours.values()
