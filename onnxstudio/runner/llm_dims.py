"""Sizes of a decoder LLM's symbolic dimensions that its file alone does not give.

onnxruntime-genai's builder names the head size of its key/value cache (``kv_cache_dim``)
and writes it only into ``genai_config.json`` beside the model; other exports leave it to
the attention operator's attributes and the projection weights. A random run needs it
right: GroupQueryAttention refuses a cache whose last axis is not the head size.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from onnxstudio.runner.inputs import TensorSpec

if TYPE_CHECKING:
    import onnx

_ATTENTION = {"GroupQueryAttention", "MultiHeadAttention"}
_SAME_WIDTH = {"RotaryEmbedding", "Add", "Mul", "Cast", "SimplifiedLayerNormalization"}


def _cache_inputs(specs: list[TensorSpec]) -> list[TensorSpec]:
    """Key/value cache inputs: 4-D, named past/cache, [batch, heads, length, head size]."""
    return [s for s in specs if len(s.shape) == 4 and any(
        w in s.name.lower() for w in ("past", "cache"))]


def _from_genai_config(folder: Path) -> dict[str, int]:
    try:
        config = json.loads((folder / "genai_config.json").read_text())
        decoder = config["model"]["decoder"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    found = {"head": decoder.get("head_size"), "heads": decoder.get("num_key_value_heads")}
    return {k: v for k, v in found.items() if isinstance(v, int) and v > 0}


def _from_weights(proto: onnx.ModelProto, name: str) -> dict[str, int]:
    """The head size from the attention node reading cache input ``name``: its query
    projection's width (MatMulNBits' N, or a MatMul weight's last dim) over its heads."""
    g = proto.graph
    made_by = {o: n for n in g.node for o in n.output}
    weights = {t.name: list(t.dims) for t in g.initializer}
    for node in g.node:
        if node.op_type not in _ATTENTION or name not in node.input:
            continue
        attrs = {a.name: a.i for a in node.attribute}
        heads, kv = attrs.get("num_heads", 0), attrs.get("kv_num_heads", 0)
        packed = len(node.input) < 2 or not node.input[1]
        projection = made_by.get(node.input[0])
        while projection is not None and projection.op_type in _SAME_WIDTH:
            projection = made_by.get(projection.input[0])
        width = 0
        if projection is not None and projection.op_type == "MatMulNBits":
            width = next((a.i for a in projection.attribute if a.name == "N"), 0)
        elif projection is not None and projection.op_type == "MatMul" and \
                len(weights.get(projection.input[1], [])) == 2:
            width = weights[projection.input[1]][1]
        share = heads + 2 * kv if packed and kv else heads
        if width and share and width % share == 0:
            return {"head": width // share, **({"heads": kv} if kv else {})}
    return {}


def dim_hints(path: Path, proto: onnx.ModelProto, specs: list[TensorSpec]) -> dict[str, int]:
    """Sizes for the cache inputs' symbolic head-count and head-size axes, when known."""
    caches = [s for s in _cache_inputs(specs)
              if any(isinstance(d, str) or d is None for d in (s.shape[1], s.shape[3]))]
    if not caches:
        return {}
    found = _from_genai_config(path.parent) or _from_weights(proto, caches[0].name)
    hints: dict[str, int] = {}
    for spec in caches:
        for axis, what in ((1, "heads"), (3, "head")):
            d = spec.shape[axis]
            key = d if isinstance(d, str) and d else f"{spec.name}:{axis}"
            if not (isinstance(d, int) and d > 0) and what in found:
                hints[key] = found[what]
    return hints
