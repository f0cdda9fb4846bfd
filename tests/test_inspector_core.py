"""Qt-free inspector core: operator docs, attribute text, provenance, weights, search, convert."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxstudio.model import load_model
from onnxstudio.model.convert import ConversionError, convert_opset, default_target_path
from onnxstudio.model.index import ModelIndex
from onnxstudio.model.nodeinfo import (
    attributes_json,
    format_attribute,
    parse_class_hierarchy,
    parse_stack_trace,
    short_class,
)
from onnxstudio.model.opdoc import markdown_to_html, opdoc_html, operator_doc
from onnxstudio.model.search import SearchQuery, SearchSyntaxError, search
from onnxstudio.model.weights import (
    WeightReadError,
    WeightStore,
    as_matrix,
    display_array,
    row_index_label,
    tensor_stats,
)
from tests.builders import make_model, save, tiny_mlp
from tests.conftest import ladder_model, shared_model

TESTDATA = "ortdata/onnxruntime/test/testdata/"


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- operator docs -------------------------------------------------------------------

def test_opdoc_matches_onnx_schema_in_force():
    doc = operator_doc("Conv", "", 13)
    schema = onnx.defs.get_schema("Conv", max_inclusive_version=13)
    assert doc is not None and doc.since_version == schema.since_version == 11
    assert [p.name for p in doc.inputs] == [p.name for p in schema.inputs]
    assert doc.inputs[2].option == "optional"
    assert {a.name for a in doc.attributes} == set(schema.attributes)
    assert next(a for a in doc.attributes if a.name == "group").default == "1"
    text = opdoc_html(doc)
    for part in ("Attributes", "Inputs", "Outputs", "Type constraints", "auto_pad",
                 "tensor(float)"):
        assert part in text


def test_opdoc_unknown_operator_is_none():
    assert operator_doc("Mystery", "com.acme", 1) is None
    assert operator_doc("Mystery", "", 13) is None


def test_opdoc_of_a_contrib_operator_comes_from_onnxruntime():
    doc = operator_doc("FastGelu", "com.microsoft", 1)
    assert doc is not None and doc.domain == "com.microsoft"
    assert [p.name for p in doc.inputs] == ["X", "bias"] and doc.inputs[1].option == "optional"
    assert doc.inputs[0].type_str == "T"


def test_markdown_subset():
    out = markdown_to_html("A `x<y` and **bold**.\n\n* one\n* two\n\n```\ncode\n```\n"
                           "See [the doc](Broadcasting.md).")
    assert "<code>x&lt;y</code>" in out and "<b>bold</b>" in out
    assert "<ul><li>one</li><li>two</li></ul>" in out and "<pre>code</pre>" in out
    assert 'href="https://github.com/onnx/onnx/blob/main/docs/Broadcasting.md"' in out


# --- attributes and provenance -----------------------------------------------------------

def test_attribute_text_and_json(tmp_path):
    model = load_model(save(tiny_mlp(), tmp_path / "m.onnx"))
    softmax = next(n for n in model.graph.nodes if n.op_type == "Softmax")
    assert format_attribute(softmax.attribute("axis")) == "-1"
    assert json.loads(attributes_json(softmax)) == {"axis": -1}


def test_stack_trace_and_class_hierarchy_parsing():
    trace = ('File "site-packages/a/model.py", line 653, in forward\n    y = self.emb(x)\n'
             '  File "site-packages/a/emb.py", line 93, in forward\n    return torch.gather(x)')
    frames = parse_stack_trace(trace)
    assert [(f.file, f.line, f.function) for f in frames] == [
        ("site-packages/a/model.py", 653, "forward"), ("site-packages/a/emb.py", 93, "forward")]
    assert frames[-1].code == "return torch.gather(x)"
    chain = parse_class_hierarchy("['pkg.Bert', 'pkg.Emb', 'aten.gather.default']")
    assert chain == ["pkg.Bert", "pkg.Emb", "aten.gather.default"]
    assert [short_class(c) for c in chain] == ["Bert", "Emb", "aten.gather"]


# --- weights -------------------------------------------------------------------------------

def bf16_model(tmp_path):
    values = [1.5, -2.0, 3.140625, 0.0, -0.0078125, 65280.0]
    tensor = helper.make_tensor("w_bf16", TensorProto.BFLOAT16, [2, 3], values)
    graph = helper.make_graph(
        [helper.make_node("Cast", ["w_bf16"], ["y"], to=TensorProto.FLOAT, name="cast")],
        "bf16", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        initializer=[tensor])
    return save(make_model(graph), tmp_path / "bf16.onnx"), np.array(values, np.float32)


def test_bfloat16_widened_exactly(tmp_path):
    path, expected = bf16_model(tmp_path)
    raw = WeightStore(path).read("w_bf16")
    assert raw.dtype.name == "bfloat16"
    shown = display_array(raw)
    assert shown.dtype == np.float32
    np.testing.assert_array_equal(shown.ravel(), expected)
    stats = tensor_stats(shown)
    assert stats.minimum == -2.0 and stats.maximum == 65280.0 and stats.zeros == 1


def test_weight_stats_equal_numpy_on_external_data():
    path = ladder_model("hf_bert12_dynamo.onnx")
    name = "embeddings.position_embeddings.weight"
    proto = onnx.load(str(path), load_external_data=False)
    tensor = next(t for t in proto.graph.initializer if t.name == name)
    expected = numpy_helper.to_array(tensor, base_dir=str(path.parent))
    values = WeightStore(path).read(name)
    np.testing.assert_array_equal(values, expected)
    stats = tensor_stats(values)
    assert stats.minimum == float(expected.min()) and stats.maximum == float(expected.max())
    assert stats.mean == pytest.approx(float(expected.astype(np.float64).mean()), rel=1e-12)
    assert stats.std == pytest.approx(float(expected.astype(np.float64).std()), rel=1e-12)
    assert stats.zeros == int((expected == 0).sum())
    assert int(stats.histogram.sum()) == expected.size


def test_weight_store_unknown_name(tmp_path):
    with pytest.raises(WeightReadError, match="no initializer named 'nope'"):
        WeightStore(save(tiny_mlp(), tmp_path / "m.onnx")).read("nope")


def test_matrix_view_and_row_labels():
    array = np.arange(24).reshape(2, 3, 4)
    matrix = as_matrix(array)
    assert matrix.shape == (6, 4) and matrix[5, 3] == 23
    assert row_index_label((2, 3, 4), 5) == "[1, 2, :]"
    assert as_matrix(np.float32(3)).shape == (1, 1)


def test_stats_ignore_nan_and_inf():
    stats = tensor_stats(np.array([1.0, np.nan, np.inf, -1.0, 0.0], np.float32))
    assert (stats.nans, stats.infs, stats.minimum, stats.maximum) == (1, 1, -1.0, 1.0)


# --- search ----------------------------------------------------------------------------

def test_search_by_name_op_type_regex_and_case():
    model = load_model(shared_model(TESTDATA + "if_mul.onnx"))
    hits = search(model, SearchQuery("mul_0")).hits
    assert [(h.kind, h.target) for h in hits if h.kind == "node"] == [
        ("node", "n0/then_branch/n0")]
    by_type = search(model, SearchQuery("Mul"))
    assert by_type.node_ids >= {"n0/then_branch/n0", "n0/else_branch/n0"}
    regex = search(model, SearchQuery(r"^mul_\d$", regex=True))
    assert {h.target for h in regex.hits if h.kind == "node"} == {
        "n0/then_branch/n0", "n0/else_branch/n0"}
    assert not [h for h in search(model, SearchQuery("MUL_0", case_sensitive=True)).hits
                if h.kind == "node"]
    with pytest.raises(SearchSyntaxError):
        search(model, SearchQuery("(", regex=True))


def test_search_tensors_point_at_producer_or_input_box(tmp_path):
    model = load_model(save(tiny_mlp(), tmp_path / "m.onnx"))
    index = ModelIndex(model)
    hits = {h.name: h for h in search(model, SearchQuery("h1"), index).hits}
    producer = next(n for n in model.graph.nodes if "h1" in n.outputs)
    assert hits["h1"].kind == "tensor" and hits["h1"].target == producer.id
    assert search(model, SearchQuery("x", regex=True)).hits  # graph input
    x_hit = next(h for h in search(model, SearchQuery("^x$", regex=True)).hits)
    assert (x_hit.kind, x_hit.target) == ("input", "in:x")
    w_hit = next(h for h in search(model, SearchQuery("W1")).hits)
    assert w_hit.kind == "initializer" and w_hit.target == model.graph.nodes[0].id


# --- opset conversion ------------------------------------------------------------------------

def test_convert_writes_new_checked_file_and_keeps_original(tmp_path):
    source = shared_model(TESTDATA + "conv_qdq_s8s8_perchannel.onnx")
    before = sha(source)
    target = tmp_path / "converted.onnx"
    result = convert_opset(source, 21, target)
    assert result.path == target and result.source_opset == 13
    onnx.checker.check_model(str(target))
    converted = onnx.load(str(target))
    assert next(o.version for o in converted.opset_import if o.domain == "") == 21
    assert sha(source) == before
    with pytest.raises(ConversionError, match="already exists"):
        convert_opset(source, 21, target)


def test_convert_external_data_model(tmp_path):
    source = ladder_model("hf_bert12_dynamo.onnx")
    data = source.with_name(source.name + ".data")
    before, before_data = sha(source), sha(data)
    result = convert_opset(source, 20, tmp_path / "bert20.onnx")
    assert result.external_data == tmp_path / "bert20.onnx.data"
    onnx.checker.check_model(str(result.path))
    assert (sha(source), sha(data)) == (before, before_data)


def test_convert_refuses_source_and_reports_failures(tmp_path):
    source = save(tiny_mlp(), tmp_path / "m.onnx")
    with pytest.raises(ConversionError, match="opened model"):
        convert_opset(source, 19, source, overwrite=True)
    with pytest.raises(ConversionError, match="not one onnx knows"):
        convert_opset(source, 999, tmp_path / "x.onnx")
    if_mul = shared_model(TESTDATA + "if_mul.onnx")
    with pytest.raises(ConversionError, match=r"cannot convert if_mul\.onnx from opset 24 to 5"):
        convert_opset(if_mul, 5, tmp_path / "old.onnx")
    assert not (tmp_path / "old.onnx").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".onnxstudio-convert")]
    assert default_target_path(source, 19).name == "m.opset19.onnx"


def test_weights_refuse_external_data_outside_the_model_folder(tmp_path):
    from onnxstudio.errors import OnnxStudioError

    model = tiny_mlp()
    outside = tmp_path / "secret.bin"
    outside.write_bytes(b"\0" * 4096)
    folder = tmp_path / "model"
    folder.mkdir()
    w1 = next(t for t in model.graph.initializer if t.name == "W1")
    w1.ClearField("raw_data")
    w1.ClearField("float_data")
    w1.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "../secret.bin"), ("offset", "0"), ("length", "128")):
        entry = w1.external_data.add()
        entry.key, entry.value = key, value
    path = folder / "m.onnx"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(OnnxStudioError, match="outside the model's folder"):
        WeightStore(path).read("W1")
