"""Sub-models cut from real models pass the checker, run, and agree with the full model."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from onnxstudio.errors import CutError
from onnxstudio.model import Model, load_model
from onnxstudio.model.cut import Cut, cut_from_nodes, cut_from_tensors, write_cut
from tests.conftest import ladder_model, shared_model


def _feeds(session: ort.InferenceSession, seed: int = 0) -> dict[str, np.ndarray]:
    """Random but valid inputs: token ids small, masks all ones, floats normal."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for arg in session.get_inputs():
        shape = [d if isinstance(d, int) and d > 0 else 1 for d in arg.shape]
        if "int" in arg.type:
            dtype = np.int64 if "int64" in arg.type else np.int32
            high = 2 if "mask" in arg.name else 10
            feeds[arg.name] = (np.ones(shape, dtype) if "mask" in arg.name
                               else rng.integers(0, high, shape).astype(dtype))
        else:
            feeds[arg.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def full_model_values(path: Path, names: Sequence[str]) -> dict[str, np.ndarray]:
    """Run the whole model (in memory, weights loaded) with ``names`` added as outputs."""
    proto = onnx.load(str(path))  # loads external data from beside the file
    declared = {o.name for o in proto.graph.output}
    proto.graph.output.extend(onnx.ValueInfoProto(name=n) for n in names if n not in declared)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    wanted = [o.name for o in session.get_outputs()]
    results = session.run(wanted, _feeds(session))
    return dict(zip(wanted, results, strict=True))


def check_cut_reproduces(model: Model, cut: Cut, dest: Path, **write_options: object) -> None:
    """Write the cut, run it on the full model's values at the cut, compare the outputs."""
    written = write_cut(model, cut, dest, **write_options)  # type: ignore[arg-type]
    onnx.checker.check_model(str(written.path))
    names = [t.name for t in (*cut.inputs, *cut.outputs)]
    full = full_model_values(Path(model.path), names)
    session = ort.InferenceSession(str(written.path), providers=["CPUExecutionProvider"])
    feeds = {t.name: full[t.name] for t in cut.inputs}
    got = session.run([t.name for t in cut.outputs], feeds)
    assert [i.name for i in session.get_inputs()] == [t.name for t in cut.inputs]
    for tensor, value in zip(cut.outputs, got, strict=True):
        np.testing.assert_allclose(value, full[tensor.name], rtol=1e-4, atol=1e-5,
                                   err_msg=tensor.name)


def test_cnn_block_from_selected_nodes(tmp_path: Path) -> None:
    model = load_model(shared_model("zoo/mnist/mnist.onnx"))
    convs = [n for n in model.graph.nodes if n.op_type == "Conv"]
    # The second convolution block: Conv -> Add -> Relu -> MaxPool.
    start = convs[1].index
    ids = [n.id for n in model.graph.nodes[start:start + 4]]
    cut = cut_from_nodes(model, ids)
    assert len(cut.inputs) == 1 and len(cut.outputs) == 1
    assert cut.inputs[0].type.shape == (1, 8, 14, 14)
    assert cut.initializers  # the conv weights and bias travel with the block
    check_cut_reproduces(model, cut, tmp_path / "block.onnx")


def test_cnn_fire_module_between_two_tensors(tmp_path: Path) -> None:
    model = load_model(shared_model("zoo/onnx_light/light_squeezenet.onnx"))
    graph = model.graph
    concats = [n for n in graph.nodes if n.op_type == "Concat"]
    squeeze_in = graph.nodes[graph.values[concats[1].outputs[0]].consumers[0]].inputs[0]
    # Everything between the output of fire3 and the output of fire4.
    cut = cut_from_tensors(model, [concats[0].outputs[0]], [concats[1].outputs[0]])
    assert squeeze_in == concats[1].outputs[0]
    ops = {graph.nodes[i].op_type for i in cut.nodes}
    assert {"Conv", "Relu", "Concat"} <= ops
    assert "ConstantOfShape" in ops  # this "light" model makes its weights in the graph
    check_cut_reproduces(model, cut, tmp_path / "fire4.onnx")


def test_cnn_selection_carries_weight_producers(tmp_path: Path) -> None:
    model = load_model(shared_model("zoo/onnx_light/light_squeezenet.onnx"))
    convs = [n for n in model.graph.nodes if n.op_type == "Conv"]
    cut = cut_from_nodes(model, [convs[3].id])
    # Its weights come from ConstantOfShape nodes: carried along, not turned into inputs.
    assert [t.name for t in cut.inputs] == [convs[3].inputs[0]]
    check_cut_reproduces(model, cut, tmp_path / "conv.onnx")


BERT_LAYER_IN = "/encoder/layer.2/output/LayerNorm/LayerNormalization_output_0"
BERT_LAYER_OUT = "/encoder/layer.3/output/LayerNorm/LayerNormalization_output_0"


def test_transformer_layer_between_tensors(tmp_path: Path) -> None:
    model = load_model(ladder_model("bert12.onnx"))
    with pytest.raises(CutError, match=r"unreachable from the given.*needs 'attention_mask'"):
        cut_from_tensors(model, [BERT_LAYER_IN], [BERT_LAYER_OUT])
    cut = cut_from_tensors(model, [BERT_LAYER_IN, "/Mul_output_0"], [BERT_LAYER_OUT])
    names = {model.graph.nodes[i].name for i in cut.nodes}
    assert all("/encoder/layer.3/" in n for n in names if n.startswith("/encoder/"))
    assert any(n.endswith("attention/self/Softmax") for n in names)
    check_cut_reproduces(model, cut, tmp_path / "layer3.onnx")


def test_transformer_selection_of_nodes(tmp_path: Path) -> None:
    model = load_model(ladder_model("bert12.onnx"))
    ids = [n.id for n in model.graph.nodes if n.name.startswith("/encoder/layer.5/attention/")]
    cut = cut_from_nodes(model, ids)
    assert cut.outputs and cut.inputs
    check_cut_reproduces(model, cut, tmp_path / "attention5.onnx")


def test_prefix_and_suffix_cuts(tmp_path: Path) -> None:
    model = load_model(shared_model("zoo/mnist/mnist.onnx"))
    relus = [n for n in model.graph.nodes if n.op_type == "Relu"]
    head = cut_from_tensors(model, None, [relus[0].outputs[0]])  # from the model inputs
    assert [t.name for t in head.inputs] == model.graph.inputs
    check_cut_reproduces(model, head, tmp_path / "head.onnx")
    tail = cut_from_tensors(model, [relus[1].outputs[0]], None)  # to the model outputs
    assert [t.name for t in tail.outputs] == model.graph.outputs
    check_cut_reproduces(model, tail, tmp_path / "tail.onnx")


def test_external_data_model_yields_loadable_weights(tmp_path: Path) -> None:
    path = ladder_model("hf_bert12_dynamo.onnx")
    model = load_model(path)
    assert model.external_data
    ids = [f"n{i}" for i in range(101, 113)]  # one feed-forward block and its LayerNorm
    cut = cut_from_nodes(model, ids)
    small = tmp_path / "inline.onnx"
    check_cut_reproduces(model, cut, small)  # small: the needed weights are inlined
    assert not (tmp_path / "inline.onnx.data").exists()
    assert all(not onnx.external_data_helper.uses_external_data(t)
               for t in onnx.load(str(small), load_external_data=False).graph.initializer)
    big = tmp_path / "ext.onnx"
    written = write_cut(model, cut, big, threshold=0)  # large weights go beside the file
    assert written.data_path == tmp_path / "ext.onnx.data" and written.data_path.exists()
    assert written.data_path.stat().st_size < path.with_suffix(".onnx.data").stat().st_size
    check_cut_reproduces(model, cut, tmp_path / "ext2.onnx", external=True)


def test_bad_cuts_name_the_problem(tmp_path: Path) -> None:
    model = load_model(shared_model("zoo/mnist/mnist.onnx"))
    relus = [n.outputs[0] for n in model.graph.nodes if n.op_type == "Relu"]
    with pytest.raises(CutError, match=r"no tensor named 'Relu32_Output_O'.*did you mean"):
        cut_from_tensors(model, ["Relu32_Output_O"], [relus[1]])
    with pytest.raises(CutError, match=r"output '.*' is unreachable.*needs 'Input3'"):
        cut_from_tensors(model, [relus[1]], [relus[0]])
    with pytest.raises(CutError, match="does not lead to any of the outputs"):
        cut_from_tensors(model, ["Input3", relus[1]], [relus[0]])
    with pytest.raises(CutError, match="both an input and an output"):
        cut_from_tensors(model, [relus[0]], [relus[0]])
    with pytest.raises(CutError, match="select nodes"):
        cut_from_nodes(model, ["nope"])


def test_refuses_to_write_over_the_model(tmp_path: Path) -> None:
    source = shared_model("zoo/mnist/mnist.onnx")
    copy = tmp_path / "mnist.onnx"
    copy.write_bytes(source.read_bytes())
    model = load_model(copy)
    cut = cut_from_nodes(model, ["n3"])
    with pytest.raises(CutError, match="refusing to write over"):
        write_cut(model, cut, copy)
    other = tmp_path / "other.onnx"
    other.write_bytes(b"keep")
    with pytest.raises(CutError, match="refusing to write over"):
        write_cut(model, cut, other, protect=[other])
    assert copy.read_bytes() == source.read_bytes() and other.read_bytes() == b"keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mnist.onnx", "other.onnx"]


def test_failed_check_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = load_model(shared_model("zoo/mnist/mnist.onnx"))
    cut = cut_from_nodes(model, ["n3"])

    def reject(_path: str) -> None:
        raise onnx.checker.ValidationError("broken on purpose")

    monkeypatch.setattr(onnx.checker, "check_model", reject)
    with pytest.raises(CutError, match=r"fails onnx\.checker: broken on purpose"):
        write_cut(model, cut, tmp_path / "x.onnx")
    assert list(tmp_path.iterdir()) == []


def test_metadata_opsets_and_functions_carry_over(tmp_path: Path) -> None:
    from onnx import TensorProto, helper

    fn = helper.make_function(
        "local", "Double", ["x"], ["y"], [helper.make_node("Add", ["x", "x"], ["y"])],
        [helper.make_opsetid("", 17)])
    unused = helper.make_function(
        "local", "Unused", ["x"], ["y"], [helper.make_node("Neg", ["x"], ["y"])],
        [helper.make_opsetid("", 17)])
    graph = helper.make_graph(
        [helper.make_node("Relu", ["a"], ["b"]),
         helper.make_node("Double", ["b"], ["c"], domain="local"),
         helper.make_node("Neg", ["c"], ["d"])],
        "g", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("d", TensorProto.FLOAT, [2, 3])])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("local", 1)],
                              functions=[fn, unused], ir_version=9)
    helper.set_model_props(proto, {"author": "me"})
    src = tmp_path / "f.onnx"
    onnx.save(proto, str(src))
    model = load_model(src)
    cut = cut_from_tensors(model, ["b"], ["c"])
    written = write_cut(model, cut, tmp_path / "cut.onnx")
    out = onnx.load(str(written.path))
    assert [f.name for f in out.functions] == ["Double"]
    assert {o.domain for o in out.opset_import} == {"", "local"}
    props = {p.key: p.value for p in out.metadata_props}
    assert props["author"] == "me" and props["onnxstudio.cut_from"] == "f.onnx"
    session = ort.InferenceSession(str(written.path), providers=["CPUExecutionProvider"])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(session.run(None, {"b": x})[0], 2 * x)


def test_long_chains_do_not_recurse(tmp_path: Path) -> None:
    """A selection deep inside a 30k-node DAG: no recursion limit, a fraction of a second."""
    model = load_model(ladder_model("dag30k.onnx"), shape_inference=False)
    ids = [n.id for n in model.graph.nodes[20000:20300]]
    cut = cut_from_nodes(model, ids)
    assert len(cut.nodes) == 300 and cut.inputs and cut.outputs
    head = cut_from_tensors(model, None, [model.graph.nodes[25000].outputs[0]])
    assert [t.name for t in head.inputs] == model.graph.inputs
