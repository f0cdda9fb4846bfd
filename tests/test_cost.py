"""The cost table's figures, checked by hand on small generated models and on real ones."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxstudio.layout.cost_table import cost_table
from onnxstudio.model import load_model
from onnxstudio.model.cost import ModelCost
from onnxstudio.model.load import read_model_proto
from tests.builders import make_model, save, tiny_mlp
from tests.conftest import ladder_model, shared_model

F = TensorProto.FLOAT


def _cost(tmp_path: Path, proto: onnx.ModelProto, dims: dict[str, int] | None = None
          ) -> ModelCost:
    path = save(proto, tmp_path / "m.onnx")
    return cost_table(load_model(path, shape_inference=False), read_model_proto(path)[0], dims)


def _weight(name: str, *shape: int) -> onnx.TensorProto:
    return numpy_helper.from_array(np.ones(shape, np.float32), name)


def conv_with_bias() -> onnx.ModelProto:
    """x[1,3,8,8] -> Conv(W[4,3,3,3], B[4], pads 1) -> y[1,4,8,8]."""
    node = helper.make_node("Conv", ["x", "W", "B"], ["y"], name="/block/conv/Conv",
                            pads=[1, 1, 1, 1])
    graph = helper.make_graph([node], "conv", [helper.make_tensor_value_info("x", F, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", F, [1, 4, 8, 8])],
                              initializer=[_weight("W", 4, 3, 3, 3), _weight("B", 4)])
    return make_model(graph)


def test_conv_with_bias_counts_a_mac_per_weight_and_an_add_per_output(tmp_path: Path) -> None:
    cost = _cost(tmp_path, conv_with_bias())
    (node,) = cost.nodes
    # 256 outputs (4 x 8 x 8), each 3 x 3 x 3 = 27 multiply-accumulates, plus its bias add
    assert node.macs == 256 * 27 + 256 == 7168
    assert node.params == 4 * 27 + 4
    assert node.weight_bytes == 112 * 4
    assert node.output_bytes == 256 * 4
    assert cost.macs == 7168 and cost.element_ops == 0


def test_gemm_and_batched_matmul(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("Gemm", ["a", "Wg", "C"], ["g"], name="/head/Gemm", transB=1),
        helper.make_node("MatMul", ["m", "Wm"], ["y"], name="/body/MatMul"),
    ]
    graph = helper.make_graph(
        nodes, "gm",
        [helper.make_tensor_value_info("a", F, [2, 5]),
         helper.make_tensor_value_info("m", F, [2, 4, 6])],
        [helper.make_tensor_value_info("g", F, None), helper.make_tensor_value_info("y", F, None)],
        initializer=[_weight("Wg", 3, 5), _weight("C", 3), _weight("Wm", 6, 5)])
    cost = _cost(tmp_path, make_model(graph))
    gemm, matmul = cost.nodes
    assert gemm.macs == 2 * 3 * 5 + 2 * 3  # out [2,3] x K=5, plus the bias C
    assert matmul.macs == 2 * 4 * 5 * 6  # out [2,4,5] x K=6, no bias
    assert (gemm.params, matmul.params) == (18, 30)
    assert [s.name for s in cost.scopes] == []  # one node per scope: nothing to group


def test_matmulnbits_counts_the_weights_its_blocks_stand_for(tmp_path: Path) -> None:
    k, n, block = 32, 8, 16
    packed = numpy_helper.from_array(np.zeros((n, k // block, block // 2), np.uint8), "Bq")
    scales = numpy_helper.from_array(np.ones(n * k // block, np.float32), "scales")
    node = helper.make_node("MatMulNBits", ["a", "Bq", "scales"], ["y"], name="mm",
                            domain="com.microsoft", K=k, N=n, bits=4, block_size=block)
    graph = helper.make_graph([node], "nbits", [helper.make_tensor_value_info("a", F, [1, k])],
                              [helper.make_tensor_value_info("y", F, [1, n])],
                              initializer=[packed, scales])
    model = make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                             helper.make_opsetid("com.microsoft", 1)])
    (node_cost,) = _cost(tmp_path, model).nodes
    assert node_cost.macs == n * k
    assert node_cost.params == k * n  # not the 128 bytes the 4-bit blocks take
    assert node_cost.weight_bytes == 128 + 16 * 4  # stored: packed blocks and scales


def branchy_chain() -> onnx.ModelProto:
    """x[1,100] -> Relu a -> (Sigmoid b, Tanh c) -> Add y: a is alive until Tanh ran."""
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="A"),
             helper.make_node("Sigmoid", ["a"], ["b"], name="B"),
             helper.make_node("Tanh", ["a"], ["c"], name="C"),
             helper.make_node("Add", ["b", "c"], ["y"], name="D")]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", F, [1, 100])],
                              [helper.make_tensor_value_info("y", F, [1, 100])])
    return make_model(graph)


def test_peak_activation_memory_follows_the_file_order(tmp_path: Path) -> None:
    cost = _cost(tmp_path, branchy_chain())
    # 400 bytes a tensor. A: x+a; B: a+b (x freed); C: a+b+c; D: b+c+y (a freed)
    assert [n.memory_bytes for n in cost.nodes] == [800, 800, 1200, 1200]
    assert cost.peak_activation_bytes == 1200 and cost.peak_node == "n2"
    assert cost.activation_bytes == 1600 and cost.macs == 0
    assert cost.element_ops == 400  # one per output element of each node


def test_symbolic_dims_are_one_unless_given(tmp_path: Path) -> None:
    default = _cost(tmp_path, tiny_mlp())
    assert default.macs == 1 * 4 * 8 + 1 * 8 * 3
    assert "dimension batch = 1 (symbolic; set it with --dim batch=SIZE)" in default.assumptions
    sized = _cost(tmp_path, tiny_mlp(), {"batch": 4})
    assert sized.macs == 4 * (4 * 8 + 8 * 3)
    assert "dimension batch = 4 (given)" in sized.assumptions
    layer1 = next(s for s in sized.scopes if s.name == "/layer1")
    assert (layer1.macs, layer1.params, layer1.nodes) == (128, 40, 3)


def test_a_real_model_adds_up() -> None:
    path = ladder_model("resnet50.onnx")
    model = load_model(path, shape_inference=False)
    cost = cost_table(model, read_model_proto(path)[0])
    assert cost.macs == sum(n.macs for n in cost.nodes) > 0
    assert cost.params == model.parameters  # every weight read by exactly one node
    convs = [n for n in cost.nodes if n.op_type == "Conv"]
    assert all(n.macs > 0 for n in convs)
    top = [s for s in cost.scopes if s.depth == 1]
    assert sum(s.macs for s in top) <= cost.macs
    assert cost.peak_activation_bytes >= max(n.output_bytes for n in cost.nodes)


@pytest.mark.parametrize("relative", ["zoo/mnist/mnist.onnx"])
def test_a_shared_model_has_figures(relative: str) -> None:
    path = shared_model(relative)
    cost = cost_table(load_model(path, shape_inference=False), read_model_proto(path)[0])
    assert cost.macs > 0 and cost.params > 0 and not any("unknown" in a for a in cost.assumptions)


def test_attention_counts_both_products_over_the_keys(tmp_path: Path) -> None:
    """ONNX Attention (opset 23), Q[1,2,4,8] K,V[1,2,6,8]: Q·Kᵀ and softmax·V are each
    batch x heads x queries x keys x head size = 1 x 2 x 4 x 6 x 8 multiply-accumulates."""
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"], name="attn")
    graph = helper.make_graph(
        [node], "attn",
        [helper.make_tensor_value_info("q", F, [1, 2, 4, 8]),
         helper.make_tensor_value_info("k", F, [1, 2, 6, 8]),
         helper.make_tensor_value_info("v", F, [1, 2, 6, 8])],
        [helper.make_tensor_value_info("y", F, None)])
    (node_cost,) = _cost(tmp_path, make_model(graph, opset=23)).nodes
    assert node_cost.macs == 2 * (1 * 2 * 4 * 6 * 8)
    assert node_cost.output_bytes == 1 * 2 * 4 * 8 * 4  # inferred: Y like Q


def test_split_by_flops_weighs_nodes_as_the_cost_table_counts(tmp_path: Path) -> None:
    from onnxstudio.model.split import node_costs

    path = save(conv_with_bias(), tmp_path / "conv.onnx")
    model = load_model(path)
    (flops,) = node_costs(model, "flops", [False])
    assert flops == 2 * (256 * 27 + 256)  # two FLOPs per MAC, the bias adds included


def test_multi_head_attention_from_its_declared_shapes(tmp_path: Path) -> None:
    """com.microsoft MultiHeadAttention (onnx infers no shapes for it: they are declared),
    query [1,4,16], key and value [1,6,16]: 2 x (1 x 4 x 6 x 16) multiply-accumulates."""
    node = helper.make_node("MultiHeadAttention", ["q", "k", "v"], ["y"], name="mha",
                            domain="com.microsoft", num_heads=2)
    graph = helper.make_graph(
        [node], "mha",
        [helper.make_tensor_value_info("q", F, [1, 4, 16]),
         helper.make_tensor_value_info("k", F, [1, 6, 16]),
         helper.make_tensor_value_info("v", F, [1, 6, 16])],
        [helper.make_tensor_value_info("y", F, [1, 4, 16])])
    model = make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                             helper.make_opsetid("com.microsoft", 1)])
    (node_cost,) = _cost(tmp_path, model).nodes
    assert node_cost.macs == 2 * 1 * 4 * 6 * 16


def test_an_edited_tab_is_costed_from_its_bytes_not_the_file(tmp_path: Path) -> None:
    from onnxstudio.layout.cost_table import cost_of_file
    from onnxstudio.model.open import model_from_proto

    path = save(tiny_mlp(), tmp_path / "m.onnx")
    edited = conv_with_bias()
    cost = cost_of_file(path, model_from_proto(edited, path), edited.SerializeToString())
    assert cost.macs == 7168 and path.read_bytes() == tiny_mlp().SerializeToString()


def long_mlp(layers: int = 210) -> onnx.ModelProto:
    """A chain of MatMul+Add layers with a symbolic batch: over the node count whose
    inference runs in a child (``ISOLATE_INFERENCE_NODES``)."""
    nodes, weights, x = [], [], "x"
    for i in range(layers):
        weights += [_weight(f"w{i}", 8, 8), _weight(f"b{i}", 8)]
        nodes += [helper.make_node("MatMul", [x, f"w{i}"], [f"m{i}"], name=f"/l{i}/MatMul"),
                  helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"], name=f"/l{i}/Add")]
        x = f"a{i}"
    graph = helper.make_graph(nodes, "long", [helper.make_tensor_value_info("x", F, ["batch", 8])],
                              [helper.make_tensor_value_info(x, F, None)], weights)
    return make_model(graph)


@pytest.mark.parametrize("edited", [False, True])
def test_a_large_graphs_sizes_are_inferred_in_a_child(tmp_path: Path, edited: bool,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """onnx's inference holds the GIL for its whole run: for a large graph the Cost
    dock's worker thread must not run it (it froze the window 0.6 s on dag100k)."""
    from onnxstudio.layout.cost_table import cost_of_file
    from onnxstudio.model import onnx_core
    from onnxstudio.model.open import ISOLATE_INFERENCE_NODES, model_from_proto

    proto = long_mlp()
    assert len(proto.graph.node) > ISOLATE_INFERENCE_NODES
    expected = _cost(tmp_path, proto, {"batch": 3})
    path = save(tiny_mlp() if edited else proto, tmp_path / "m.onnx")
    model = model_from_proto(proto, path) if edited else load_model(path, shape_inference=False)

    def refused(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("shape inference ran in the app's process")

    monkeypatch.setattr(onnx_core, "infer_shapes", refused)
    cost = cost_of_file(path, model, proto.SerializeToString() if edited else None,
                        {"batch": 3})
    assert cost.macs == expected.macs == 3 * 210 * 8 * 8  # the Adds are element ops
    assert [(n.name, n.macs, n.output_bytes) for n in cost.nodes] == \
        [(n.name, n.macs, n.output_bytes) for n in expected.nodes]
    assert cost.assumptions == expected.assumptions
    assert "dimension batch = 3 (given)" in cost.assumptions
