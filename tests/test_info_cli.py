"""`onnxstudio info`: exit codes, one-line errors, and JSON that agrees with onnx."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from tests.builders import save, tiny_mlp
from tests.conftest import REPO, SHARED_MODELS

REQUIRED_KEYS = {
    "path", "ir_version", "producer", "opset_imports", "metadata", "inputs", "outputs",
    "node_count", "node_count_total", "operators", "subgraphs", "functions", "parameters",
    "weight_bytes", "external_data", "warnings",
}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "onnxstudio", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_info_json_on_generated_model(tmp_path: Path) -> None:
    path = save(tiny_mlp(), tmp_path / "mlp.onnx")
    result = _cli("info", str(path), "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert set(info) >= REQUIRED_KEYS
    assert info["opset_imports"] == {"ai.onnx": 21}
    assert info["inputs"] == [{"name": "x", "dtype": "float32", "shape": ["batch", 4]}]
    assert info["outputs"] == [{"name": "y", "dtype": "float32", "shape": ["batch", 3]}]
    assert info["node_count"] == info["node_count_total"] == 5
    ops = {o["op_type"]: o for o in info["operators"]}
    assert ops["MatMul"] == {"domain": "ai.onnx", "op_type": "MatMul", "count": 2,
                             "since_version": 13}
    assert info["parameters"] == 64 and info["weight_bytes"] == 256
    assert info["external_data"] is False


def test_info_human_readable(tmp_path: Path) -> None:
    result = _cli("info", str(save(tiny_mlp(), tmp_path / "mlp.onnx")))
    assert result.returncode == 0
    assert "MatMul" in result.stdout and "batch" in result.stdout


@pytest.mark.parametrize("content", [b"", b"garbage that is not a model at all\xff\xfe"])
def test_info_bad_input_is_one_line_exit_2(tmp_path: Path, content: bytes) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(content)
    result = _cli("info", str(bad), "--json")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "bad.onnx" in lines[0]
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_info_missing_file() -> None:
    result = _cli("info", "/no/such/model.onnx")
    assert result.returncode == 2 and "model.onnx: file not found" in result.stderr


def _corpus() -> list[Path]:
    return sorted(SHARED_MODELS.rglob("*.onnx")) if SHARED_MODELS.exists() else []


def _onnx_counts(proto: onnx.ModelProto) -> tuple[int, int]:
    def total(g: onnx.GraphProto) -> int:
        n = len(g.node)
        for node in g.node:
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    n += total(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    n += sum(total(x) for x in a.graphs)
        return n
    return len(proto.graph.node), total(proto.graph)


def test_info_agrees_with_onnx_on_the_corpus() -> None:
    """Every shared model: info --json matches onnx's own view, or fails as a typed error."""
    from onnxstudio.errors import ModelLoadError
    from onnxstudio.model import load_model
    from onnxstudio.model.summary import model_summary

    corpus = _corpus()
    if not corpus:
        pytest.skip("../shared/models not available")
    checked = 0
    for path in corpus:
        try:
            info = model_summary(load_model(path))
        except ModelLoadError:
            with pytest.raises(Exception):  # noqa: B017 - onnx must fail on it too
                onnx.checker.check_model(onnx.load(str(path)))
            continue
        proto = onnx.load(str(path), load_external_data=False)
        initializers = {i.name for i in proto.graph.initializer}
        assert (info["node_count"], info["node_count_total"]) == _onnx_counts(proto), path
        assert info["opset_imports"] == {
            (o.domain or "ai.onnx"): o.version for o in proto.opset_import}, path
        assert [i["name"] for i in info["inputs"]] == [
            i.name for i in proto.graph.input if i.name not in initializers], path
        assert [o["name"] for o in info["outputs"]] == [o.name for o in proto.graph.output], path
        assert info["ir_version"] == proto.ir_version
        assert sum(op["count"] for op in info["operators"]) == info["node_count_total"]
        checked += 1
    assert checked > 200


def test_info_cli_on_a_shared_model() -> None:
    corpus = _corpus()
    if not corpus:
        pytest.skip("../shared/models not available")
    path = SHARED_MODELS / "zoo/mnist/mnist.onnx"
    result = _cli("info", str(path), "--json")
    assert result.returncode == 0
    info = json.loads(result.stdout)
    proto = onnx.load(str(path))
    assert info["node_count"] == len(proto.graph.node)
    assert info["inputs"][0]["shape"] == [
        d.dim_value or d.dim_param for d in proto.graph.input[0].type.tensor_type.shape.dim]


def test_help_advertises_only_commands_that_answer(capsys: pytest.CaptureFixture[str]) -> None:
    """`onnxstudio --help` names the headless commands; each must have a working --help."""
    from onnxstudio.cli import main
    from onnxstudio.commands import COMMANDS

    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    listed = capsys.readouterr().out
    for name in COMMANDS:
        assert name in listed
        with pytest.raises(SystemExit) as done:
            main([name, "--help"])
        assert done.value.code == 0
        assert capsys.readouterr().out.startswith(f"usage: onnxstudio {name}")


def test_whole_graph_commands_pause_the_collector_only_while_they_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    from onnxstudio.cli import main
    from onnxstudio.commands import info as info_command

    seen: list[bool] = []
    real = info_command.run
    monkeypatch.setattr(info_command, "run",
                        lambda args: seen.append(gc.isenabled()) or real(args))
    path = save(tiny_mlp(), tmp_path / "m.onnx")
    assert gc.isenabled()
    assert main(["info", str(path)]) == 0
    assert seen == [False]  # paused while the graph was read
    assert gc.isenabled()  # and back on for whoever called main() in-process
    assert "m.onnx" in capsys.readouterr().out


def _nested_weights_model() -> onnx.ModelProto:
    """Weights where exporters put them besides the main graph's initializers: a float
    Constant [4, 4] in each If branch, an initializer [3] in a Loop body, a Constant [8]
    in a local function; and a scalar and an int64 shape Constant, which are not weights."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    from tests.builders import make_model

    def branch(name: str, value: float) -> onnx.GraphProto:
        w = numpy_helper.from_array(np.full((4, 4), value, np.float32))
        return helper.make_graph(
            [helper.make_node("Constant", [], [f"{name}_w"], value=w),
             helper.make_node("MatMul", ["x", f"{name}_w"], [f"{name}_y"])],
            name, [], [helper.make_tensor_value_info(f"{name}_y", TensorProto.FLOAT, [1, 4])])

    body = helper.make_graph(
        [helper.make_node("Add", ["v", "b3"], ["v_out"]),
         helper.make_node("Identity", ["cond"], ["cond_out"])], "loop_body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [3])],
        [numpy_helper.from_array(np.ones(3, np.float32), "b3")])
    scale = helper.make_function(
        "local", "Scale", ["a"], ["z"],
        [helper.make_node("Constant", [], ["s"],
                          value=numpy_helper.from_array(np.ones(8, np.float32))),
         helper.make_node("Mul", ["a", "s"], ["z"])],
        [helper.make_opsetid("", 18)])
    nodes = [
        helper.make_node("If", ["flag"], ["y"], then_branch=branch("then", 1.0),
                         else_branch=branch("else", 2.0)),
        helper.make_node("Loop", ["trips", "", "v0"], ["v_final"], body=body),
        helper.make_node("Scale", ["a"], ["z"], domain="local"),
        helper.make_node("Constant", [], ["half"], value_float=0.5),
        helper.make_node("Constant", [], ["shape"],
                         value=numpy_helper.from_array(np.array([1, 4], np.int64))),
    ]
    graph = helper.make_graph(
        nodes, "nested",
        [helper.make_tensor_value_info("flag", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4]),
         helper.make_tensor_value_info("trips", TensorProto.INT64, []),
         helper.make_tensor_value_info("v0", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("a", TensorProto.FLOAT, [8])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
         for n in ("y", "v_final", "z")])
    return make_model(graph, opset=18, functions=[scale], opset_imports=[
        helper.make_opsetid("", 18), helper.make_opsetid("local", 1)])


def test_info_counts_weights_in_bodies_and_local_functions(tmp_path: Path) -> None:
    path = save(_nested_weights_model(), tmp_path / "nested.onnx")
    result = _cli("info", str(path), "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["parameters"] == 16 + 16 + 3 + 8
    assert info["weight_bytes"] == 4 * (16 + 16 + 3 + 8)


def test_a_mistyped_command_is_one_line_and_never_the_window(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from onnxstudio import cli
    from onnxstudio.ui import app

    def window(_args: object) -> int:
        raise AssertionError("the window opened")

    monkeypatch.setattr(app, "run_app", window)
    model = save(tiny_mlp(), tmp_path / "model.onnx")
    assert cli.main(["infoo", str(model)]) == 2
    assert capsys.readouterr().err == "onnxstudio: unknown command 'infoo' (did you mean 'info'?)\n"
    assert cli.main(["frobnicate"]) == 2
    assert capsys.readouterr().err.startswith("onnxstudio: unknown command 'frobnicate' "
                                              "(commands: info, run, export")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    assert cli.main([str(model)]) == 2  # no display: one line, not Qt's abort
    err = capsys.readouterr().err
    assert "no display to open the window on" in err and err.count("\n") == 1
