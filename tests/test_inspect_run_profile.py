"""Profile: kernel times land on nodes that exist, and never add up to more than the run."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import onnx
import pytest

from onnxstudio.cli import main
from onnxstudio.runner.pipeline import ImageSource, RunRequest
from onnxstudio.runner.profile import parse_trace, profile
from onnxstudio.runner.session import SessionConfig
from tests.conftest import shared_model


def _request(model: Path, image: Path | None, optimization: str) -> RunRequest:
    images = [ImageSource(image.name, image)] if image else []
    return RunRequest(model, images=images, random=image is None,
                      config=SessionConfig(optimization=optimization))


@pytest.mark.parametrize("optimization", ["disable", "all"])
@pytest.mark.parametrize("model_path,image", [
    ("zoo/mnist/mnist.onnx", "images/digit_3.jpg"),
    ("zoo/onnx_light/light_squeezenet.onnx", "images/chelsea.png"),
])
def test_times_map_to_real_nodes_and_fit_in_the_run(model_path: str, image: str,
                                                     optimization: str) -> None:
    model = shared_model(model_path)
    result = profile(_request(model, shared_model(image), optimization), runs=2)
    nodes = onnx.load(str(model), load_external_data=False).graph.node
    assert result.nodes, "no kernel was attributed to a node"
    for n in result.nodes:
        assert 0 <= n.index < len(nodes)
        assert nodes[n.index].name == n.name
        assert nodes[n.index].op_type == n.op_type
        assert all(0 <= c < len(nodes) for c in n.covers)
        assert n.time_ms >= 0
    assert 0 < result.kernel_ms <= result.total_ms
    if optimization == "disable":  # one kernel per node, nothing left over
        assert not result.unmapped
        assert not result.fused_into
        assert all(len(n.kernels) == 1 for n in result.nodes)
    shares = sum(o.share for o in result.op_types())
    assert shares == pytest.approx(1.0)


def test_fused_kernels_name_the_nodes_they_cover() -> None:
    model = shared_model("zoo/mnist/mnist.onnx")
    result = profile(_request(model, shared_model("images/digit_3.jpg"), "all"))
    by_name = {n.name: n for n in result.nodes}
    # onnxruntime fuses Conv + Add + Relu into one NCHWc Conv named after the Relu's output.
    conv = by_name["Convolution28"]
    nodes = onnx.load(str(model)).graph.node
    assert sorted(nodes[i].name for i in conv.covers) == ["Plus30", "ReLU32"]
    times = result.node_times()
    assert times[f"n{conv.covers[0]}"] == conv.time_ms


def test_parse_trace_keeps_unknown_kernels_apart_and_skips_warmup() -> None:
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Relu", ["x"], ["y"], name="act")], "g", [], [])
    ev = [
        {"cat": "Session", "name": "model_run", "ts": 0, "dur": 1000},
        {"cat": "Node", "name": "act_kernel_time", "ts": 10, "dur": 900,
         "args": {"op_name": "Relu", "node_index": "0"}},
        {"cat": "Session", "name": "model_run", "ts": 2000, "dur": 100},
        {"cat": "Node", "name": "act_kernel_time", "ts": 2010, "dur": 40,
         "args": {"op_name": "Relu", "node_index": "0"}},
        {"cat": "Node", "name": "MemcpyToHost_kernel_time", "ts": 2060, "dur": 20,
         "args": {"op_name": "MemcpyToHost", "node_index": "7"}},
    ]
    total, runs, nodes, unmapped, _ = parse_trace(ev, graph, skip_runs=1)
    assert (total, runs) == (0.1, 1)
    assert [(n.name, n.time_ms) for n in nodes] == [("act", 0.04)]
    assert [(k.name, k.time_ms) for k in unmapped] == [("MemcpyToHost", 0.02)]


def test_cli_profile_json_and_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = shared_model("zoo/mnist/mnist.onnx")
    image = shared_model("images/digit_3.jpg")
    out_csv = tmp_path / "times.csv"
    assert main(["profile", str(model), str(image), "--optimization", "disable", "--json",
                 "--csv", str(out_csv)]) == 0
    data = json.loads(capsys.readouterr().out)
    names = {n.name for n in onnx.load(str(model)).graph.node}
    assert {n["name"] for n in data["nodes"]} == names
    assert all(set(n) >= {"name", "op_type", "time_ms"} for n in data["nodes"])
    assert sum(n["time_ms"] for n in data["nodes"]) <= data["total_ms"]
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    assert {r["name"] for r in rows} == names


def test_parse_trace_reads_onnxruntime_fusion_names() -> None:
    mk = onnx.helper.make_node
    graph = onnx.helper.make_graph([
        mk("Conv", ["x", "w"], ["c0"], name="conv"),
        mk("Relu", ["c0"], ["r0"], name="relu"),
        mk("BatchNormalization", ["r0", "s", "b", "m", "v"], ["bn0"], name="bn"),
        mk("Gemm", ["bn0", "g"], ["y"], name="gemm"),
    ], "g", [], [])
    ev = [{"cat": "Session", "name": "model_run", "ts": 0, "dur": 100}]
    for i, (kernel, op) in enumerate([("r0_nchwc", "Conv"), ("bn0_bn_nchwc", "Conv"),
                                      ("fused gemm", "FusedGemm")]):
        ev.append({"cat": "Node", "name": f"{kernel}_kernel_time", "ts": 1 + 10 * i, "dur": 5,
                   "args": {"op_name": op, "node_index": str(10 + i)}})
    _, _, nodes, unmapped, fused = parse_trace(ev, graph)
    placed = {n.name: n.covers for n in nodes}
    assert placed == {"conv": [1], "bn": [], "gemm": []}  # Conv+Relu fused; BN converted
    assert fused == {1: 0} and not unmapped


def test_table_rows_name_what_fused_kernels_cover_and_are_built_once() -> None:
    from onnxstudio.model import load_model
    from onnxstudio.runner.profile_rows import table_rows

    path = shared_model("zoo/mnist/mnist.onnx")
    result = profile(_request(path, shared_model("images/digit_3.jpg"), "all"))
    nodes, ops, node_peak, op_peak = table_rows(result, load_model(path))
    conv = next(r for r in nodes if r.label == "Convolution28")
    assert conv.fused == "Plus30, ReLU32" and "Also covers: Plus30, ReLU32" in conv.tooltip
    assert sum(o.share for o in ops) == pytest.approx(1.0)
    # the profile task builds them on its worker; the panel gets the same rows back
    assert node_peak == max(r.share for r in nodes) and op_peak == max(o.share for o in ops)
    assert table_rows(result, None) == (nodes, ops, node_peak, op_peak)
    assert table_rows(result, None).nodes is nodes
    bare = profile(_request(path, shared_model("images/digit_3.jpg"), "all"))
    assert next(r for r in table_rows(bare, None)[0] if r.label == "Convolution28").fused \
        == ", ".join(f"n{i}" for i in next(n for n in bare.nodes
                                            if n.name == "Convolution28").covers)


def test_read_trace_parses_onnxruntime_lines_and_any_other_json_whole() -> None:
    from onnxstudio.runner.profile import read_trace

    lines = ('[\n{"cat" : "Session","dur" :5,"name" :"model_run","args" : {}},\n'
             '{"cat" : "Node","dur" :3,"name" :"a_kernel_time","args" : {"op_name" : "Relu"}}\n]\n')
    assert [e["name"] for e in read_trace(lines)] == ["model_run", "a_kernel_time"]
    squeezed = json.dumps(json.loads(lines))  # one line: the fallback parses it whole
    assert read_trace(squeezed) == read_trace(lines)
    with pytest.raises(ValueError):
        read_trace("[{not json")
