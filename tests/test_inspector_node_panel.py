"""Node panel on real models: what it displays equals what onnx reports."""

from __future__ import annotations

import json

import onnx
import pytest
from onnx import helper
from PySide6.QtCore import Qt

from onnxstudio.model import load_model
from onnxstudio.model.nodeinfo import STACK_TRACE_KEY, parse_stack_trace
from onnxstudio.ui.inspector.node_panel import EMPTY_TEXT, NodePanel
from tests.builders import save, tiny_mlp
from tests.conftest import ladder_model, shared_model

TESTDATA = "ortdata/onnxruntime/test/testdata/"


@pytest.fixture
def panel(qtbot):
    widget = NodePanel()
    qtbot.addWidget(widget)
    widget.resize(420, 800)
    widget.show()
    return widget


def value_text(panel: NodePanel, section: str, name: str) -> str:
    item = panel.tree.find_row(name, section)
    assert item is not None, f"no row {name!r} in {section!r}: {panel.tree.row_texts()}"
    return item.text(1)


def click_row(qtbot, panel: NodePanel, section: str, name: str) -> None:
    item = panel.tree.find_row(name, section)
    assert item is not None
    panel.tree.scrollToItem(item)
    rect = panel.tree.visualItemRect(item)
    qtbot.mouseClick(panel.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def expected_attribute_text(attr: onnx.AttributeProto) -> str:
    value = helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        return repr(value.decode())
    if isinstance(value, float):
        return repr(value)
    return str(value)


def inferred_types(proto: onnx.ModelProto) -> dict[str, str]:
    """dtype[shape] of every value, as onnx's own shape inference reports it."""
    inferred = onnx.shape_inference.infer_shapes(proto)
    out = {}
    g = inferred.graph
    for vi in (*g.input, *g.output, *g.value_info):
        tt = vi.type.tensor_type
        dtype = helper.tensor_dtype_to_np_dtype(tt.elem_type).name
        dims = [d.dim_param or str(d.dim_value) if (d.dim_param or d.HasField("dim_value"))
                else "?" for d in tt.shape.dim]
        out[vi.name] = f"{dtype}[{'×'.join(dims) or 'scalar'}]"
    for init in g.initializer:
        dtype = helper.tensor_dtype_to_np_dtype(init.data_type).name
        out[init.name] = f"{dtype}[{'×'.join(str(d) for d in init.dims) or 'scalar'}]"
    return out


def test_empty_state(panel):
    assert panel.stack.currentWidget() is panel.placeholder
    assert panel.placeholder.text() == EMPTY_TEXT


def test_quantized_model_versions_attributes_and_shapes(panel):
    path = shared_model(TESTDATA + "conv_qdq_s8s8_perchannel.onnx")
    proto = onnx.load(str(path))
    model = load_model(path)
    opset = next(o.version for o in proto.opset_import if o.domain == "")
    types = inferred_types(proto)
    assert len(proto.graph.node) == len(model.graph.nodes)
    for node_proto, node in zip(proto.graph.node, model.graph.nodes, strict=True):
        panel.show_node(model, node.id)
        assert value_text(panel, "Node", "Type") == node_proto.op_type
        assert value_text(panel, "Node", "Name") == node_proto.name
        in_force = onnx.defs.get_schema(node_proto.op_type, max_inclusive_version=opset)
        newest = onnx.defs.get_schema(node_proto.op_type)
        assert value_text(panel, "Node", "Version in force") == str(in_force.since_version)
        assert value_text(panel, "Node", "Newest version") == str(newest.since_version)
        for attr in node_proto.attribute:
            assert value_text(panel, "Attributes", attr.name) == expected_attribute_text(attr)
        for slot, name in zip([p.name for p in in_force.inputs], node_proto.input,
                              strict=False):
            tensor, shape = value_text(panel, "Inputs", slot).split("\n")
            assert tensor == name and shape == types[name]
        for slot, name in zip([p.name for p in in_force.outputs], node_proto.output,
                              strict=False):
            tensor, shape = value_text(panel, "Outputs", slot).split("\n")
            assert tensor == name and shape == types[name]
    conv = next(n for n in model.graph.nodes if n.op_type == "Conv")
    panel.show_node(model, conv.id)
    assert "v11" in panel.header.text() and "newest v22" in panel.header.text()
    assert "Conv" in panel.docs.toPlainText() and "Type constraints" in panel.docs.toPlainText()
    # per-channel quantization: the axis attribute of DequantizeLinear on the weights
    dq = next(n for n in proto.graph.node
              if n.op_type == "DequantizeLinear" and any(a.name == "axis" for a in n.attribute))
    panel.show_node(model, next(n.id for n in model.graph.nodes if n.name == dq.name))
    assert value_text(panel, "Attributes", "axis") == str(dq.attribute[0].i)


def test_custom_domain_operator(panel):
    path = shared_model(TESTDATA + "transform/fusion/gpt2_past_mask_one_layer.onnx")
    model = load_model(path)
    node = next(n for n in model.graph.nodes if n.domain == "com.microsoft")
    panel.show_node(model, node.id)
    header = panel.header.text()
    assert "custom domain com.microsoft" in header and "no onnx schema" in header
    assert value_text(panel, "Node", "Domain") == "com.microsoft"
    assert panel.tree.find_row("Version in force", "Node") is None
    # onnx has no schema, onnxruntime does: its docs and input names are shown
    assert "com.microsoft" in panel.docs.toPlainText()
    names = {r[0] for r in panel.tree.row_texts()}
    assert not any(n.startswith("input ") for n in names), names


def test_unknown_contrib_operator_without_name(panel):
    model = load_model(shared_model(TESTDATA + "custom_op_string_lower.onnx"))
    node = next(n for n in model.graph.nodes if n.op_type == "StringLower")
    panel.show_node(model, node.id)
    assert value_text(panel, "Node", "Name") == "(unnamed)"
    assert "custom domain ai.onnx.contrib" in panel.header.text()


@pytest.mark.parametrize(("file", "attrs"), [
    ("if_mul.onnx", ["then_branch", "else_branch"]),
    ("loop_sub_one.onnx", ["body"]),
])
def test_control_flow_bodies_are_links(qtbot, panel, file, attrs):
    model = load_model(shared_model(TESTDATA + file))
    node = model.graph.nodes[0]
    panel.show_node(model, node.id)
    for attr in attrs:
        assert value_text(panel, "Attributes", attr) == f"⟶ {attr}"
        with qtbot.waitSignal(panel.expandBody, timeout=2000) as blocker:
            click_row(qtbot, panel, "Attributes", attr)
        assert blocker.args == [node.id]
    inner = next(iter(node.subgraphs.values())).nodes[0]
    panel.show_node(model, inner.id)
    assert value_text(panel, "Node", "Type") == inner.op_type
    assert panel.tree.find_row("Inside", "Node") is not None


def test_dynamo_export_source_location_and_links(qtbot, panel):
    path = ladder_model("hf_bert12_dynamo.onnx")
    proto = onnx.load(str(path), load_external_data=False)
    model = load_model(path)
    index, node_proto = next((i, n) for i, n in enumerate(proto.graph.node)
                             if any(p.key == STACK_TRACE_KEY for p in n.metadata_props))
    node = model.graph.nodes[index]
    panel.show_node(model, node.id)
    trace = next(p.value for p in node_proto.metadata_props if p.key == STACK_TRACE_KEY)
    last = parse_stack_trace(trace)[-1]
    assert value_text(panel, "Source", "Location") == f"{last.file.rsplit('/', 1)[-1]}:{last.line}"
    assert "BertEmbeddings" in value_text(panel, "Source", "Module")

    # A node reading an initializer and an intermediate value.
    inits = {t.name for t in proto.graph.initializer}
    i, matmul = next((i, n) for i, n in enumerate(proto.graph.node)
                     if n.op_type == "MatMul" and n.input[1] in inits and n.input[0] not in inits)
    panel.show_node(model, model.graph.nodes[i].id)
    with qtbot.waitSignal(panel.openInitializer, timeout=2000) as blocker:
        click_row(qtbot, panel, "Inputs", "B")
    assert blocker.args == [matmul.input[1]]
    producer = next(j for j, n in enumerate(proto.graph.node) if matmul.input[0] in n.output)
    with qtbot.waitSignal(panel.jumpToNode, timeout=2000) as blocker:
        click_row(qtbot, panel, "Inputs", "A")
    assert blocker.args == [model.graph.nodes[producer].id]


def test_graph_input_and_copy_entries(tmp_path, panel):
    model = load_model(save(tiny_mlp(), tmp_path / "m.onnx"))
    panel.show_node(model, "in:x")
    assert value_text(panel, "Tensor", "Shape") == "[batch, 4]"
    assert value_text(panel, "Tensor", "Type") == "float32"
    softmax = next(n for n in model.graph.nodes if n.op_type == "Softmax")
    panel.show_node(model, softmax.id)
    entries = dict(panel.tree.copy_entries(panel.tree.find_row("axis", "Attributes")))
    assert json.loads(entries["Copy attributes as JSON"]) == {"axis": -1}
    entries = dict(panel.tree.copy_entries(panel.tree.find_row("Name", "Node")))
    assert entries["Copy node name"] == softmax.name
    entries = dict(panel.tree.copy_entries(panel.tree.find_row("input", "Inputs")))
    assert entries["Copy tensor name"] == "logits"


def function_model(tmp_path):
    from onnx import TensorProto

    from tests.builders import make_model

    fn = helper.make_function(
        "my.local", "Swish", ["x"], ["y"],
        [helper.make_node("Sigmoid", ["x"], ["s"]), helper.make_node("Mul", ["x", "s"], ["y"])],
        [helper.make_opsetid("", 21)], doc_string="x * sigmoid(x)")
    const = helper.make_tensor("v", TensorProto.INT64, [3], [1, 2, 3])
    graph = helper.make_graph(
        [helper.make_node("Swish", ["a"], ["b"], domain="my.local", name="swish0"),
         helper.make_node("Constant", [], ["c"], name="const", value=const),
         helper.make_node("Reshape", ["b", "c"], ["d"], name="reshape")],
        "g", [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n", 2, 3])],
        [helper.make_tensor_value_info("d", TensorProto.FLOAT, None)])
    model = make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                             helper.make_opsetid("my.local", 1)],
                       functions=[fn])
    return save(model, tmp_path / "fn.onnx")


def test_local_function_call_and_tensor_attribute(qtbot, panel, tmp_path):
    model = load_model(function_model(tmp_path))
    panel.show_node(model, "n0")
    assert "local function" in panel.header.text()
    assert value_text(panel, "Node", "Function") == "my.local::Swish"
    assert value_text(panel, "Inputs", "x") == "a\nfloat32[n×2×3]"
    assert "x * sigmoid(x)" in panel.docs.toPlainText()
    with qtbot.waitSignal(panel.expandBody) as blocker:
        click_row(qtbot, panel, "Node", "Function")
    assert blocker.args == ["n0"]
    panel.show_node(model, "n1")
    assert value_text(panel, "Attributes", "value") == "int64[3] [1, 2, 3]"
    panel.show_node(model, "out:d")
    assert panel.tree.find_row("←", "Producer").text(1) == "Reshape reshape"
