"""A tiny decoder LLM built with onnx.helper, shaped as onnxruntime-genai's builder writes them.

For tests that must run where torch and onnxruntime-genai are absent (CI): the contrib
operators (MatMulNBits, RotaryEmbedding, GroupQueryAttention, SkipSimplifiedLayerNormalization),
a named head size on the cache (``kv_cache_dim``, given only by genai_config.json), and the
attention-mask subgraph that turns the mask into GroupQueryAttention's lengths.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tests.builders import IR_VERSION

HIDDEN, HEADS, KV_HEADS, HEAD, VOCAB, INNER, BLOCK = 64, 4, 2, 16, 256, 128, 32
MS = "com.microsoft"


def _nbits(rng: np.random.Generator, name: str, k: int, n: int) -> list[TensorProto]:
    """MatMulNBits' packed 4-bit weight [N, K/32, 16] and scales [N, K/32]."""
    blocks = k // BLOCK
    packed = rng.integers(0, 256, size=(n, blocks, BLOCK // 2), dtype=np.uint8)
    scales = np.full((n, blocks), 0.02, np.float32)
    return [numpy_helper.from_array(packed, f"{name}.weight_Q4"),
            numpy_helper.from_array(scales, f"{name}.weight_scales")]


def _matmul(name: str, x: str, k: int, n: int, out: str) -> onnx.NodeProto:
    w = name.replace("/", ".").strip(".")
    return helper.make_node("MatMulNBits", [x, f"{w}.weight_Q4", f"{w}.weight_scales"],
                            [out], name=f"{name}/MatMul_Q4", domain=MS, K=k, N=n, bits=4,
                            block_size=BLOCK, accuracy_level=4)


def tiny_llm(layers: int = 2) -> onnx.ModelProto:
    """input_ids, attention_mask, position_ids and per-layer past key/values in; logits and
    present key/values out. Random 4-bit weights, seeded."""
    rng = np.random.default_rng(0)
    inits: list[TensorProto] = [
        numpy_helper.from_array(rng.standard_normal((VOCAB, HIDDEN)).astype(np.float32),
                                "model.embed_tokens.weight"),
        numpy_helper.from_array(np.array([1], np.int64), "one"),
        numpy_helper.from_array(np.array(1, np.int64), "one_scalar"),
    ]
    angles = np.outer(np.arange(256), 1.0 / 10000 ** (np.arange(HEAD // 2) * 2 / HEAD))
    inits += [numpy_helper.from_array(np.cos(angles).astype(np.float32), "cos_cache"),
              numpy_helper.from_array(np.sin(angles).astype(np.float32), "sin_cache")]
    m = "/model/attn_mask_reformat"
    nodes = [
        helper.make_node("ReduceSum", ["attention_mask", "one"], [f"{m}/sum"], keepdims=0,
                         name=f"{m}/ReduceSum"),
        helper.make_node("Sub", [f"{m}/sum", "one"], [f"{m}/sub"], name=f"{m}/Sub"),
        helper.make_node("Cast", [f"{m}/sub"], [f"{m}/seqlens_k"], to=TensorProto.INT32,
                         name=f"{m}/Sub/Cast"),
        helper.make_node("Shape", ["attention_mask"], [f"{m}/shape"], name=f"{m}/Shape"),
        helper.make_node("Gather", [f"{m}/shape", "one_scalar"], [f"{m}/total"], axis=0,
                         name=f"{m}/Gather"),
        helper.make_node("Cast", [f"{m}/total"], [f"{m}/total_len"], to=TensorProto.INT32,
                         name=f"{m}/Gather/Cast"),
        helper.make_node("Gather", ["model.embed_tokens.weight", "input_ids"], ["embed"],
                         name="/model/embed_tokens/Gather"),
    ]
    residual, hidden = "embed", ""
    for i in range(layers):
        p = f"/model/layers.{i}"
        w = f"model.layers.{i}"
        inits.append(numpy_helper.from_array(np.ones(HIDDEN, np.float32),
                                             f"{w}.input_layernorm.weight"))
        inits.append(numpy_helper.from_array(np.ones(HIDDEN, np.float32),
                                             f"{w}.post_attention_layernorm.weight"))
        if i == 0:
            nodes.append(helper.make_node(
                "SimplifiedLayerNormalization", ["embed", f"{w}.input_layernorm.weight"],
                [f"{p}/input_layernorm/output_0"], epsilon=1e-6, axis=-1,
                name=f"{p}/input_layernorm/LayerNorm"))
        else:
            nodes.append(helper.make_node(
                "SkipSimplifiedLayerNormalization",
                [residual, hidden, f"{w}.input_layernorm.weight"],
                [f"{p}/input_layernorm/output_0", "", "", f"{p}/input_layernorm/output_3"],
                domain=MS, epsilon=1e-6, name=f"{p}/input_layernorm/SkipLayerNorm"))
            residual = f"{p}/input_layernorm/output_3"
        x = f"{p}/input_layernorm/output_0"
        for proj, n in (("q_proj", HEADS * HEAD), ("k_proj", KV_HEADS * HEAD),
                        ("v_proj", KV_HEADS * HEAD)):
            inits += _nbits(rng, f"{w}.attn.{proj}", HIDDEN, n)
            nodes.append(_matmul(f"{p}/attn/{proj}", x, HIDDEN, n, f"{p}/attn/{proj}/out"))
        for proj, heads in (("q_proj", HEADS), ("k_proj", KV_HEADS)):
            nodes.append(helper.make_node(
                "RotaryEmbedding", [f"{p}/attn/{proj}/out", "position_ids", "cos_cache",
                                    "sin_cache"], [f"{p}/attn/{proj}/rotary"], domain=MS,
                num_heads=heads, interleaved=0, name=f"{p}/attn/{proj}/RotaryEmbedding"))
        nodes.append(helper.make_node(
            "GroupQueryAttention",
            [f"{p}/attn/q_proj/rotary", f"{p}/attn/k_proj/rotary", f"{p}/attn/v_proj/out",
             f"past_key_values.{i}.key", f"past_key_values.{i}.value", f"{m}/seqlens_k",
             f"{m}/total_len"], [f"{p}/attn/out", f"present.{i}.key", f"present.{i}.value"],
            domain=MS, num_heads=HEADS, kv_num_heads=KV_HEADS, scale=HEAD ** -0.5,
            name=f"{p}/attn/GroupQueryAttention"))
        inits += _nbits(rng, f"{w}.attn.o_proj", HIDDEN, HIDDEN)
        nodes.append(_matmul(f"{p}/attn/o_proj", f"{p}/attn/out", HIDDEN, HIDDEN,
                             f"{p}/attn/o_proj/out"))
        nodes.append(helper.make_node(
            "SkipSimplifiedLayerNormalization",
            [residual, f"{p}/attn/o_proj/out", f"{w}.post_attention_layernorm.weight"],
            [f"{p}/post_attention_layernorm/output_0", "", "",
             f"{p}/post_attention_layernorm/output_3"], domain=MS, epsilon=1e-6,
            name=f"{p}/post_attention_layernorm/SkipLayerNorm"))
        residual = f"{p}/post_attention_layernorm/output_3"
        y = f"{p}/post_attention_layernorm/output_0"
        for proj in ("gate_proj", "up_proj"):
            inits += _nbits(rng, f"{w}.mlp.{proj}", HIDDEN, INNER)
            nodes.append(_matmul(f"{p}/mlp/{proj}", y, HIDDEN, INNER, f"{p}/mlp/{proj}/out"))
        nodes += [
            helper.make_node("Sigmoid", [f"{p}/mlp/gate_proj/out"], [f"{p}/mlp/sig"],
                             name=f"{p}/mlp/act_fn/Sigmoid"),
            helper.make_node("Mul", [f"{p}/mlp/gate_proj/out", f"{p}/mlp/sig"],
                             [f"{p}/mlp/act"], name=f"{p}/mlp/act_fn/Mul"),
            helper.make_node("Mul", [f"{p}/mlp/act", f"{p}/mlp/up_proj/out"],
                             [f"{p}/mlp/prod"], name=f"{p}/mlp/Mul"),
        ]
        inits += _nbits(rng, f"{w}.mlp.down_proj", INNER, HIDDEN)
        nodes.append(_matmul(f"{p}/mlp/down_proj", f"{p}/mlp/prod", INNER, HIDDEN,
                             f"{p}/mlp/down_proj/out"))
        hidden = f"{p}/mlp/down_proj/out"
    inits.append(numpy_helper.from_array(np.ones(HIDDEN, np.float32), "model.norm.weight"))
    nodes.append(helper.make_node(
        "SkipSimplifiedLayerNormalization", [residual, hidden, "model.norm.weight"],
        ["/model/norm/output_0"], domain=MS, epsilon=1e-6, name="/model/norm/SkipLayerNorm"))
    inits += _nbits(rng, "lm_head", HIDDEN, VOCAB)
    nodes.append(_matmul("/lm_head", "/model/norm/output_0", HIDDEN, VOCAB, "logits"))
    cache = ["batch_size", KV_HEADS, "past_sequence_length", "kv_cache_dim"]
    present = ["batch_size", KV_HEADS, "total_sequence_length", "kv_cache_dim"]
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64,
                                      ["batch_size", "sequence_length"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64,
                                      ["batch_size", "total_sequence_length"]),
        helper.make_tensor_value_info("position_ids", TensorProto.INT64,
                                      ["batch_size", "sequence_length"]),
    ]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                             ["batch_size", "sequence_length", VOCAB])]
    for i in range(layers):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kind}",
                                                        TensorProto.FLOAT, cache))
            outputs.append(helper.make_tensor_value_info(f"present.{i}.{kind}",
                                                         TensorProto.FLOAT, present))
    graph = helper.make_graph(nodes, "tiny_llm", inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                    helper.make_opsetid(MS, 1)])
    model.ir_version = IR_VERSION
    return model


def save_tiny_llm(folder: Path, layers: int = 2) -> Path:
    """``folder/model.onnx`` and the genai_config.json that names its head size."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "model.onnx"
    onnx.save(tiny_llm(layers), str(path))
    (folder / "genai_config.json").write_text(json.dumps({"model": {"decoder": {
        "head_size": HEAD, "hidden_size": HIDDEN, "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS, "num_hidden_layers": layers}}}))
    return path
