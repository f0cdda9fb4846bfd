"""LLMs into pipeline stages: layers with their own caches, few tensors per cut, all or nothing."""

from __future__ import annotations

import json
import os
import stat
import sys
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxstudio.cli import main
from onnxstudio.errors import CutError
from onnxstudio.model import load_model
from onnxstudio.model.carry import carried_nodes
from onnxstudio.model.cut import cut_from_tensors, write_cut
from onnxstudio.model.split import plan_at, plan_split
from onnxstudio.model.split_write import write_split
from onnxstudio.runner.split_check import check_chain
from tests.builders import make_model, save
from tests.llm_builders import save_tiny_llm

ROOT = Path(__file__).resolve().parents[1]


def _manifest(folder: Path) -> list[dict]:
    return json.loads((folder / "manifest.json").read_text())["stages"]


def _layers_of_caches(stage: dict) -> set[int]:
    return {int(i["name"].split(".")[1]) for i in stage["inputs"]
            if i["name"].startswith("past_key_values.")}


def test_an_llm_splits_with_each_cache_in_its_layers_stage(tmp_path: Path, capsys) -> None:
    path = save_tiny_llm(tmp_path / "tiny", layers=4)
    assert main(["split", str(path), str(tmp_path / "out"), "--stages", "3"]) == 0
    assert "chained stages match the whole model" in capsys.readouterr().out
    stages = _manifest(tmp_path / "out")
    seen: set[int] = set()
    for stage in stages:
        layers = _layers_of_caches(stage)
        assert not layers & seen  # no cache is fed to two stages
        seen |= layers
        handed = [i for i in stage["inputs"] if i["from"] != "model"]
        assert len(handed) <= 2  # the residual stream, not the mask's lengths and shapes
        # the mask's lengths are recomputed from the model's mask, not handed over
        assert not any("attn_mask_reformat" in i["name"] for i in handed)
    assert seen == {0, 1, 2, 3}


def test_cuts_by_hand_after_a_node_or_a_tensor(tmp_path: Path, capsys) -> None:
    path = save_tiny_llm(tmp_path / "tiny", layers=2)
    assert main(["split", str(path), str(tmp_path / "a"), "--cut-after",
                 "/model/layers.0/mlp/down_proj/MatMul_Q4"]) == 0
    assert "chained stages match" in capsys.readouterr().out
    assert [_layers_of_caches(s) for s in _manifest(tmp_path / "a")] == [{0}, {1}]
    model = load_model(path)
    plan = plan_at(model, tensors=["/model/layers.0/post_attention_layernorm/output_3"])
    assert len(plan.stages) == 2
    assert main(["split", str(path), str(tmp_path / "b"), "--cut", "no_such"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("onnxstudio: --cut no_such: no tensor") and err.count("\n") == 1


def test_the_check_takes_dims(tmp_path: Path, capsys) -> None:
    path = save_tiny_llm(tmp_path / "tiny", layers=2)
    assert main(["split", str(path), str(tmp_path / "out"), "--stages", "2",
                 "--dim", "sequence_length=3", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["check"]["ok"]


def test_a_failed_split_leaves_nothing_behind(tmp_path: Path, monkeypatch) -> None:
    path = save_tiny_llm(tmp_path / "tiny", layers=2)
    model = load_model(path)
    plan = plan_split(model, 2)
    import onnxstudio.model.split_write as split_write

    calls = []

    def failing(*args, **kwargs):
        calls.append(args)
        if len(calls) == 2:
            raise CutError("disk full")
        return write_cut(*args, **kwargs)

    monkeypatch.setattr(split_write, "write_cut", failing)
    with pytest.raises(CutError, match="disk full"):
        write_split(model, plan, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny"]


def test_external_weights_take_the_model_files_permissions(tmp_path: Path) -> None:
    path = save_tiny_llm(tmp_path / "tiny", layers=1)
    model = load_model(path)
    old = os.umask(0o022)
    try:
        written = write_cut(model, cut_from_tensors(model, None, None), tmp_path / "cut.onnx",
                            external=True)
    finally:
        os.umask(old)
    assert written.data_path is not None
    assert stat.S_IMODE(written.data_path.stat().st_mode) == 0o644
    assert stat.S_IMODE(written.path.stat().st_mode) == 0o644


# ---------------------------------------------------------------- real exports (no CI)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The genai builder's int4 Llama and the dynamo exporter's Llama, made here."""
    pytest.importorskip("torch")
    pytest.importorskip("onnxruntime_genai")
    pytest.importorskip("onnxscript")
    out = tmp_path_factory.mktemp("llms")
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import make_llm_models
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    with warnings.catch_warnings():  # torch's and transformers' own, while generating
        warnings.simplefilter("ignore")
        make_llm_models.genai("llama", "int4", out)
        make_llm_models.dynamo(out)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", ["genai-llama-int4", "dynamo-llama"])
def test_real_exports_run_and_split_with_default_options(exported: Path, name: str,
                                                         tmp_path: Path, capsys) -> None:
    path = exported / name / "model.onnx"
    assert main(["run", str(path), "--random"]) == 0
    assert main(["split", str(path), str(tmp_path / "out"), "--stages", "2"]) == 0
    assert "chained stages match the whole model" in capsys.readouterr().out
    plan = plan_split(load_model(path), 2)
    folder = tmp_path / "again"
    write_split(load_model(path), plan, folder)
    assert check_chain(path, folder, _manifest(folder)).ok
    if name == "dynamo-llama":  # its mask reads a later cache's shape: no longer fed for it
        assert [_layers_of_caches(s) for s in _manifest(folder)] == [{0}, {1}]
        assert [len(s.inputs) - sum(i.stage is None for i in s.inputs)
                for s in plan.stages] == [0, 1]  # the residual stream alone


def test_a_failed_check_names_the_dims_to_set(tmp_path: Path, capsys) -> None:
    path = save_tiny_llm(tmp_path / "tiny", layers=2)
    assert main(["split", str(path), str(tmp_path / "out"), "--stages", "2",
                 "--dim", "kv_cache_dim=3"]) == 2
    err = capsys.readouterr().err
    assert "kv_cache_dim=3" in err and "--dim NAME=SIZE" in err and err.count("\n") == 1


def _sized_by_a_later_cache(path: Path, past_dim: str = "past_len") -> Path:
    """Two layers, each reading its own cache ``past.i``; the first nodes read the batch
    and past length off ``past.1`` (as the dynamo exporter reads ``past_key_values.8.key``),
    every layer expands its state to that shape and scales it by a float made from the
    length (as rotary tables are made from positions)."""
    f = TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("x", f, ["batch", 4]),
              helper.make_tensor_value_info("past.0", f, ["batch", 2, "past_len", 4]),
              helper.make_tensor_value_info("past.1", f, ["batch", 2, past_dim, 4])]
    inits = [numpy_helper.from_array(np.full((4, 4), 0.5 + i, np.float32), f"w{i}")
             for i in range(2)]
    inits += [numpy_helper.from_array(np.array([4], np.int64), "four"),
              numpy_helper.from_array(np.array([1], np.int64), "axis1")]
    nodes = [helper.make_node("Shape", ["past.1"], ["batch"], start=0, end=1),
             helper.make_node("Shape", ["past.1"], ["plen"], start=-2, end=-1),
             helper.make_node("Concat", ["batch", "plen", "four"], ["expanded"], axis=0),
             helper.make_node("Cast", ["plen"], ["length"], to=TensorProto.FLOAT),
             helper.make_node("Cos", ["length"], ["cos"])]
    state = "x"
    for i in range(2):
        nodes += [
            helper.make_node("Unsqueeze", [state, "axis1"], [f"u{i}"]),
            helper.make_node("Expand", [f"u{i}", "expanded"], [f"e{i}"]),
            helper.make_node("ReduceSum", [f"past.{i}", "axis1"], [f"p{i}"], keepdims=0),
            helper.make_node("Add", [f"p{i}", f"e{i}"], [f"a{i}"]),
            helper.make_node("ReduceMean", [f"a{i}"], [f"m{i}"], axes=[1], keepdims=0),
            helper.make_node("Mul", [f"m{i}", "cos"], [f"c{i}"]),
            helper.make_node("MatMul", [f"c{i}", f"w{i}"], [f"h{i}"], name=f"layer{i}")]
        state = f"h{i}"
    graph = helper.make_graph(nodes, "sized", inputs,
                              [helper.make_tensor_value_info("h1", f, ["batch", 4])], inits)
    return save(make_model(graph, opset=17), path)


def test_a_cache_read_for_its_size_alone_stays_in_its_layers_stage(tmp_path: Path,
                                                                   capsys) -> None:
    path = _sized_by_a_later_cache(tmp_path / "sized.onnx")
    assert main(["split", str(path), str(tmp_path / "out"), "--cut-after", "layer0"]) == 0
    assert "chained stages match the whole model" in capsys.readouterr().out
    first, second = _manifest(tmp_path / "out")
    # the batch and past length come from an input of equal declared dims stage 1 takes
    assert [i["name"] for i in first["inputs"]] == ["x", "past.0"]
    # the float scale is made again from the cache's length, not handed over
    assert {i["name"] for i in second["inputs"]} == {"past.1", "h0"}
    shapes = [n for n in onnx.load(tmp_path / "out" / "stage_1.onnx").graph.node
              if n.op_type == "Shape"]
    assert {n.input[0] for n in shapes} <= {"x", "past.0"}
    # a past length declared under another name may differ: that cache is still fed
    other = _sized_by_a_later_cache(tmp_path / "other.onnx", past_dim="other_len")
    model = load_model(other)
    plan = plan_at(model, ["layer0"])
    assert "past.1" in [i.name for i in plan.stages[0].inputs]
    # floats computed from a float model input are the network's work, never copied
    carried = carried_nodes(model.graph)
    assert [n.op_type for n in model.graph.nodes if carried[n.index]] == \
        ["Shape", "Shape", "Concat", "Cast", "Cos"]
