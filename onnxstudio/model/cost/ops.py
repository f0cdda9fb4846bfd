"""Multiply-accumulates of one node, counted as onnx-tool counts them: a product of
matrices or a convolution is (output elements x reduction length) MACs, plus one add per
output element when a bias is given. Every other operator is "element operations": one
per output element (one per input element for reductions and pooling), none for
reshapes, shape queries and constants."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from onnxstudio.model.graph import Node

Shape = tuple[int, ...]
ShapeOf = Callable[[str], Shape | None]  # value name -> concrete shape; None: unknown

# Operators that only relabel or copy data, or read shapes: no arithmetic.
NO_ARITHMETIC = frozenset({
    "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Shape", "Size", "Constant",
    "ConstantOfShape", "Identity", "Dropout", "Transpose", "Gather", "GatherElements",
    "GatherND", "Concat", "Slice", "Split", "Expand", "Tile", "Pad", "Cast", "CastLike",
    "DepthToSpace", "SpaceToDepth", "Range", "NonZero", "OptionalHasElement",
})
# Operators that read every input element once (the output is smaller).
PER_INPUT = frozenset({
    "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
    "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin",
    "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "MaxPool", "AveragePool",
    "LpPool",
})
MICROSOFT = "com.microsoft"


def elements(shape: Sequence[int] | None) -> int:
    return math.prod(shape) if shape is not None else 0


def _attr(node: Node, name: str, default: int = 0) -> int:
    found = node.attribute(name)
    return int(found.value) if found is not None and isinstance(found.value, int) else default


def _given(node: Node, i: int) -> str:
    return node.inputs[i] if i < len(node.inputs) else ""


def _out(node: Node, shape_of: ShapeOf) -> int:
    return elements(shape_of(node.outputs[0])) if node.outputs and node.outputs[0] else 0


def _bias(node: Node, i: int, out: int) -> int:
    """One add per output element when input ``i`` (a bias) is given."""
    return out if _given(node, i) else 0


def _conv(node: Node, shape_of: ShapeOf, weight: int, bias: int) -> int:
    w = shape_of(_given(node, weight))
    out = _out(node, shape_of)
    if w is None or len(w) < 2:
        return 0
    return out * math.prod(w[1:]) + _bias(node, bias, out)


def _conv_transpose(node: Node, shape_of: ShapeOf) -> int:
    """Each input element is scattered over (Cout/group x kernel) outputs."""
    x, w = shape_of(node.inputs[0]), shape_of(_given(node, 1))
    if x is None or w is None or len(w) < 2:
        return 0
    return elements(x) * math.prod(w[1:]) + _bias(node, 2, _out(node, shape_of))


def _gemm(node: Node, shape_of: ShapeOf) -> int:
    a = shape_of(node.inputs[0])
    if a is None or len(a) < 2:
        return 0
    k = a[-2] if _attr(node, "transA") else a[-1]
    out = _out(node, shape_of)
    return out * k + _bias(node, 2, out)


def _matmul(node: Node, shape_of: ShapeOf, a_index: int = 0, bias: int = -1) -> int:
    a = shape_of(_given(node, a_index))
    if a is None or not a:
        return 0
    out = _out(node, shape_of)
    return out * a[-1] + (_bias(node, bias, out) if bias >= 0 else 0)


def _matmul_nbits(node: Node, shape_of: ShapeOf) -> int:
    k = _attr(node, "K")
    if not k:
        return _matmul(node, shape_of)
    out = _out(node, shape_of)
    return out * k + _bias(node, 5, out)


def _key_length(node: Node, shape_of: ShapeOf, key: int, past: int,
                present: int) -> int:
    """Keys each query attends to: the present key's sequence if reported, else the
    key input's plus the past's."""
    if present < len(node.outputs) and node.outputs[present]:
        p = shape_of(node.outputs[present])
        if p is not None and len(p) == 4:
            return p[2]
    k = shape_of(_given(node, key))
    length = 0
    if k is not None and len(k) >= 3:
        length = k[-2] if len(k) == 4 else k[1]
    past_shape = shape_of(_given(node, past)) if past >= 0 else None
    if past_shape is not None and len(past_shape) == 4:
        length += past_shape[2]
    return length


def _attention_core(node: Node, shape_of: ShapeOf, query: int, key: int, past: int,
                    present: int) -> int:
    """Q·Kᵀ (query elements x keys) plus softmax·V (output elements x keys)."""
    q = shape_of(_given(node, query))
    length = _key_length(node, shape_of, key, past, present)
    if q is None or not length:
        return 0
    if key < 0 or not _given(node, key):  # packed QKV: only the query's share of it
        heads, kv = _attr(node, "num_heads", 1), _attr(node, "kv_num_heads")
        width = q[-1]
        q_width = width * heads // (heads + 2 * (kv or heads))
        q = (*q[:-1], q_width)
    return (elements(q) + _out(node, shape_of)) * length


def _ms_attention(node: Node, shape_of: ShapeOf) -> int:
    """com.microsoft Attention: the QKV projection, then attention over the keys."""
    x, w = shape_of(node.inputs[0]), shape_of(_given(node, 1))
    if x is None or w is None or len(w) != 2 or not x:
        return 0
    tokens = elements(x) // x[-1]
    projection = tokens * w[0] * w[1] + (tokens * w[1] if _given(node, 2) else 0)
    out = _out(node, shape_of)
    past = shape_of(_given(node, 4))
    length = (x[1] if len(x) >= 2 else 1) + (past[3] if past is not None and len(past) == 5
                                             else 0)
    return projection + 2 * out * length


MACS: dict[tuple[str, str], Callable[[Node, ShapeOf], int]] = {
    ("", "Conv"): lambda n, s: _conv(n, s, 1, 2),
    ("", "ConvInteger"): lambda n, s: _conv(n, s, 1, -1),
    ("", "QLinearConv"): lambda n, s: _conv(n, s, 3, 8),
    ("", "ConvTranspose"): _conv_transpose,
    ("", "Gemm"): _gemm,
    ("", "MatMul"): _matmul,
    ("", "MatMulInteger"): _matmul,
    ("", "QLinearMatMul"): _matmul,
    ("", "Attention"): lambda n, s: _attention_core(n, s, 0, 1, 4, 1),
    (MICROSOFT, "MatMulNBits"): _matmul_nbits,
    (MICROSOFT, "FusedMatMul"): _matmul,
    (MICROSOFT, "FusedConv"): lambda n, s: _conv(n, s, 1, 2),
    (MICROSOFT, "FusedGemm"): _gemm,
    (MICROSOFT, "Attention"): _ms_attention,
    (MICROSOFT, "MultiHeadAttention"): lambda n, s: _attention_core(n, s, 0, 1, 6, 1),
    (MICROSOFT, "GroupQueryAttention"): lambda n, s: _attention_core(n, s, 0, 1, 3, 1),
}


def node_work(node: Node, shape_of: ShapeOf) -> tuple[int, int]:
    """(multiply-accumulates, element operations) of ``node``."""
    domain = node.domain if node.domain != "ai.onnx" else ""
    count = MACS.get((domain, node.op_type))
    if count is not None:
        return count(node, shape_of), 0
    if node.op_type in NO_ARITHMETIC or node.subgraphs or node.function is not None:
        return 0, 0
    if node.op_type in PER_INPUT and node.inputs:
        return 0, elements(shape_of(node.inputs[0]))
    return 0, sum(elements(shape_of(o)) for o in node.outputs if o)
