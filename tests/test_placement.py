"""Where each node runs, from onnxruntime's own assignment record: providers, kernels,
BatchNormalization folded into Conv, CPU fallbacks, and a plain refusal on an old build."""

from __future__ import annotations

import json
import re
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
FUSED_CONV = "(?:NCHWc Conv|FusedConv)"  # NCHWc where MLAS has the blocked kernels


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
    assert re.fullmatch(rf"{FUSED_CONV} \(Conv \+ BatchNormalization \+ Relu\)", conv.kernel)
    assert conv.absorbed == [bn.id, relu.id]
    assert re.fullmatch(rf"folded into {FUSED_CONV} '/block/conv/Conv'", bn.kernel)
    assert bn.owner == conv.id and relu.owner == conv.id
    assert bn.provider == conv.provider
    assert identity.provider is None and identity.kernel == "removed (a no-op)"
    # at the basic level there are no provider fusions: the record alone, BN folded
    basic = core.placement(path, optimization="basic").nodes
    assert basic[0].kernel == "Conv (Conv + BatchNormalization)" and basic[2].kernel == "Relu"
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
    assert bns and all(re.match(rf"folded into {FUSED_CONV} '", n["kernel"]) for n in bns)
    cpu = next(p for p in out["providers"] if p["name"] == "CPUExecutionProvider")
    assert cpu["usable"] and cpu["nodes"] == len(out["nodes"])


def conv_relu_gelu() -> onnx.ModelProto:
    """x -> Conv -> Relu -> Flatten -> MatMul -> Add -> Gelu written out (Div, Erf, Add,
    Mul, Mul): what onnxruntime fuses into a Conv with an activation, a Gemm and a Gelu."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
             for n, s in (("W", (2, 3, 3, 3)), ("M", (32, 16)), ("B", (16,)))]
    inits += [numpy_helper.from_array(np.array(v, np.float32), n)
              for n, v in (("sq2", 1.4142135), ("one", 1.0), ("half", 0.5))]
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], name="conv", pads=[1] * 4),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Flatten", ["r"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "M"], ["m"], name="mm"),
             helper.make_node("Add", ["m", "B"], ["a"], name="bias"),
             helper.make_node("Div", ["a", "sq2"], ["d"], name="div"),
             helper.make_node("Erf", ["d"], ["e"], name="erf"),
             helper.make_node("Add", ["e", "one"], ["e1"], name="plus1"),
             helper.make_node("Mul", ["a", "e1"], ["g"], name="mul"),
             helper.make_node("Mul", ["g", "half"], ["y"], name="half")]
    graph = helper.make_graph(nodes, "crg", [helper.make_tensor_value_info("x", F, [1, 3, 4, 4])],
                              [helper.make_tensor_value_info("y", F, None)], initializer=inits)
    return make_model(graph)


def test_kernels_name_the_fusions_that_run_and_what_they_absorbed(tmp_path: Path) -> None:
    found = core.placement(save(conv_relu_gelu(), tmp_path / "crg.onnx"))
    by_name = {n.name: n for n in found.nodes}
    conv, gemm, gelu = by_name["conv"], by_name["mm"], by_name["half"]
    assert re.fullmatch(rf"{FUSED_CONV} \(Conv \+ Relu\)", conv.kernel)
    assert conv.absorbed == [by_name["relu"].id] and by_name["relu"].owner == conv.id
    assert gemm.kernel == "Gemm (MatMul + Add)" and gemm.absorbed == [by_name["bias"].id]
    assert gelu.kernel == "Gelu (Div + Erf + Add + Mul + Mul)"
    assert [found.nodes[int(i[1:])].name for i in gelu.absorbed] == ["div", "erf", "plus1", "mul"]
    assert by_name["erf"].kernel == "folded into Gelu 'half'"
    assert by_name["erf"].provider == "CPUExecutionProvider"
    assert by_name["flat"].kernel == "Flatten" and not by_name["flat"].absorbed


def test_resnet50_residual_add_and_relu_run_inside_the_conv() -> None:
    found = core.placement(ladder_model("resnet50.onnx"))
    by_name = {n.name: n for n in found.nodes}
    conv3 = by_name["/layer4/layer4.2/conv3/Conv"]
    assert re.fullmatch(rf"{FUSED_CONV} \(Conv \+ BatchNormalization \+ Add \+ Relu\)",
                        conv3.kernel)
    for name in ("/layer4/layer4.2/Add", "/layer4/layer4.2/relu_out/Relu"):
        assert by_name[name].owner == conv3.id
    assert not by_name["/avgpool/GlobalAveragePool"].absorbed  # not the residuals before it
    convs = [n for n in found.nodes if n.op_type == "Conv"]
    assert all(n.absorbed for n in convs)  # every Conv at least took its BatchNormalization
    hosts = {n.id: n for n in found.nodes}
    for n in found.nodes:  # each folded node sits in one kernel that is itself run
        if n.owner is not None:
            assert hosts[n.owner].owner is None and n.id in hosts[n.owner].absorbed


def test_a_provider_that_cannot_save_its_graph_still_gets_the_record(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Providers that compile nodes (TensorRT, OpenVINO) refuse optimized_model_filepath."""
    from onnxstudio.runner.source import ModelSource

    real = ModelSource.session

    def refuse_to_save(self: ModelSource, config: object, **options: object) -> object:
        tweak = options.get("tweak")
        if callable(tweak):
            probe = ort.SessionOptions()
            tweak(probe)
            if probe.optimized_model_filepath:
                raise RunError("cbr.onnx: Unable to serialize model as it contains compiled nodes")
        return real(self, config, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(ModelSource, "session", refuse_to_save)
    path = save(conv_bn_relu(), tmp_path / "cbr.onnx")
    found = core.placement(path, provider="AzureExecutionProvider")
    assert found.nodes[0].kernel == "Conv + BatchNormalization"  # the record, no fusion names
    with pytest.raises(RunError, match="compiled nodes"):
        core.placement(path)  # on the CPU the error is real: said, not hidden


def test_cli_text_lists_fused_kernels_and_fallbacks(tmp_path: Path) -> None:
    path = save(conv_bn_relu(), tmp_path / "cbr.onnx")
    other = next((p for p in ort.get_available_providers() if p != "CPUExecutionProvider"),
                 None)
    args = ["placement", str(path)] + (["--provider", other] if other else [])
    result = _cli(*args)
    assert result.returncode == 0, result.stderr
    assert "(Conv + BatchNormalization + Relu)" in result.stdout
    assert "absorbs /block/bn/BatchNormalization, /block/Relu" in result.stdout
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
