"""Split into pipeline stages: chained stages equal the whole model, balanced, few cut bytes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxstudio.cli import main
from onnxstudio.errors import CutError
from onnxstudio.model import load_model
from onnxstudio.model.split import BAND, plan_split
from onnxstudio.model.split_write import write_split
from onnxstudio.runner.split_check import check_chain
from tests.builders import make_model, save
from tests.conftest import ladder_model, shared_model


def skip_mlp(layers: int = 6, width: int = 8) -> onnx.ModelProto:
    """A chain of MatMul+Relu layers of equal weight, with a skip from layer 1 to the end."""
    rng = np.random.default_rng(0)
    nodes, inits, previous = [], [], "x"
    for i in range(layers):
        w = f"W{i}"
        inits.append(numpy_helper.from_array(
            rng.standard_normal((width, width)).astype(np.float32) * 0.3, w))
        nodes += [helper.make_node("MatMul", [previous, w], [f"m{i}"], name=f"/l{i}/MatMul"),
                  helper.make_node("Relu", [f"m{i}"], [f"h{i}"], name=f"/l{i}/Relu")]
        previous = f"h{i}"
    nodes.append(helper.make_node("Add", [previous, "h0"], ["y"], name="/skip/Add"))
    graph = helper.make_graph(
        nodes, "skip_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, width])],
        initializer=inits)
    return make_model(graph)


def _stages_from_manifest(folder: Path) -> list[dict]:
    return json.loads((folder / "manifest.json").read_text())["stages"]


def test_generated_skip_model_splits_into_balanced_stages(tmp_path: Path) -> None:
    path = save(skip_mlp(), tmp_path / "skip.onnx")
    model = load_model(path)
    plan = plan_split(model, 3, "params")
    # six equal weights over three stages: two layers each, exactly balanced
    assert [s.params for s in plan.stages] == [2 * 8 * 8 * 4] * 3
    assert plan.imbalance == pytest.approx(1.0)
    written = write_split(model, plan, tmp_path / "out")
    assert [p.name for p in written.files] == ["stage_1.onnx", "stage_2.onnx", "stage_3.onnx"]
    for file in written.files:
        onnx.checker.check_model(str(file))
    stages = _stages_from_manifest(tmp_path / "out")
    # the skip tensor h0 leaves stage 1 and is taken by stage 3 straight from stage 1
    assert {"name": "h0", "from": "stage 1"} in stages[2]["inputs"]
    assert stages[0]["inputs"] == [{"name": "x", "from": "model"}]
    assert stages[2]["outputs"] == ["y"]
    check = check_chain(path, tmp_path / "out", stages)
    assert check.ok, check.describe()
    assert "match the whole model" in check.describe()


def test_a_stage_of_a_wrong_model_is_reported_as_differing(tmp_path: Path) -> None:
    path = save(skip_mlp(), tmp_path / "skip.onnx")
    model = load_model(path)
    write_split(model, plan_split(model, 2, "params"), tmp_path / "out")
    stage2 = onnx.load(str(tmp_path / "out" / "stage_2.onnx"))
    weight = stage2.graph.initializer[0]
    weight.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(weight) * 2, weight.name))
    onnx.save(stage2, str(tmp_path / "out" / "stage_2.onnx"))
    check = check_chain(path, tmp_path / "out", _stages_from_manifest(tmp_path / "out"))
    assert not check.ok
    assert "DIFFER" in check.describe() and "stage_2.onnx" in check.describe()


def test_cnn_with_skip_connections_chains_exactly(tmp_path: Path) -> None:
    path = shared_model("zoo/onnx_light/light_resnet50.onnx")
    model = load_model(path)
    plan = plan_split(model, 4, "flops")
    assert plan.imbalance <= 1 + 2 * BAND
    assert all(s.nodes for s in plan.stages)
    written = write_split(model, plan, tmp_path / "out")
    check = check_chain(path, written.folder, _stages_from_manifest(written.folder))
    assert check.ok, check.describe()
    # every node of the model is computed by exactly one stage (constants may be copied)
    computing = [i for s in plan.stages for i in s.nodes
                 if model.graph.nodes[i].op_type != "Constant"]
    assert sorted(computing) == sorted(set(computing))


def test_transformer_cuts_between_layers_and_recomputes_the_mask(tmp_path: Path) -> None:
    path = ladder_model("bert12.onnx")
    model = load_model(path)
    plan = plan_split(model, 4, "params")
    assert plan.imbalance <= 1 + 2 * BAND
    # a cut hands over one hidden state, nothing wider: the float additive mask made from
    # the model's 0/1 attention_mask is recomputed in each stage, not handed over
    assert [len([i for i in s.inputs if i.stage is not None]) for s in plan.stages] == \
        [0, 1, 1, 1]
    assert max(plan.cut_bytes) <= 2 * min(plan.cut_bytes)
    written = write_split(model, plan, tmp_path / "out")
    stages = _stages_from_manifest(written.folder)
    assert all({"name": "attention_mask", "from": "model"} in s["inputs"] for s in stages)
    assert check_chain(path, written.folder, stages).ok


def test_cli_split_json_and_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = save(skip_mlp(), tmp_path / "skip.onnx")
    code = main(["split", str(path), str(tmp_path / "out"), "--stages", "2", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert report["check"]["ok"] is True
    assert [s["file"] for s in report["stages"]] == ["stage_1.onnx", "stage_2.onnx"]
    assert {"file", "inputs", "outputs", "params", "nodes"} <= set(report["stages"][0])
    assert (tmp_path / "out" / "manifest.json").exists()


def test_cli_split_by_time_uses_a_profile(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = save(skip_mlp(), tmp_path / "skip.onnx")
    code = main(["split", str(path), str(tmp_path / "out"), "--stages", "2", "--by", "time"])
    out = capsys.readouterr().out
    assert code == 0
    assert "(by time)" in out and "match the whole model" in out


@pytest.mark.parametrize("stages", ["0", "99"])
def test_cli_refuses_impossible_stage_counts(tmp_path: Path, stages: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = save(skip_mlp(), tmp_path / "skip.onnx")
    code = main(["split", str(path), str(tmp_path / "out"), "--stages", stages])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and "stages" in err
    assert not (tmp_path / "out" / "manifest.json").exists()


def test_unknown_rank_tensors_are_never_cut(tmp_path: Path) -> None:
    model = load_model(save(skip_mlp(), tmp_path / "skip.onnx"))
    for name in ("m2", "h2"):  # pretend shape inference could not see these
        model.graph.values[name].type = type(model.graph.values[name].type)()
    plan = plan_split(model, 3, "params")
    handed = {i.name for s in plan.stages for i in s.inputs}
    assert not handed & {"m2", "h2"}


def test_plan_refuses_more_stages_than_computing_nodes(tmp_path: Path) -> None:
    model = load_model(save(skip_mlp(layers=1), tmp_path / "one.onnx"))
    with pytest.raises(CutError, match="3 computing nodes"):
        plan_split(model, 4, "params")


def test_a_large_models_stages_get_their_shapes_from_a_child_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above ISOLATE_INFERENCE_NODES the shapes the stages declare are inferred in a child
    process (onnx's C++ inference holds the GIL: 1.8 s of dag100k's Write Stages with the
    window frozen); the stages are the same."""
    from onnxstudio.model import inference
    from onnxstudio.model import open as opening

    path = save(skip_mlp(), tmp_path / "skip.onnx")
    model = load_model(path)
    in_process: list[object] = []
    original = inference.infer_shapes
    monkeypatch.setattr(opening, "ISOLATE_INFERENCE_NODES", 4)
    monkeypatch.setattr(inference, "infer_shapes",
                        lambda proto, *a, **k: in_process.append(proto)
                        or original(proto, *a, **k))
    plan = plan_split(model, 3, "params")
    written = write_split(model, plan, tmp_path / "out")
    assert in_process == []
    for file in written.files:
        onnx.checker.check_model(str(file), full_check=True)
    assert check_chain(path, tmp_path / "out", _stages_from_manifest(tmp_path / "out")).ok
