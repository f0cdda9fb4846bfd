"""Generate the benchmark ladder with onnx.helper (used when ../shared/ladder is absent).

Shapes of the graphs mimic the shared ladder: a ResNet-50-like CNN, BERT-like encoders
with exporter-style scoped names (``/encoder/layer.N/attention/self/MatMul``) and
unfused ops, and layered DAGs with lanes that branch and merge. Weights are tiny: the
benchmark measures the app, not the arithmetic.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

IR_VERSION = 10
OPSET = 17


class _G:
    """Accumulates nodes and initializers, naming outputs like the torch exporter."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.count: dict[str, int] = {}

    def op(self, scope: str, op: str, inputs: list[str], n_out: int = 1, **attrs: object) -> str:
        key = f"{scope}/{op}"
        k = self.count.get(key, 0)
        self.count[key] = k + 1
        name = f"{scope}/{op}" + (f"_{k}" if k else "")
        outs = [f"{name}_output_{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs[0]

    def weight(self, name: str, shape: tuple[int, ...]) -> str:
        data = np.zeros(shape, np.float32)
        self.inits.append(numpy_helper.from_array(data, name))
        return name

    def const(self, scope: str, values: list[int] | int) -> str:
        tensor = numpy_helper.from_array(np.array(values, np.int64))
        return self.op(scope, "Constant", [], value=tensor)


def _model(g: _G, name: str, inputs: list[onnx.ValueInfoProto],
           outputs: list[onnx.ValueInfoProto]) -> onnx.ModelProto:
    graph = helper.make_graph(g.nodes, name, inputs, outputs, initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="onnxstudio-ladder")
    model.ir_version = IR_VERSION
    return model


def resnet(blocks: tuple[int, ...] = (3, 4, 6, 3)) -> onnx.ModelProto:
    """Bottleneck ResNet: stem, four stages, residual Adds, downsample branches."""
    g = _G()
    c = 8
    x = g.op("/conv1", "Conv", ["input", g.weight("/conv1.weight", (c, 3, 7, 7))],
             kernel_shape=[7, 7], strides=[2, 2], pads=[3, 3, 3, 3])
    x = g.op("/bn1", "BatchNormalization", [x] + [g.weight(f"/bn1.{p}", (c,)) for p in
                                                  ("weight", "bias", "mean", "var")])
    x = g.op("/relu", "Relu", [x])
    x = g.op("/maxpool", "MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    for s, count in enumerate(blocks, 1):
        for b in range(count):
            p = f"/layer{s}/layer{s}.{b}"
            skip = x
            for k, ks in ((1, 1), (2, 3), (3, 1)):
                w = g.weight(f"{p}/conv{k}.weight", (c, c, ks, ks))
                x = g.op(f"{p}/conv{k}", "Conv", [x, w], kernel_shape=[ks, ks], pads=[ks // 2] * 4)
                x = g.op(f"{p}/bn{k}", "BatchNormalization",
                         [x] + [g.weight(f"{p}/bn{k}.{q}", (c,)) for q in ("w", "b", "m", "v")])
                if k < 3:
                    x = g.op(f"{p}/relu", "Relu", [x])
            if b == 0:
                skip = g.op(f"{p}/downsample/downsample.0", "Conv",
                            [skip, g.weight(f"{p}/downsample.0.weight", (c, c, 1, 1))],
                            kernel_shape=[1, 1])
                skip = g.op(f"{p}/downsample/downsample.1", "BatchNormalization",
                            [skip] + [g.weight(f"{p}/downsample.1.{q}", (c,))
                                      for q in ("w", "b", "m", "v")])
            x = g.op(p, "Add", [x, skip])
            x = g.op(f"{p}/relu_out", "Relu", [x])
    x = g.op("/avgpool", "GlobalAveragePool", [x])
    x = g.op("", "Flatten", [x])
    out = g.op("/fc", "Gemm", [x, g.weight("fc.weight", (10, c)), g.weight("fc.bias", (10,))],
               transB=1)
    g.nodes[-1].output[0] = "logits"
    del out
    return _model(g, "resnet", [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                                              [1, 3, 224, 224])],
                  [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])])


def bert(layers: int = 12, hidden: int = 16, heads: int = 2) -> onnx.ModelProto:
    """Unfused BERT encoder: shape-computing Reshapes, mask Add in every layer."""
    g = _G()
    emb = g.op("/embeddings/word_embeddings", "Gather",
               [g.weight("embeddings.word_embeddings.weight", (100, hidden)), "input_ids"])
    x = g.op("/embeddings/LayerNorm", "LayerNormalization",
             [emb, g.weight("emb.ln.w", (hidden,)), g.weight("emb.ln.b", (hidden,))], axis=-1)
    m = g.op("", "Unsqueeze", ["attention_mask", g.const("", [1, 2])])
    m = g.op("", "Cast", [m], to=TensorProto.FLOAT)
    m = g.op("", "Sub", [g.weight("one", ()), m])
    mask = g.op("", "Mul", [m, g.weight("neg", ())])
    for i in range(layers):
        p = f"/encoder/layer.{i}"
        a = f"{p}/attention/self"
        heads_out = []
        for qkv in ("query", "key", "value"):
            h = g.op(f"{a}/{qkv}", "MatMul", [x, g.weight(f"{a}.{qkv}.w", (hidden, hidden))])
            h = g.op(f"{a}/{qkv}", "Add", [h, g.weight(f"{a}.{qkv}.b", (hidden,))])
            shape = g.op(a, "Shape", [h])
            b = g.op(a, "Gather", [shape, g.const(a, 0)], axis=0)
            b = g.op(a, "Unsqueeze", [b, g.const(a, [0])])
            new_shape = g.op(a, "Concat", [b, g.const(a, [-1, heads, hidden // heads])], axis=0)
            h = g.op(a, "Reshape", [h, new_shape])
            perm = [0, 2, 3, 1] if qkv == "key" else [0, 2, 1, 3]
            heads_out.append(g.op(a, "Transpose", [h], perm=perm))
        q, k, v = heads_out
        s = g.op(a, "MatMul", [q, k])
        s = g.op(a, "Div", [s, g.weight(f"{a}.scale", ())])
        s = g.op(a, "Add", [s, mask])
        s = g.op(a, "Softmax", [s], axis=-1)
        c = g.op(a, "MatMul", [s, v])
        c = g.op(a, "Transpose", [c], perm=[0, 2, 1, 3])
        c = g.op(a, "Reshape", [c, g.const(a, [0, -1, hidden])])
        o = f"{p}/attention/output"
        c = g.op(f"{o}/dense", "MatMul", [c, g.weight(f"{o}.w", (hidden, hidden))])
        c = g.op(f"{o}/dense", "Add", [c, g.weight(f"{o}.b", (hidden,))])
        c = g.op(o, "Add", [c, x])
        x = g.op(f"{o}/LayerNorm", "LayerNormalization",
                 [c, g.weight(f"{o}.ln.w", (hidden,)), g.weight(f"{o}.ln.b", (hidden,))])
        it = f"{p}/intermediate"
        h = g.op(f"{it}/dense", "MatMul", [x, g.weight(f"{it}.w", (hidden, 4 * hidden))])
        h = g.op(f"{it}/dense", "Add", [h, g.weight(f"{it}.b", (4 * hidden,))])
        f = f"{it}/intermediate_act_fn"
        e = g.op(f, "Div", [h, g.weight(f"{f}.sqrt2", ())])
        e = g.op(f, "Erf", [e])
        e = g.op(f, "Add", [e, g.weight(f"{f}.one", ())])
        e = g.op(f, "Mul", [h, e])
        h = g.op(f, "Mul", [e, g.weight(f"{f}.half", ())])
        ou = f"{p}/output"
        h = g.op(f"{ou}/dense", "MatMul", [h, g.weight(f"{ou}.w", (4 * hidden, hidden))])
        h = g.op(f"{ou}/dense", "Add", [h, g.weight(f"{ou}.b", (hidden,))])
        h = g.op(ou, "Add", [h, x])
        x = g.op(f"{ou}/LayerNorm", "LayerNormalization",
                 [h, g.weight(f"{ou}.ln.w", (hidden,)), g.weight(f"{ou}.ln.b", (hidden,))])
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"],
                                    name="/encoder/Identity"))
    ints = TensorProto.INT64
    return _model(g, "bert", [helper.make_tensor_value_info("input_ids", ints, [1, 8]),
                              helper.make_tensor_value_info("attention_mask", ints, [1, 8])],
                  [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                                 [1, 8, hidden])])


def dag(nodes: int = 30_000, lanes: int = 8, per_block: int = 80, seed: int = 0) -> onnx.ModelProto:
    """Layered DAG: lanes of unary ops per block, with merges across lanes."""
    rng = np.random.default_rng(seed)
    g = _G()
    ops = ("Relu", "Tanh", "Neg", "Sigmoid", "Abs")
    cur = [g.op(f"/model/stem/lane.{k}", "Identity", ["input"]) for k in range(lanes)]
    block = 0
    while len(g.nodes) < nodes - 1:
        p = f"/model/block.{block}"
        for _ in range(per_block // lanes):
            for k in range(lanes):
                if len(g.nodes) >= nodes - 1:
                    break
                lane = f"{p}/lane.{k}"
                if rng.random() < 0.35:
                    other = cur[int(rng.integers(lanes))]
                    cur[k] = g.op(lane, "Add", [cur[k], other])
                else:
                    cur[k] = g.op(lane, ops[int(rng.integers(len(ops)))], [cur[k]])
        block += 1
    g.nodes.append(helper.make_node("Sum", cur, ["output"], name="/model/head/Sum"))
    shape = [1, 4]
    return _model(g, "dag", [helper.make_tensor_value_info("input", TensorProto.FLOAT, shape)],
                  [helper.make_tensor_value_info("output", TensorProto.FLOAT, shape)])


LADDER = {
    "resnet50.onnx": lambda: resnet(),
    "bert12.onnx": lambda: bert(12),
    "bert48.onnx": lambda: bert(48),
    "bert96.onnx": lambda: bert(96),
    "dag30k.onnx": lambda: dag(30_000),
    "dag100k.onnx": lambda: dag(100_000),
}


def generate(folder: Path) -> list[Path]:
    """Write the ladder into ``folder`` (skipping files already there)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name, make in LADDER.items():
        path = folder / name
        if not path.exists():
            onnx.save(make(), str(path))
        out.append(path)
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folder", type=Path)
    for p in generate(parser.parse_args().folder):
        print(p)
