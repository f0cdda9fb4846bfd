"""LLMs: types through onnxruntime's contrib operators, and random inputs an LLM accepts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from onnxstudio.cli import main
from onnxstudio.model import load_model
from onnxstudio.model.contrib_types import rule_types
from onnxstudio.model.inference import infer_shapes
from onnxstudio.runner.inputs import read_model_info
from onnxstudio.runner.synthetic import default_dim_sizes, synthetic_feeds
from tests.llm_builders import HEAD, HIDDEN, KV_HEADS, VOCAB, save_tiny_llm, tiny_llm

F, I32 = TensorProto.FLOAT, TensorProto.INT32


@pytest.mark.parametrize(("op", "domain", "inputs", "attrs", "want"), [
    ("MatMulNBits", "com.microsoft", [(F, ["b", "s", 64])], {"N": 96},
     [(F, ["b", "s", 96])]),
    ("GroupQueryAttention", "com.microsoft",  # packed QKV: (4 + 2 * 2) heads of 16
     [(F, ["b", "s", 128]), None, None, (F, ["b", 2, "p", 16])],
     {"num_heads": 4, "kv_num_heads": 2},
     [(F, ["b", "s", 64]), (F, ["b", 2, None, 16]), (F, ["b", 2, None, 16])]),
    ("GroupQueryAttention", "com.microsoft",  # separate Q, K, V; head size from Q
     [(F, ["b", "s", 64]), (F, ["b", "s", 32]), (F, ["b", "s", 32])],
     {"num_heads": 4, "kv_num_heads": 2},
     [(F, ["b", "s", 64]), (F, ["b", 2, None, 16]), (F, ["b", 2, None, 16])]),
    ("SkipSimplifiedLayerNormalization", "com.microsoft",
     [(F, ["b", "s", 64]), (F, ["b", "s", 64])], {},
     [(F, ["b", "s", 64]), (F, ["b", "s", 1]), (F, ["b", "s", 1]), (F, ["b", "s", 64])]),
    ("SimplifiedLayerNormalization", "", [(F, ["b", "s", 64])], {"axis": -1},
     [(F, ["b", "s", 64]), (F, ["b", "s", 1]), (F, ["b", "s", 1]), (F, ["b", "s", 64])]),
    ("RotaryEmbedding", "com.microsoft", [(F, ["b", "s", 64])], {}, [(F, ["b", "s", 64])]),
    ("MultiHeadAttention", "com.microsoft",
     [(F, ["b", "s", 64]), (F, ["b", "t", 64]), (F, ["b", "t", 64])], {"num_heads": 4},
     [(F, ["b", "s", 64]), (F, ["b", 4, None, 16]), (F, ["b", 4, None, 16])]),
    ("Attention", "com.microsoft", [(F, ["b", "s", 64]), (F, [64, 192])], {"num_heads": 4},
     [(F, ["b", "s", 64]), (F, [2, "b", 4, None, 16])]),
    ("EmbedLayerNormalization", "com.microsoft",
     [(TensorProto.INT32, ["b", "s"]), None, (F, [30522, 64])], {},
     [(F, ["b", "s", 64]), (I32, ["b"]), (F, ["b", "s", 64])]),
    ("FusedMatMul", "com.microsoft", [(F, ["b", 8, 16]), (F, [32, 16])], {"transB": 1},
     [(F, ["b", 8, 32])]),
    ("GatherBlockQuantized", "com.microsoft",
     [(TensorProto.UINT8, [1000, 32]), (TensorProto.INT64, ["b", "s"]), (F, [1000, 2])],
     {"bits": 4}, [(F, ["b", "s", 64])]),
    ("FastGelu", "com.microsoft", [(F, ["b", "s", 64])], {}, [(F, ["b", "s", 64])]),
])
def test_each_contrib_operator_gives_its_outputs_dtype_and_rank(op, domain, inputs, attrs,
                                                                 want) -> None:
    assert rule_types(op, domain, inputs, attrs) == want


def test_types_reach_every_tensor_of_a_genai_shaped_llm() -> None:
    model = tiny_llm()
    inferred, _problem = infer_shapes(model)
    assert inferred is not None
    typed = {vi.name: vi.type.tensor_type for vi in (*inferred.graph.value_info,
                                                     *inferred.graph.output)}
    made = [o for n in model.graph.node for o in n.output if o]
    unknown = [o for o in made if o not in typed or not typed[o].elem_type
               or not typed[o].HasField("shape")]
    assert unknown == []  # onnx alone stopped at the first MatMulNBits
    attn = typed["/model/layers.1/attn/out"]
    assert [d.dim_param or d.dim_value for d in attn.shape.dim] == \
        ["batch_size", "sequence_length", HIDDEN]
    # a standard operator after contrib ones is inferred too (onnx's per-node inference)
    act = typed["/model/layers.1/mlp/act"]
    assert act.elem_type == TensorProto.FLOAT and len(act.shape.dim) == 3


def test_the_window_model_shows_types_after_contrib_operators(tmp_path: Path) -> None:
    model = load_model(save_tiny_llm(tmp_path / "tiny"))
    value = model.graph.values["/model/layers.0/attn/o_proj/out"]
    assert value.type.dtype == "float32"
    assert value.type.shape is not None and len(value.type.shape) == 3


def test_random_inputs_leave_the_cache_empty_and_take_the_head_size_from_genai_config(
        tmp_path: Path) -> None:
    info = read_model_info(save_tiny_llm(tmp_path / "tiny"))
    sizes = default_dim_sizes(info.inputs, info.dim_hints)
    assert sizes["past_sequence_length"] == 0
    assert sizes["kv_cache_dim"] == HEAD
    assert sizes["total_sequence_length"] == sizes["sequence_length"]
    feeds = synthetic_feeds(info.inputs, {"sequence_length": 5}, hints=info.dim_hints)
    assert feeds["attention_mask"].shape == (1, 5)  # the total follows the given sequence
    assert feeds["past_key_values.0.key"].shape == (1, KV_HEADS, 0, HEAD)
    np.testing.assert_array_equal(feeds["position_ids"], [[0, 1, 2, 3, 4]])


def test_head_size_from_the_weights_when_there_is_no_genai_config(tmp_path: Path) -> None:
    path = save_tiny_llm(tmp_path / "tiny")
    (tmp_path / "tiny" / "genai_config.json").unlink()
    info = read_model_info(path)
    assert info.dim_hints == {"kv_cache_dim": HEAD}


def test_run_and_profile_with_random_inputs_work_on_an_llm(tmp_path: Path, capsys) -> None:
    path = save_tiny_llm(tmp_path / "tiny")
    assert main(["run", str(path), "--random"]) == 0
    out = capsys.readouterr().out
    assert f"logits: float32[1, 8, {VOCAB}]" in out
    assert f"present.1.key: float32[1, {KV_HEADS}, 8, {HEAD}]" in out
    assert main(["profile", str(path), "--random"]) == 0
    assert "GroupQueryAttention" in capsys.readouterr().out


def test_a_failed_random_run_names_the_dims_to_set(tmp_path: Path, capsys) -> None:
    path = save_tiny_llm(tmp_path / "tiny")
    assert main(["run", str(path), "--random", "--dim", "kv_cache_dim=3"]) == 2
    err = capsys.readouterr().err
    assert "kv_cache_dim=3" in err and "--dim NAME=SIZE" in err
    assert err.count("\n") == 1


def test_strict_check_of_stages_tolerates_onnxruntimes_default_domain_operator(
        tmp_path: Path) -> None:
    from onnxstudio.errors import CutError
    from onnxstudio.model.write import check_model_file

    path = save_tiny_llm(tmp_path / "tiny")
    check_model_file(path, CutError, "the model")  # SimplifiedLayerNormalization is ORT's
    broken = onnx.load(str(path))
    broken.graph.node.append(helper.make_node("NoSuchOp", ["embed"], ["z"]))
    onnx.save(broken, str(tmp_path / "broken.onnx"))
    with pytest.raises(CutError, match=r"fails onnx\.checker"):
        check_model_file(tmp_path / "broken.onnx", CutError, "the model")


def test_info_counts_int4_weights_as_the_weights_they_stand_for(tmp_path: Path) -> None:
    path = save_tiny_llm(tmp_path / "tiny", layers=2)
    proto = onnx.load(str(path))
    nbits = [n for n in proto.graph.node if n.op_type == "MatMulNBits"]
    attrs = [{a.name: a.i for a in n.attribute} for n in nbits]
    storage = {name for n in nbits for name in n.input[1:]}
    plain = sum(int(np.prod(t.dims)) for t in proto.graph.initializer
                if t.name not in storage)
    want = plain + sum(a["K"] * a["N"] for a in attrs)
    assert load_model(path).parameters == want
    packed = sum(int(np.prod(t.dims)) for t in proto.graph.initializer)
    assert packed < want  # what was shown before: packed bytes and scales


def test_the_first_view_bundles_the_cache_inputs_so_the_layers_show(tmp_path: Path) -> None:
    from onnxstudio.layout import build_layout, default_state

    model = load_model(save_tiny_llm(tmp_path / "tiny", layers=4))
    layout = build_layout(model, default_state(model.graph))
    shown = {box.id: box for box in layout.boxes}
    bundle = [b for b in layout.boxes if b.title == "past key/values"]
    assert len(bundle) == 1 and bundle[0].subtitle == "8 inputs"
    assert not any(i.startswith("in:past_key_values") for i in shown)
    assert "in:input_ids" in shown and "in:attention_mask" in shown
    assert {f"layers.{i}" for i in range(4)} <= {g.label for g in layout.groups}


def test_int4_weights_dequantise_to_what_onnxruntime_multiplies_by(tmp_path: Path) -> None:
    import onnxruntime as ort

    from onnxstudio.model.quantized import dequantize_nbits
    from onnxstudio.model.weights import WeightStore
    from tests.llm_builders import INNER

    path = save_tiny_llm(tmp_path / "tiny", layers=1)
    model = load_model(path)
    store = WeightStore(path)
    name = "model.layers.0.mlp.down_proj.weight_Q4"
    weight = dequantize_nbits(model.graph, name, store.read)
    assert weight is not None and weight.shape == (INNER, HIDDEN)
    # onnxruntime's own MatMulNBits on the identity gives the weight it stands for
    proto = onnx.load(str(path))
    keep = {name, "model.layers.0.mlp.down_proj.weight_scales"}
    node = next(n for n in proto.graph.node if n.op_type == "MatMulNBits" and name in n.input)
    graph = helper.make_graph(
        [node], "one", [helper.make_tensor_value_info(node.input[0], F, [INNER, INNER])],
        [helper.make_tensor_value_info(node.output[0], F, [INNER, HIDDEN])],
        [t for t in proto.graph.initializer if t.name in keep])
    single = helper.make_model(graph, opset_imports=list(proto.opset_import))
    single.ir_version = proto.ir_version
    session = ort.InferenceSession(single.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    want = session.run(None, {node.input[0]: np.eye(INNER, dtype=np.float32)})[0]
    np.testing.assert_allclose(weight, want, rtol=1e-5, atol=1e-6)
    assert dequantize_nbits(model.graph, "model.embed_tokens.weight", store.read) is None
