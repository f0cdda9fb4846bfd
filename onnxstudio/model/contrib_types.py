"""Types through onnxruntime's contrib operators, which onnx's shape inference cannot see.

LLM exports (onnxruntime-genai's builder, the older fused exports, quantisers) are made of
``com.microsoft`` operators: GroupQueryAttention, MatMulNBits, SkipSimplifiedLayerNormalization,
RotaryEmbedding... onnx knows none of them, so every tensor after the first one had no dtype or
rank, and a split or cut could not make a stage input of it. onnxruntime's own symbolic shape
inference knows them, but it lives in onnxruntime's tools (and needs sympy), walks the whole
model in Python with sympy and gives up on graphs it does not expect. A small table of the
operators that matter, each rule a few lines tested op by op, is enough: the dtype and the rank
are what cutting needs, and the dims follow from the inputs.

:func:`complete_types` runs after onnx's inference: it walks the nodes once in order and, for
every output still without a dtype and rank, asks this table (contrib operators) or onnx's
per-node inference (standard operators downstream of a contrib one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from onnxstudio.model import onnx_core

if TYPE_CHECKING:
    import onnx

Dim = int | str | None
Shape = list[Dim]
TypeInfo = tuple[int, Shape]  # (onnx elem type, dims)
Rule = Callable[[Sequence[TypeInfo | None], dict[str, object]], list[TypeInfo | None]]
_FLOAT = 1
_INT32 = 6
_MICROSOFT = "com.microsoft"


def _attr(node: onnx.NodeProto) -> dict[str, object]:
    out: dict[str, object] = {}
    for a in node.attribute:
        if a.type == onnx_core.AttributeProto.INT:
            out[a.name] = a.i
        elif a.type == onnx_core.AttributeProto.FLOAT:
            out[a.name] = a.f
        elif a.type == onnx_core.AttributeProto.INTS:
            out[a.name] = list(a.ints)
    return out


def _int(attrs: dict[str, object], name: str, default: int) -> int:
    value = attrs.get(name, default)
    return value if isinstance(value, int) else default


def _div(d: Dim, by: int) -> Dim:
    return d // by if isinstance(d, int) and by and d % by == 0 else None


def _mul(d: Dim, by: int) -> Dim:
    return d * by if isinstance(d, int) else None


def _same(ins: Sequence[TypeInfo | None], _attrs: dict[str, object]) -> list[TypeInfo | None]:
    """Element-wise (FastGelu, RotaryEmbedding...): the first input's type."""
    return [ins[0]] if ins and ins[0] is not None else []


def _matmul_nbits(ins: Sequence[TypeInfo | None], attrs: dict[str, object]
                  ) -> list[TypeInfo | None]:
    """A[..., K] times the packed B (N from the attribute) -> [..., N], A's dtype."""
    a = ins[0] if ins else None
    if a is None or not a[1]:
        return []
    return [(a[0], [*a[1][:-1], _int(attrs, "N", 0) or None])]


def _fused_matmul(ins: Sequence[TypeInfo | None], attrs: dict[str, object]
                  ) -> list[TypeInfo | None]:
    """MatMul with transposes: [..., M, K] x [..., K, N] -> [..., M, N] (broadcast batch)."""
    if len(ins) < 2 or ins[0] is None or ins[1] is None:
        return []
    (elem, a), (_e, b) = ins[0], ins[1]
    if len(a) < 2 or len(b) < 2:
        return []
    m = a[-1] if _int(attrs, "transA", 0) else a[-2]
    n = b[-2] if _int(attrs, "transB", 0) else b[-1]
    batch = a[:-2] if len(a) >= len(b) else b[:-2]
    return [(elem, [*batch, m, n])]


def _layer_norm(ins: Sequence[TypeInfo | None], attrs: dict[str, object]
                ) -> list[TypeInfo | None]:
    """(Skip)(Simplified)LayerNormalization: output like the input; mean and inverse
    deviation with the normalised axes kept as 1; the skip sum like the input."""
    x = ins[0] if ins else None
    if x is None:
        return []
    axis = _int(attrs, "axis", -1)
    axis = axis + len(x[1]) if axis < 0 else axis
    stats = (_int(attrs, "stash_type", _FLOAT) or _FLOAT,
             [d if i < axis else 1 for i, d in enumerate(x[1])])
    return [x, stats, stats, x]


def _gqa(ins: Sequence[TypeInfo | None], attrs: dict[str, object]) -> list[TypeInfo | None]:
    """GroupQueryAttention: query [B, S, D] (packed QKV when key is absent) -> [B, S, heads
    * head], present key/value [B, kv_heads, total, head] (total: whatever the cache holds)."""
    q = ins[0] if ins else None
    if q is None or len(q[1]) != 3:
        return []
    heads, kv = _int(attrs, "num_heads", 0), _int(attrs, "kv_num_heads", 0)
    packed = len(ins) < 2 or ins[1] is None
    head = _div(q[1][2], heads + 2 * kv) if packed else _div(q[1][2], heads)
    past = ins[3] if len(ins) > 3 else None
    if past is not None and len(past[1]) == 4 and isinstance(past[1][3], int):
        head = past[1][3]
    batch, seq = q[1][0], q[1][1]
    present: TypeInfo = (q[0], [batch, kv or None, None, head])
    return [(q[0], [batch, seq, _mul(head, heads)]), present, present]


def _mha(ins: Sequence[TypeInfo | None], attrs: dict[str, object]) -> list[TypeInfo | None]:
    """MultiHeadAttention: query [B, S, D] -> [B, S, D_v]; present [B, heads, total, head]."""
    q = ins[0] if ins else None
    if q is None or len(q[1]) != 3:
        return []
    heads = _int(attrs, "num_heads", 0)
    v = ins[2] if len(ins) > 2 else None
    width: Dim = q[1][2]
    if v is not None and len(v[1]) == 3:
        width = v[1][2]
    elif v is not None and len(v[1]) == 4:
        width = _mul(v[1][3], heads)
    present: TypeInfo = (q[0], [q[1][0], heads or None, None, _div(q[1][2], heads)])
    return [(q[0], [q[1][0], q[1][1], width]), present, present]


def _attention(ins: Sequence[TypeInfo | None], attrs: dict[str, object]
               ) -> list[TypeInfo | None]:
    """Attention (BERT-era fused): input [B, S, in] x weights [in, 3 * hidden] -> [B, S,
    hidden]; present [2, B, heads, total, head]."""
    x = ins[0] if ins else None
    w = ins[1] if len(ins) > 1 else None
    if x is None or len(x[1]) != 3:
        return []
    sizes = attrs.get("qkv_hidden_sizes")
    if isinstance(sizes, list) and len(sizes) == 3:
        hidden: Dim = int(sizes[2])
    else:
        hidden = _div(w[1][1], 3) if w is not None and len(w[1]) == 2 else None
    heads = _int(attrs, "num_heads", 0)
    present: TypeInfo = (x[0], [2, x[1][0], heads or None, None, _div(hidden, heads)
                                if isinstance(hidden, int) else None])
    return [(x[0], [x[1][0], x[1][1], hidden]), present]


def _embed_layer_norm(ins: Sequence[TypeInfo | None], _attrs: dict[str, object]
                      ) -> list[TypeInfo | None]:
    """EmbedLayerNormalization: ids [B, S], word embedding [V, H] -> [B, S, H], the mask
    index [B] (int32), the embedding sum [B, S, H]."""
    ids = ins[0] if ins else None
    words = ins[2] if len(ins) > 2 else None
    if ids is None or words is None or len(ids[1]) != 2 or len(words[1]) != 2:
        return []
    out: TypeInfo = (words[0], [ids[1][0], ids[1][1], words[1][1]])
    return [out, (_INT32, [ids[1][0]]), out]


def _gather_block_quantized(ins: Sequence[TypeInfo | None], attrs: dict[str, object]
                            ) -> list[TypeInfo | None]:
    """GatherBlockQuantized (an int4 embedding): indices' shape then data's other dims,
    the packed last axis unpacked; the scales' dtype."""
    data = ins[0] if ins else None
    indices = ins[1] if len(ins) > 1 else None
    scales = ins[2] if len(ins) > 2 else None
    if data is None or indices is None or scales is None or len(data[1]) < 2:
        return []
    if _int(attrs, "gather_axis", 0) != 0:
        return []
    bits = _int(attrs, "bits", 4)
    packed = data[0] == 2 and bits < 8  # uint8 holding 8 // bits values a byte
    last = _mul(data[1][-1], 8 // bits) if packed else data[1][-1]
    return [(scales[0], [*indices[1], *data[1][1:-1], last])]


RULES: dict[tuple[str, str], Rule] = {
    (_MICROSOFT, "MatMulNBits"): _matmul_nbits,
    (_MICROSOFT, "MatMulBnb4"): _matmul_nbits,
    (_MICROSOFT, "FusedMatMul"): _fused_matmul,
    (_MICROSOFT, "SkipLayerNormalization"): _layer_norm,
    (_MICROSOFT, "SkipSimplifiedLayerNormalization"): _layer_norm,
    ("", "SimplifiedLayerNormalization"): _layer_norm,
    (_MICROSOFT, "GroupQueryAttention"): _gqa,
    (_MICROSOFT, "MultiHeadAttention"): _mha,
    (_MICROSOFT, "Attention"): _attention,
    (_MICROSOFT, "EmbedLayerNormalization"): _embed_layer_norm,
    (_MICROSOFT, "GatherBlockQuantized"): _gather_block_quantized,
    (_MICROSOFT, "RotaryEmbedding"): _same,
    (_MICROSOFT, "FastGelu"): _same,
    (_MICROSOFT, "BiasGelu"): _same,
    (_MICROSOFT, "Gelu"): _same,
    (_MICROSOFT, "QuickGelu"): _same,
    (_MICROSOFT, "BiasAdd"): _same,
}


def _info(type_proto: onnx.TypeProto) -> TypeInfo | None:
    """(elem, dims) of a tensor type whose dtype and rank are known, else None."""
    if type_proto.WhichOneof("value") != "tensor_type":
        return None
    tensor = type_proto.tensor_type
    if not tensor.elem_type or not tensor.HasField("shape"):
        return None
    dims: Shape = []
    for d in tensor.shape.dim:
        kind = d.WhichOneof("value")
        dims.append(d.dim_value if kind == "dim_value" else
                    d.dim_param if kind == "dim_param" else None)
    return tensor.elem_type, dims


def uses_contrib(proto: onnx.ModelProto) -> bool:
    """Whether the model imports onnxruntime's domain (a contrib operator needs it)."""
    return any(o.domain == _MICROSOFT for o in proto.opset_import)


def rule_types(op_type: str, domain: str, inputs: Sequence[TypeInfo | None],
               attrs: dict[str, object]) -> list[TypeInfo | None]:
    """The output types the table gives one operator ([] when it knows nothing)."""
    rule = RULES.get((domain if domain != "ai.onnx" else "", op_type))
    return rule(inputs, attrs) if rule is not None else []


def complete_types(inferred: onnx.ModelProto) -> int:
    """Give every main-graph value still without a dtype and rank in ``inferred`` the type
    the contrib table or onnx's per-node inference finds; returns how many were added.

    The types are added as ``value_info``, where onnx's own inference puts its findings,
    so every reader of the inferred model (the window, cut and split writers) sees them.
    """
    import onnx

    g = inferred.graph
    types: dict[str, onnx.TypeProto] = {}
    complete: set[str] = set()
    for vi in (*g.input, *g.value_info, *g.output):
        if vi.name not in types or _info(vi.type) is not None:
            types[vi.name] = vi.type
        if _info(vi.type) is not None:
            complete.add(vi.name)
    data: dict[str, onnx.TensorProto] = {}
    for tensor in g.initializer:
        if tensor.name not in complete:
            types[tensor.name] = onnx.helper.make_tensor_type_proto(
                tensor.data_type, list(tensor.dims))
            complete.add(tensor.name)
        if not tensor.external_data and tensor.ByteSize() <= 4096:
            data[tensor.name] = tensor
    opsets = {o.domain or "": o.version for o in inferred.opset_import}
    added: dict[str, onnx.TypeProto] = {}
    for node in g.node:
        if node.op_type == "Constant" and len(node.attribute) == 1 \
                and node.attribute[0].name == "value":
            data[node.output[0]] = node.attribute[0].t
        wanted = [o for o in node.output if o and o not in complete]
        if not wanted:
            continue
        found = _node_types(node, types, complete, data, opsets, inferred)
        for name, type_proto in found.items():
            if name in wanted and _info(type_proto) is not None:
                types[name] = added[name] = type_proto
                complete.add(name)
    by_name = {vi.name: vi for vi in g.value_info}
    for name, type_proto in added.items():
        vi = by_name.get(name)
        if vi is None:
            vi = g.value_info.add()
            vi.name = name
        vi.type.CopyFrom(type_proto)
    return len(added)


def _node_types(node: onnx.NodeProto, types: dict[str, onnx.TypeProto], complete: set[str],
                data: dict[str, onnx.TensorProto], opsets: dict[str, int],
                inferred: onnx.ModelProto) -> dict[str, onnx.TypeProto]:
    """One node's output types: from the contrib table, else onnx's schema inference."""
    import onnx

    domain = node.domain if node.domain != "ai.onnx" else ""
    if (domain, node.op_type) in RULES:
        ins = [_info(types[n]) if n and n in complete else None for n in node.input]
        outs = rule_types(node.op_type, domain, ins, _attr(node))
        return {name: onnx.helper.make_tensor_type_proto(t[0], t[1])
                for name, t in zip(node.output, outs, strict=False) if name and t is not None}
    if domain not in ("", "ai.onnx.ml") or any(n and n not in complete for n in node.input):
        return {}
    try:
        schema = onnx_core.defs.get_schema(node.op_type, opsets.get(domain, 1), domain)
        return onnx.shape_inference.infer_node_outputs(
            schema, node, {n: types[n] for n in node.input if n},
            {n: data[n] for n in node.input if n in data}, opset_imports=list(
                inferred.opset_import), ir_version=inferred.ir_version)
    except Exception:  # unknown op, a type clash: the output stays unknown, as before
        return {}
