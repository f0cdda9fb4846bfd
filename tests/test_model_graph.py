"""The graph model built from a ModelProto: edges, bodies, functions, schemas, shapes."""

from __future__ import annotations

from pathlib import Path

import onnx
from onnx import TensorProto, helper

from onnxstudio.model import load_model
from onnxstudio.model.index import node_by_id
from tests.builders import IR_VERSION, make_model, save, tiny_mlp
from tests.conftest import shared_model


def test_producers_consumers_and_initializers(tmp_path: Path) -> None:
    proto = tiny_mlp()
    # IR<4 style: weights also listed as graph inputs. They must not show as model inputs.
    proto.graph.input.extend([helper.make_tensor_value_info("W1", TensorProto.FLOAT, [4, 8])])
    model = load_model(save(proto, tmp_path / "mlp.onnx"))
    g = model.graph
    assert g.inputs == ["x"]
    assert g.outputs == ["y"]
    assert set(g.initializers) == {"W1", "b1", "W2"}
    assert g.values["W1"].kind == "initializer"
    h1 = g.values["h1"]
    assert g.nodes[h1.producer].op_type == "Add"
    assert [g.nodes[i].op_type for i in h1.consumers] == ["Relu"]
    assert g.values["x"].consumers == (0,)
    assert model.parameters == 4 * 8 + 8 + 8 * 3
    assert model.weight_bytes == model.parameters * 4
    assert [n.id for n in g.nodes] == ["n0", "n1", "n2", "n3", "n4"]


def test_shapes_from_inference_keep_symbolic_dims(tmp_path: Path) -> None:
    model = load_model(save(tiny_mlp(), tmp_path / "mlp.onnx"))
    assert model.graph.values["h0"].type.dtype == "float32"
    assert model.graph.values["h0"].type.shape == ("batch", 8)
    assert model.graph.values["y"].type.shape == ("batch", 3)


def test_schema_versions_deprecated_unknown_and_custom(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("Relu", ["x"], ["a"]),
        helper.make_node("Upsample", ["a", "scales"], ["b"], mode="nearest"),
        helper.make_node("FancyOp", ["b"], ["c"], domain="com.example"),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2]),
                     helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, None)])
    proto = make_model(graph, opset_imports=[helper.make_opsetid("", 10),
                                             helper.make_opsetid("com.example", 1)])
    model = load_model(save(proto, tmp_path / "ops.onnx"))
    relu, upsample, fancy = model.graph.nodes
    assert relu.schema.known and relu.schema.since_version == 6
    assert relu.schema.latest_version == onnx.defs.get_schema("Relu").since_version
    assert upsample.schema.deprecated and upsample.schema.since_version == 10
    assert not fancy.schema.known and fancy.schema.custom_domain
    assert any("FancyOp" in w for w in model.warnings)
    assert "Rectified Linear" in relu.schema.doc or relu.schema.doc


def test_if_body_is_nested_with_captured_values(tmp_path: Path) -> None:
    then_g = helper.make_graph([helper.make_node("Add", ["x", "bias"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])])
    graph = helper.make_graph(
        [helper.make_node("Identity", ["b"], ["bias"]),
         helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)],
        "g", [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
              helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
              helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = load_model(save(make_model(graph), tmp_path / "if.onnx"))
    if_node = model.graph.nodes[1]
    assert set(if_node.subgraphs) == {"then_branch", "else_branch"}
    then_body = if_node.subgraphs["then_branch"]
    assert sorted(then_body.captured) == ["bias", "x"]
    assert then_body.nodes[0].id == "n1/then_branch/n0"
    assert model.graph.node_count_total() == 4
    assert node_by_id(model, "n1/else_branch/n0").op_type == "Neg"
    assert if_node.attribute("then_branch").value == "then_branch"


def test_local_function_calls_link_to_their_body(tmp_path: Path) -> None:
    fn = helper.make_function(
        "custom", "Swish", ["x"], ["y"],
        [helper.make_node("Sigmoid", ["x"], ["s"]), helper.make_node("Mul", ["x", "s"], ["y"])],
        opset_imports=[helper.make_opsetid("", 21)])
    graph = helper.make_graph(
        [helper.make_node("Swish", ["a"], ["b"], domain="custom")], "g",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [3])])
    opsets = [helper.make_opsetid("", 21), helper.make_opsetid("custom", 1)]
    proto = make_model(graph, functions=[fn], opset_imports=opsets)
    model = load_model(save(proto, tmp_path / "fn.onnx"))
    call = model.graph.nodes[0]
    assert call.function == ("custom", "Swish")
    body = model.function(call.function)
    assert body is not None and [n.op_type for n in body.body.nodes] == ["Sigmoid", "Mul"]
    assert not any("Swish" in w for w in model.warnings)  # a function is not an unknown op


def test_model_level_fields(tmp_path: Path) -> None:
    proto = tiny_mlp()
    proto.doc_string = "a tiny model"
    proto.model_version = 3
    helper.set_model_props(proto, {"author": "tests", "license": "MIT"})
    model = load_model(save(proto, tmp_path / "m.onnx"))
    assert model.ir_version == IR_VERSION
    assert model.producer_name == "onnxstudio-tests"
    assert model.metadata == {"author": "tests", "license": "MIT"}
    assert model.doc_string == "a tiny model" and model.model_version == 3
    assert model.opset_imports == {"": 21}


def test_real_loop_and_scan_bodies() -> None:
    loop = load_model(shared_model("ortdata/onnxruntime/test/testdata/loop_sub_one.onnx"))
    bodies = [b for n in loop.graph.nodes for b in n.subgraphs.values()]
    assert bodies and all(b.nodes for b in bodies)
    nested = load_model(shared_model(
        "ortdata/onnxruntime/test/testdata/three_layer_nested_subgraph.onnx"))
    proto = onnx.load(str(nested.path), load_external_data=False)

    def count(g: onnx.GraphProto) -> int:
        return len(g.node) + sum(count(a.g) for n in g.node for a in n.attribute
                                 if a.type == onnx.AttributeProto.GRAPH)

    assert nested.graph.node_count_total() == count(proto.graph) > len(proto.graph.node)


def test_captured_values_keep_the_order_they_entered_the_body(tmp_path: Path) -> None:
    """A body's declared (value_info) outer names come first, then those it reads, in
    reading order; a name the body defines itself is never captured."""
    then_g = helper.make_graph(
        [helper.make_node("Add", ["b", "a"], ["s"]), helper.make_node("Mul", ["s", "c"], ["t"])],
        "then", [], [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])],
        value_info=[helper.make_tensor_value_info("c", TensorProto.FLOAT, [2])])
    else_g = helper.make_graph([helper.make_node("Neg", ["a"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])])
    graph = helper.make_graph(
        [helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)],
        "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in "abc"]
        + [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = load_model(save(make_model(graph), tmp_path / "if.onnx"))
    then_body = model.graph.nodes[0].subgraphs["then_branch"]
    assert then_body.captured == ["c", "b", "a"]
    assert then_body.values["c"].kind == "captured"
    assert then_body.values["s"].kind == "intermediate"
    assert model.graph.captured == []


def test_repeated_constants_each_show_their_own_tensor(tmp_path: Path) -> None:
    """Identical small tensors are summarised once and shared; each node still shows
    the tensor it holds, large ones included."""
    def constant(out: str, values: list[float]) -> onnx.NodeProto:
        tensor = helper.make_tensor("value", TensorProto.FLOAT, [len(values)], values)
        return helper.make_node("Constant", [], [out], value=tensor)

    big = [float(i) for i in range(400)]  # over the 1 KiB under which summaries are shared
    nodes = [constant("k0", [1.0, 2.0]), constant("k1", [1.0, 2.0]), constant("k2", [3.0]),
             constant("k3", big), helper.make_node("Concat", ["k0", "k1", "k2", "k3"],
                                                   ["y"], axis=0)]
    graph = helper.make_graph(nodes, "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = load_model(save(make_model(graph), tmp_path / "const.onnx"))
    shown = [n.attribute("value").value for n in model.graph.nodes[:4]]
    assert [s.preview for s in shown[:3]] == ["[1.0, 2.0]", "[1.0, 2.0]", "[3.0]"]
    assert shown[3].shape == (400,) and shown[3].preview.startswith("[0.0, 1.0, 2.0")
    assert shown[0] is shown[1]
    assert model.graph.values["k3"].type.shape == (400,)


def test_a_dangling_input_is_found_first_in_node_order_even_inside_a_body() -> None:
    from onnxstudio.model.guard import unsafe_for_inference

    def model(branch_reads: str, later_reads: str) -> onnx.ModelProto:
        body = helper.make_graph([helper.make_node("Identity", [branch_reads], ["t"],
                                                   name="inner")], "then", [],
                                 [helper.make_tensor_value_info("t", TensorProto.FLOAT, [1])])
        nodes = [helper.make_node("If", ["cond"], ["y"], then_branch=body, else_branch=body),
                 helper.make_node("Relu", [later_reads, ""], ["r"])]
        return make_model(helper.make_graph(
            nodes, "g", [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                         helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
            [helper.make_tensor_value_info("r", TensorProto.FLOAT, [1])]))

    assert unsafe_for_inference(model("x", "x")) is None
    assert "input 'ghost' of node 'inner'" in (unsafe_for_inference(model("ghost", "nope"))
                                               or "")
    assert "input 'nope' of node 'Relu'" in (unsafe_for_inference(model("x", "nope")) or "")
