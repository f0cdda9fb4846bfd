"""Scope parsing, tree shaping (merging, untangling, chunking) and operator labels."""

from __future__ import annotations

import copy

import pytest

from onnxstudio.layout import labels
from onnxstudio.layout.scopes import ScopeGroup, build_scope_tree, scope_path
from onnxstudio.layout.types import Box, Edge, Layout
from onnxstudio.model.graph import Attribute, Graph, InitializerInfo, Node
from tests.layout_checks import check_layout


@pytest.mark.parametrize(("name", "expected"), [
    ("/encoder/layer.3/attention/MatMul", ("encoder", "layer.3", "attention")),
    ("encoder.layer.3.attention.MatMul", ("encoder", "layer.3", "attention")),
    ("a::b::c", ("a", "b")),
    ("node_MatMul_297", ()),
    ("MatMul", ()),
    ("/MatMul", ()),
])
def test_scope_path_naming_styles(name: str, expected: tuple[str, ...]) -> None:
    assert scope_path(name) == expected


def test_scope_path_from_dynamo_metadata() -> None:
    meta = {"pkg.torch.onnx.name_scopes":
            "['', 'encoder', 'encoder.layer.2', 'encoder.layer.2.attention', 'add_11']"}
    assert scope_path("node_add_11", meta) == ("encoder", "layer.2", "attention")
    namespace = {"namespace": ": transformers.BertModel/embeddings: transformers.BertEmbeddings"
                              "/embeddings.word_embeddings: torch.nn.Embedding/embedding: aten"}
    assert scope_path("node_embedding", namespace) == ("embeddings", "word_embeddings")
    # a scoped name wins over metadata
    assert scope_path("/x/Add", meta) == ("x",)


def test_single_child_groups_merge_and_lone_nodes_lift() -> None:
    tree = build_scope_tree([
        ("n0", ("a", "b", "c")), ("n1", ("a", "b", "c")),  # a/b/c: a chain of one-child groups
        ("n2", ("solo",)),  # a group holding one node is just that node
        ("n3", ("d",)), ("n4", ("d",)),
    ])
    top = tree.root.children
    assert top[1] == "n2"
    merged = top[0]
    assert isinstance(merged, ScopeGroup)
    assert merged.id == "/a/b/c" and merged.label == "a/b/c" and merged.node_count == 2
    assert tree.ancestors("n0") == [merged]
    assert tree.group_of["n2"] is tree.root


def test_large_flat_groups_are_chunked_in_order() -> None:
    pairs = [(f"n{i}", ()) for i in range(1000)]
    tree = build_scope_tree(pairs, limit=100)
    chunks = tree.root.children
    assert len(chunks) == 10
    assert all(isinstance(c, ScopeGroup) and c.kind == "chunk" for c in chunks)
    first = chunks[0]
    assert isinstance(first, ScopeGroup)
    assert first.children[:2] == ["n0", "n1"] and first.node_count == 100
    assert [c.id for c in chunks[:2]] == ["/#0", "/#1"]  # type: ignore[union-attr]
    assert first.label == "n0 … n99"  # named by the first and last node it spans
    # chunks of chunks when even the chunks are too many
    deep = build_scope_tree([(f"n{i}", ()) for i in range(2000)], limit=10)
    assert len(deep.root.children) <= 10


def test_chunks_follow_the_data_flow() -> None:
    """Graph order n0..n299 but data flowing n299 -> n0: chunks must not point backwards."""
    pairs = [(f"n{i}", ()) for i in range(300)]
    edges = {f"n{i + 1}": [f"n{i}"] for i in range(299)}
    tree = build_scope_tree(pairs, edges=edges, limit=100)
    first = tree.root.children[0]
    assert isinstance(first, ScopeGroup) and first.children[0] == "n299"


def test_cycle_making_group_is_dissolved() -> None:
    # r/Relu feeds conv2, whose output comes back into r/Relu_1: group "r" would be a cycle
    pairs = [("n0", ("r",)), ("n1", ()), ("n2", ("r",)), ("n3", ()), ("n4", ())]
    edges = {"n0": ["n1"], "n1": ["n2"], "n2": ["n3"], "n3": ["n4"]}
    tree = build_scope_tree(pairs, edges=edges)
    assert "/r" not in tree.by_id
    kept = build_scope_tree(pairs, edges={"n0": ["n2"], "n2": ["n1"]})
    assert "/r" in kept.by_id


def _shape(item: ScopeGroup | str) -> object:
    return [_shape(c) for c in item.children] if isinstance(item, ScopeGroup) else item


def test_untangling_goes_on_with_the_groups_a_dissolved_group_brings_up() -> None:
    """/a closes a cycle through x; dissolved, it leaves /a/b at the top, which closes
    one through y: that goes too, and the order of the boxes is kept."""
    pairs = [("a1", ("a",)), ("x", ()), ("b1", ("a", "b")), ("y", ()), ("b2", ("a", "b")),
             ("b3", ("a", "b"))]
    edges = {"a1": ["x"], "x": ["b1"], "b1": ["y"], "y": ["b2"], "b2": ["b3"]}
    tree = build_scope_tree(pairs, edges=edges)
    assert _shape(tree.root) == ["a1", "b1", "b2", "b3", "x", "y"]
    assert list(tree.by_id) == ["/"]


def test_untangling_reaches_levels_inside_a_kept_group() -> None:
    """/p is acyclic among the top boxes and stays; inside it, /p/q closes a cycle
    through m and is dissolved into /p."""
    pairs = [("q1", ("p", "q")), ("m", ("p",)), ("q2", ("p", "q")), ("z", ())]
    tree = build_scope_tree(pairs, edges={"q1": ["m"], "m": ["q2"], "q2": ["z"]})
    assert _shape(tree.root) == [["q1", "q2", "m"], "z"]
    assert tree.by_id["/p"].node_count == 3 and tree.group_of["m"] is tree.by_id["/p"]


def test_graph_links_name_every_writer_of_a_value() -> None:
    """A value written twice (an invalid graph the reader still loads) links both
    writers to its reader, as walking the nodes' outputs would."""
    from onnxstudio.layout.scopes import graph_links
    from onnxstudio.model.graph import Value

    nodes = [Node(id=f"n{i}", index=i, name=f"n{i}", op_type="Relu", domain="",
                  inputs=ins, outputs=outs) for i, (ins, outs) in enumerate(
                      [(["x"], ["v"]), (["x"], ["v"]), (["v"], ["y"])])]
    values = {"x": Value("x", kind="input", consumers=[0, 1]),
              "v": Value("v", producer=1, consumers=[2]), "y": Value("y", producer=2)}
    links = graph_links(Graph(name="g", id_prefix="", nodes=nodes, values=values,
                              inputs=["x"], outputs=["y"]))
    assert sorted(zip(links.src.tolist(), links.dst.tolist(), strict=True)) == [(0, 2), (1, 2)]
    assert sorted(links.free.tolist()) == [0, 1]


def _node(op: str, inputs: list[str], attrs: list[Attribute], domain: str = "") -> Node:
    return Node(id="n0", index=0, name="c", op_type=op, domain=domain, inputs=inputs,
                outputs=["y"], attributes=attrs)


def test_labels_key_attributes_and_folded_weights() -> None:
    conv = _node("Conv", ["x", "W", "B"], [
        Attribute("kernel_shape", "INTS", [7, 7]), Attribute("strides", "INTS", [2, 2]),
        Attribute("pads", "INTS", [3, 3, 3, 3]), Attribute("dilations", "INTS", [1, 1]),
        Attribute("group", "INT", 1)])
    assert labels.attribute_lines(conv) == ["kernel 7×7", "stride 2×2", "pads 3,3,3,3"]
    graph = Graph(name="g", id_prefix="", initializers={
        "W": InitializerInfo("W", "float32", (64, 3, 7, 7), 9408, 37632)})
    assert labels.folded_input_lines(conv, graph, {"B": "⟨64⟩"}) == ["W ⟨64×3×7×7⟩", "B ⟨64⟩"]
    perm = _node("Transpose", ["x"], [Attribute("perm", "INTS", [0, 2, 1, 3])])
    assert labels.attribute_lines(perm) == ["perm 0,2,1,3"]
    assert labels.category("Conv") == "conv"
    assert labels.category("LayerNormalization") == "norm"
    assert labels.category("MyOp", "com.acme") == "custom"
    assert labels.category("QuantizeLinear") == "quant"


def test_check_layout_catches_defects() -> None:
    """The geometric checks used everywhere above can fail."""
    good = Layout("TB", 100, 100, [
        Box("a", "node", 0, 0, 50, 20, "A"), Box("b", "node", 0, 40, 50, 20, "B")],
        [], [Edge("a", "b", "v", points=[(25, 20), (25, 40)])])
    check_layout(good)
    overlapping = copy.deepcopy(good)
    overlapping.boxes[1].y = 10
    with pytest.raises(AssertionError):
        check_layout(overlapping)
    detached = copy.deepcopy(good)
    detached.edges[0].points[-1] = (25, 55)
    with pytest.raises(AssertionError):
        check_layout(detached)
