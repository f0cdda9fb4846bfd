"""Where each node runs, from onnxruntime's own assignment record: providers, kernels,
BatchNormalization folded into Conv, CPU fallbacks, and a plain refusal on an old build."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxstudio.commands import placement as command
from onnxstudio.errors import RunError
from onnxstudio.runner import placement as core
from tests.builders import make_model, save
from tests.conftest import REPO, ladder_model

F = TensorProto.FLOAT


def conv_bn_relu() -> onnx.ModelProto:
    """x -> Conv -> BatchNormalization -> Relu -> Identity -> y, plus a Shape branch."""
    rng = np.random.default_rng(1)
    inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
             for n, s in (("W", (4, 3, 3, 3)), ("scale", (4,)), ("bias", (4,)),
                          ("mean", (4,)))]
    inits.append(numpy_helper.from_array(np.ones(4, np.float32), "var"))
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], name="/block/conv/Conv", pads=[1] * 4),
             helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"],
                              ["b"], name="/block/bn/BatchNormalization"),
             helper.make_node("Relu", ["b"], ["r"], name="/block/Relu"),
             helper.make_node("Identity", ["r"], ["y"], name="/block/Identity")]
    graph = helper.make_graph(nodes, "cbr", [helper.make_tensor_value_info("x", F, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", F, None)], initializer=inits)
    return make_model(graph)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "onnxstudio", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_bn_folded_into_conv_is_shown_as_such(tmp_path: Path) -> None:
    path = save(conv_bn_relu(), tmp_path / "cbr.onnx")
    found = core.placement(path)
    conv, bn, relu, identity = found.nodes
    assert conv.provider == "CPUExecutionProvider"
    assert conv.kernel == "Conv + BatchNormalization" and conv.absorbed == [bn.id]
    assert bn.kernel == "folded into Conv '/block/conv/Conv'" and bn.owner == conv.id
    assert bn.provider == conv.provider
    assert relu.kernel == "Relu"
    assert identity.provider is None and identity.kernel == "removed (a no-op)"
    # with optimisations off, every node is its own kernel
    plain = core.placement(path, optimization="disable")
    assert [n.kernel for n in plain.nodes] == ["Conv", "BatchNormalization", "Relu", "Identity"]


def test_cli_json_on_a_real_model() -> None:
    result = _cli("placement", str(ladder_model("resnet50.onnx")), "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert set(out) == {"nodes", "providers"}
    assert all(set(n) == {"id", "name", "op_type", "provider", "kernel"} for n in out["nodes"])
    bns = [n for n in out["nodes"] if n["op_type"] == "BatchNormalization"]
    assert bns and all(n["kernel"].startswith("folded into Conv '") for n in bns)
    cpu = next(p for p in out["providers"] if p["name"] == "CPUExecutionProvider")
    assert cpu["usable"] and cpu["nodes"] == len(out["nodes"])


def test_cli_text_lists_fused_kernels_and_fallbacks(tmp_path: Path) -> None:
    path = save(conv_bn_relu(), tmp_path / "cbr.onnx")
    other = next((p for p in ort.get_available_providers() if p != "CPUExecutionProvider"),
                 None)
    args = ["placement", str(path)] + (["--provider", other] if other else [])
    result = _cli(*args)
    assert result.returncode == 0, result.stderr
    assert "Conv + BatchNormalization" in result.stdout
    assert "absorbs /block/bn/BatchNormalization" in result.stdout
    if other == "AzureExecutionProvider":  # runs nothing itself: everything falls back
        assert "CPU fallbacks (3)" in result.stdout


def test_an_onnxruntime_that_cannot_report_says_so(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = save(conv_bn_relu(), tmp_path / "cbr.onnx")
    name = "get_provider_graph_assignment_info"
    for cls in ort.InferenceSession.__mro__:  # as in onnxruntime < 1.24: no such method
        if name in vars(cls):
            monkeypatch.delattr(cls, name)
    with pytest.raises(RunError, match=r"cannot report which provider runs each node"):
        core.placement(path)
    parser = __import__("argparse").ArgumentParser()
    command.add_parser(parser.add_subparsers())
    args = parser.parse_args(["placement", str(path)])
    from onnxstudio.cli import _run

    args.debug = False
    assert _run(command.run, args) == 2


def test_providers_are_discovered_from_the_installation() -> None:
    found = core.discover_providers()
    assert found[0].name == "CPUExecutionProvider" and found[0].usable
    assert {p.name for p in found if p.usable} == set(ort.get_available_providers())
    if hasattr(ort, "get_ep_devices"):
        assert found[0].devices  # the CPU device onnxruntime lists
