"""The model diff on real models: renamed copies, single edits, quantised and
opset-converted copies are paired by structure and each change is reported once."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import onnx
import pytest

from onnxstudio.model import load_model
from onnxstudio.model.diff import ModelDiff, diff_models
from tests import diff_edits
from tests.conftest import ladder_model, shared_model

CANDY = "zoo/style_transfer/fns-candy.onnx"
MNIST = "zoo/mnist/mnist.onnx"


def _diff(a: Path, b: Path) -> ModelDiff:
    return diff_models(load_model(a, shape_inference=False),
                       load_model(b, shape_inference=False))


def _all_changes(result: ModelDiff) -> list[tuple[str, str, str]]:
    return [(e.title, c.kind, c.name) for e in result.nodes for c in e.changes]


def test_a_model_against_itself_is_identical():
    path = shared_model(CANDY)
    result = _diff(path, path)
    assert result.identical
    assert result.summary() == {"matched": 59, "changed": 0, "added": 0, "removed": 0}


def test_fully_renamed_copy_matches_every_node(tmp_path):
    source = shared_model(CANDY)
    model = diff_edits.load(source)
    diff_edits.rename_everything(model)
    result = _diff(source, diff_edits.save(model, tmp_path / "renamed.onnx"))
    assert result.summary() == {"matched": 59, "changed": 0, "added": 0, "removed": 0}
    assert result.match_ratio() == 1.0
    # each node paired with the one at the same place, not just any of its kind
    assert all(e.b is not None and e.b.name == f"op_{e.a.index}" for e in result.nodes if e.a)
    # renaming the graph's interface is a difference; the weights are the same values
    assert [e.status for e in result.inputs + result.outputs] == ["changed", "changed"]
    assert not result.identical


def test_unnamed_nodes_of_a_renamed_copy_match_by_position(tmp_path):
    source = shared_model("zoo/onnx_light/light_resnet50.onnx")  # nodes have no names
    model = diff_edits.load(source)
    diff_edits.rename_everything(model)
    result = _diff(source, diff_edits.save(model, tmp_path / "renamed.onnx"))
    assert result.match_ratio() == 1.0
    assert all(e.b.index == e.a.index for e in result.nodes)


def test_each_single_edit_is_reported_exactly_once(tmp_path):
    source = shared_model(CANDY)
    model = diff_edits.load(source)
    changed = diff_edits.change_attribute(model, "InstanceNormalization", "epsilon", 0.5)
    weight = diff_edits.perturb_weight(model, "Conv")
    removed = diff_edits.remove_node(model, "Relu", nth=4)
    inserted = diff_edits.insert_after(model, "Add", "Sigmoid", nth=2)
    diff_edits.rename_everything(model)  # and no name left to lean on
    result = _diff(source, diff_edits.save(model, tmp_path / "edited.onnx"))

    counts = result.summary()
    assert counts == {"matched": 56, "changed": 2, "added": 1, "removed": 1}
    assert [e.a.name for e in result.nodes if e.status == "removed"] == [removed]
    added = [e.b for e in result.nodes if e.status == "added"]
    assert [(n.op_type, n.index) for n in added] == [("Sigmoid", _index(model, "Sigmoid"))]
    assert inserted == "inserted_Sigmoid"
    changes = _all_changes(result)
    assert Counter(kind for _t, kind, _n in changes) == {"attribute": 1, "weight": 1}
    by_kind = {kind: (title, name) for title, kind, name in changes}
    assert by_kind["attribute"][0].startswith(changed) and by_kind["attribute"][1] == "epsilon"
    assert by_kind["weight"][1] == weight
    perturbed = next(c for e in result.nodes for c in e.changes if c.kind == "weight")
    assert perturbed.weight is not None and perturbed.weight.max_abs == pytest.approx(0.5)
    assert perturbed.weight.a.digest != perturbed.weight.b.digest


def _index(model: onnx.ModelProto, op_type: str) -> int:
    return next(i for i, n in enumerate(model.graph.node) if n.op_type == op_type)


def test_quantised_copy_shows_integer_kernels_and_keeps_the_rest(tmp_path):
    quantization = pytest.importorskip("onnxruntime.quantization")
    source = shared_model(MNIST)
    target = tmp_path / "mnist_int8.onnx"
    quantization.quantize_dynamic(str(source), str(target))
    result = _diff(source, target)

    removed = Counter(e.op_type for e in result.nodes if e.status == "removed")
    added = Counter(e.op_type for e in result.nodes if e.status == "added")
    # quantize_dynamic turns each Conv (its weight an initializer) into a
    # DynamicQuantizeLinear → ConvInteger → Cast → Mul chain whose Mul makes the Conv's
    # output; the MatMul (its weight made by a Reshape) stays
    assert removed == {}
    assert added == {"ConvInteger": 2, "DynamicQuantizeLinear": 2, "Cast": 2, "Mul": 2}
    swapped = [(e.a.op_type, e.b.op_type) for e in result.nodes
               if any(c.kind == "op_type" for c in e.changes)]
    assert swapped == [("Conv", "Mul"), ("Conv", "Mul")]
    kept = Counter(e.op_type for e in result.nodes if e.status in ("matched", "changed"))
    assert kept == {"Add": 3, "Relu": 2, "MaxPool": 2, "Reshape": 2, "MatMul": 1, "Conv": 2}
    assert {c.kind for e in result.nodes for c in e.changes} <= {"version", "op_type", "inputs"}
    assert not result.identical


def test_opset_converted_copy_pairs_every_node_and_names_new_versions(tmp_path):
    source = shared_model(MNIST)
    converted = onnx.version_converter.convert_version(diff_edits.load(source), 13)
    result = _diff(source, diff_edits.save(converted, tmp_path / "mnist_13.onnx"))

    assert result.match_ratio() == 1.0
    opsets = {e.key: (e.status, e.a, e.b) for e in result.opsets}
    assert opsets["ai.onnx"] == ("changed", 7, 13)
    versions = {(e.op_type, c.a, c.b) for e in result.nodes for c in e.changes
                if c.kind == "version"}
    assert ("Reshape", 5, 13) in versions and ("Conv", 1, 11) in versions
    assert all(c.kind in ("version", "attribute") for e in result.nodes for c in e.changes)


def test_renamed_ladder_transformer_matches_completely(tmp_path):
    source = ladder_model("bert12.onnx")
    model = diff_edits.load(source)
    diff_edits.rename_everything(model)
    result = _diff(source, diff_edits.save(model, tmp_path / "renamed.onnx"))
    assert result.summary()["matched"] == 1088
    assert all(e.b.index == e.a.index for e in result.nodes)


def test_value_map_links_renamed_tensors(tmp_path):
    source = shared_model(MNIST)
    model = diff_edits.load(source)
    diff_edits.rename_everything(model)
    result = _diff(source, diff_edits.save(model, tmp_path / "renamed.onnx"))
    original = diff_edits.load(source)
    mapping = result.value_map()
    for node_a, node_b in zip(original.graph.node, model.graph.node, strict=True):
        assert mapping[node_a.output[0]] == node_b.output[0]


def _single_edit_counts(source: Path, edit, tmp_path: Path) -> dict[str, int]:
    model = diff_edits.load(source)
    edit(model)
    counts = _diff(source, diff_edits.save(model, tmp_path / "edited.onnx")).summary()
    del counts["matched"]
    return counts


@pytest.mark.parametrize("relative", ["zoo/onnx_light/light_squeezenet.onnx",
                                      "zoo/onnx_light/light_inception_v1.onnx"])
def test_removing_any_relu_reports_exactly_that_removal(tmp_path, relative):
    # Fire/inception modules repeat Conv, Relu, Conv, Relu: a removal must not shift
    # every Conv above it by one (squeezenet: 8 "changed" nodes for one removed Relu).
    source = shared_model(relative)
    relus = sum(n.op_type == "Relu" for n in diff_edits.load(source).graph.node)
    wrong = {}
    for nth in range(relus):
        counts = _single_edit_counts(
            source, lambda m, nth=nth: diff_edits.remove_node(m, "Relu", nth), tmp_path)
        if counts != {"changed": 0, "added": 0, "removed": 1}:
            wrong[nth] = counts
    assert not wrong


@pytest.mark.parametrize("edit,expected", [
    (lambda m, nth: diff_edits.insert_after(m, "Relu", "Sigmoid", nth),
     ({"changed": 0, "added": 1, "removed": 0},)),
    (lambda m, nth: setattr([n for n in m.graph.node if n.op_type == "Relu"][nth],
                            "op_type", "Sigmoid"),
     ({"changed": 1, "added": 0, "removed": 0}, {"changed": 0, "added": 1, "removed": 1})),
], ids=["insert", "swap"])
def test_inserting_or_swapping_any_relu_is_one_edit(tmp_path, edit, expected):
    source = shared_model("zoo/onnx_light/light_squeezenet.onnx")
    relus = sum(n.op_type == "Relu" for n in diff_edits.load(source).graph.node)
    for nth in range(relus):
        counts = _single_edit_counts(source, lambda m, nth=nth: edit(m, nth), tmp_path)
        assert counts in expected, (nth, counts)
