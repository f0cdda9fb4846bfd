"""Per-operator display text: category, key attributes, folded inputs, shapes.

Qt-free. Box sizes for this text are computed in :mod:`onnxstudio.layout.sizing` from
the same metrics the painter uses. Input slots are named from the operator's schema
(onnx's, or onnxruntime's for its contrib domains); ``inN`` only where none exists.
In a symbolic dimension longer than ``ABBREVIATE_OVER`` characters, multi-word names
are written as their initials (``sequence_length`` -> ``sl``, ``past_seq_len + seq_len``
-> ``psl + sl``), everywhere the same way; :func:`dim_abbreviations` lists them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from onnxstudio.model.formatting import format_number
from onnxstudio.model.formatting import shape_text as _shape
from onnxstudio.model.graph import Attribute, Graph, Model, Node, TensorSummary, TensorType
from onnxstudio.model.schemas import input_names, slot_names

Category = str

_CATEGORIES: dict[str, tuple[str, ...]] = {
    "conv": ("Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "DeformConv"),
    "activation": (
        "Relu", "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "Tanh", "Elu", "Selu",
        "Celu", "Gelu", "FastGelu", "QuickGelu", "BiasGelu", "Softplus", "Softsign", "Mish",
        "HardSwish", "ThresholdedRelu", "Softmax", "LogSoftmax", "Hardmax", "Erf", "Swish",
    ),
    "norm": (
        "BatchNormalization", "LayerNormalization", "InstanceNormalization",
        "GroupNormalization", "LpNormalization", "MeanVarianceNormalization",
        "SimplifiedLayerNormalization", "SkipLayerNormalization", "RMSNormalization",
        "LRN", "Dropout",
    ),
    "pool": (
        "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "LpPool",
        "GlobalLpPool", "MaxRoiPool", "RoiAlign", "MaxUnpool",
    ),
    "shape": (
        "Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Concat", "Split",
        "Slice", "Gather", "GatherElements", "GatherND", "Scatter", "ScatterElements",
        "ScatterND", "Shape", "Size", "Expand", "Tile", "Pad", "Identity", "Cast",
        "CastLike", "ConstantOfShape", "Range", "Resize", "Upsample", "DepthToSpace",
        "SpaceToDepth", "Compress", "NonZero", "OneHot", "Trilu", "SplitToSequence",
        "ConcatFromSequence", "SequenceAt", "SequenceConstruct", "SequenceInsert",
    ),
    "math": (
        "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Neg", "Abs", "Reciprocal",
        "MatMul", "Gemm", "Einsum", "Sum", "Mean", "Max", "Min", "Floor", "Ceil", "Round",
        "Sign", "Mod", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
        "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
        "ArgMax", "ArgMin", "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual",
        "Not", "And", "Or", "Xor", "Where", "Clip", "CumSum", "TopK", "Sin", "Cos",
        "Tan", "Atan", "Asin", "Acos", "Sinh", "Cosh", "IsNaN", "IsInf", "BitShift",
        "Det", "Attention", "MultiHeadAttention", "LSTM", "GRU", "RNN",
    ),
    "control": ("If", "Loop", "Scan", "SequenceMap"),
    "quant": (
        "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearMatMul",
        "MatMulInteger", "QLinearAdd", "QLinearMul", "QLinearSigmoid", "QGemm",
        "DynamicQuantizeMatMul", "MatMulNBits",
    ),
    "io": ("Constant",),
}
_CATEGORY_OF = {op: cat for cat, ops in _CATEGORIES.items() for op in ops}
_STANDARD_DOMAINS = ("", "ai.onnx", "ai.onnx.ml")


def category(op_type: str, domain: str = "") -> Category:
    """Colour key for an operator; unknown ops in non-standard domains are "custom"."""
    found = _CATEGORY_OF.get(op_type)
    if found is not None:
        return found
    return "other" if domain in _STANDARD_DOMAINS else "custom"


# --- key attributes: one small formatter per operator family -------------------------

_DTYPES = {
    1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
    8: "string", 9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64",
    16: "bfloat16",
}


def _fmt(value: Any) -> str:
    if isinstance(value, TensorSummary):
        return value.preview or f"⟨{'×'.join(map(str, value.shape))}⟩"
    if isinstance(value, (list, tuple)):
        return ",".join(_fmt(v) for v in value)
    return format_number(value, 4)


def _attrs(node: Node) -> dict[str, Attribute]:
    return {a.name: a for a in node.attributes}


_LINES: dict[tuple[Any, ...], list[str]] = {}


def _lines(node: Node, spec: Sequence[tuple[str, str, Any]]) -> list[str]:
    """spec: (attribute, label, default-to-hide); a ``×``-joined list for shapes.
    Integer and text attributes repeat across a model's layers: their lines are memoised
    (floats are not, as 0.0 and -0.0 would share a key but not a text)."""
    plain = _plain_attributes(node)
    if plain is None:
        return _format_lines(node, spec)
    key = (spec, plain)
    hit = _LINES.get(key)
    if hit is None:
        hit = _format_lines(node, spec)
        if len(_LINES) < 4096:
            _LINES[key] = hit
    return list(hit)


def _plain_attributes(node: Node) -> tuple[tuple[str, Any], ...] | None:
    """(name, value) of every attribute when all are ints, texts or lists of ints."""
    out = []
    for a in node.attributes:
        value = a.value
        kind = type(value)
        if kind is int or kind is str:
            out.append((a.name, value))
        elif kind is list and all(type(v) is int for v in value):
            out.append((a.name, tuple(value)))
        else:
            return None
    return tuple(out)


def _format_lines(node: Node, spec: Sequence[tuple[str, str, Any]]) -> list[str]:
    attrs = _attrs(node)
    out: list[str] = []
    for name, label, hidden in spec:
        attr = attrs.get(name)
        if attr is None or attr.value == hidden:
            continue
        value = attr.value
        if isinstance(value, list) and name in ("kernel_shape", "strides", "dilations", "pads"):
            if (name == "pads" and not any(value)) or (hidden == 1 and all(v == 1 for v in value)):
                continue
            text = ",".join(map(str, value)) if name == "pads" else "×".join(map(str, value))
        else:
            text = _fmt(value)
        out.append(f"{label} {text}" if label else text)
    return out


_CONV = (("kernel_shape", "kernel", None), ("strides", "stride", 1),
         ("pads", "pads", None), ("dilations", "dilation", 1), ("group", "group", 1))
_POOL = (("kernel_shape", "kernel", None), ("strides", "stride", 1), ("pads", "pads", None))
_AXIS = (("axis", "axis", None), ("axes", "axes", None), ("keepdims", "keepdims", 1))


def _cast(node: Node) -> list[str]:
    attr = node.attribute("to")
    return [f"to {_DTYPES.get(attr.value, attr.value)}"] if attr is not None else []


AttributeFormatter = Callable[[Node], list[str]]

ATTRIBUTE_LINES: dict[str, AttributeFormatter] = {
    "Conv": lambda n: _lines(n, _CONV),
    "ConvTranspose": lambda n: _lines(n, _CONV),
    "MaxPool": lambda n: _lines(n, _POOL),
    "AveragePool": lambda n: _lines(n, _POOL),
    "LpPool": lambda n: _lines(n, _POOL),
    "Transpose": lambda n: _lines(n, (("perm", "perm", None),)),
    "Gemm": lambda n: _lines(n, (("transA", "transA", 0), ("transB", "transB", 0),
                                 ("alpha", "α", 1.0), ("beta", "β", 1.0))),
    "Cast": _cast,
    "Reshape": lambda n: _lines(n, (("allowzero", "allowzero", 0),)),
    "Einsum": lambda n: _lines(n, (("equation", "", None),)),
    "LeakyRelu": lambda n: _lines(n, (("alpha", "α", None),)),
    "Elu": lambda n: _lines(n, (("alpha", "α", None),)),
    "Resize": lambda n: _lines(n, (("mode", "mode", None),)),
    "Pad": lambda n: _lines(n, (("mode", "mode", "constant"),)),
    "Split": lambda n: _lines(n, (("axis", "axis", 0),)),
    "LayerNormalization": lambda n: _lines(n, (("axis", "axis", -1), ("epsilon", "ε", None))),
    "BatchNormalization": lambda n: _lines(n, (("epsilon", "ε", None),)),
    "Constant": lambda n: [_fmt(a.value) for a in n.attributes][:1],
}
for _op in ("Softmax", "LogSoftmax", "Concat", "Gather", "GatherElements", "Flatten",
            "Squeeze", "Unsqueeze", "CumSum", "ArgMax", "ArgMin", "ReduceMean", "ReduceSum",
            "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2", "TopK", "Hardmax"):
    ATTRIBUTE_LINES.setdefault(_op, lambda n: _lines(n, _AXIS))


def attribute_lines(node: Node) -> list[str]:
    formatter = ATTRIBUTE_LINES.get(node.op_type)
    # every formatter shows attributes, so a node without any (opset-13 Unsqueeze and
    # Reshape, a thousand of them in BERT-96) has none to show
    return formatter(node) if formatter is not None and node.attributes else []


# --- folded inputs: initializers and Constant outputs shown inside their consumer -------

def input_slot(node: Node, index: int) -> str:
    """The schema's name for ``node``'s ``index``-th input (variadic ones numbered);
    ``inN`` only when neither onnx nor onnxruntime describes the operator."""
    return _slot(node.op_type, node.domain, node.schema.since_version, index)


# Every box with a weight asks for its slot names and shapes, and a transformer asks for
# the same few thousands of times: cached, a box's text costs a few lookups.
@lru_cache(maxsize=4096)
def _slot(op_type: str, domain: str, version: int | None, index: int) -> str:
    names, variadic = input_names(op_type, domain, version)
    return slot_names(names, index + 1, variadic)[index] if names else f"in{index}"


@lru_cache(maxsize=4096)
def _weight_text(shape: tuple[int, ...]) -> str:
    return f"⟨{_shape(shape)}⟩"


ABBREVIATE_OVER = 12
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _initials(name: str) -> str:
    words = _WORDS.findall(name)
    return "".join(w if w.isdigit() else w[0] for w in words) or name[:1]


def _long_word(ident: str) -> bool:
    """Abbreviated inside a long dimension: multi-word names and very long ones."""
    return len(ident) > ABBREVIATE_OVER or ("_" in ident.strip("_") and len(ident) > 4)


def dim_text(dim: Any) -> str:
    """One dimension as drawn: a number, ``?``, or a (possibly abbreviated) symbol."""
    if dim is None:
        return "?"
    text = str(dim)
    if len(text) <= ABBREVIATE_OVER:
        return text
    return _IDENT.sub(lambda m: _initials(m[0]) if _long_word(m[0]) else m[0], text)


def shape_text(ttype: TensorType) -> str:
    """``1×3×224×224`` with long symbolic dimensions abbreviated; ``?`` for no rank."""
    shape = ttype.shape
    if shape is None:
        return "?"
    return _dims_text(shape) if type(shape) is tuple else _join_dims(shape)


def _join_dims(shape: Sequence[Any]) -> str:
    return "×".join(dim_text(d) for d in shape) or "scalar"


_dims_text = lru_cache(maxsize=1 << 14)(_join_dims)  # every edge label; shapes repeat


def type_text(ttype: TensorType) -> str:
    """``float32[bs×sl×768]``: TensorType.describe with abbreviated dimensions."""
    base = f"{ttype.dtype or '?'}[{shape_text(ttype)}]"
    return base if ttype.kind == "tensor" else f"{ttype.kind}<{base}>"


def dim_abbreviations(graph: Graph) -> dict[str, str]:
    """Abbreviation -> full symbolic dimension, for every abbreviated dim in ``graph``
    (bodies included), so the legend can say what ``sl`` stands for."""
    out: dict[str, str] = {}
    stack = [graph]
    while stack:
        g = stack.pop()
        for value in g.values.values():
            for dim in value.type.shape or ():
                if isinstance(dim, str) and len(dim) > ABBREVIATE_OVER:
                    for ident in _IDENT.findall(dim):
                        if _long_word(ident):
                            out.setdefault(_initials(ident), ident)
        stack.extend(b for n in g.nodes for b in n.subgraphs.values())
    return dict(sorted(out.items()))


def model_dim_abbreviations(model: Model) -> dict[str, str]:
    """``dim_abbreviations`` of the model's graph, once per set of types: a pass over every
    value (0.2 s on 100k nodes) that the open and shape tasks run off the GUI thread."""
    return model.memo("types:dim_abbreviations", lambda: dim_abbreviations(model.graph))


FOLDED_OPS = ("Constant", "ConstantOfShape")  # producers drawn as lines of their consumer


def is_folded(node: Node, folded: dict[str, str]) -> bool:
    """Whether ``node`` is drawn as a detail line of its consumers instead of a box."""
    return node.op_type in FOLDED_OPS and bool(node.outputs) and node.outputs[0] in folded


def folded_constants(graph: Graph) -> dict[str, str]:
    """Outputs of constant producers to fold into consumers: value name -> short text.

    Constant nodes, and ConstantOfShape fed only by weights or other folded constants
    (exporters such as onnx-caffe2 make every weight that way: shown as boxes they fill
    a row hundreds of nodes wide). A constant that is a graph output stays a box (it is
    an observable result).
    """
    outputs = set(graph.outputs)
    folded: dict[str, str] = {}
    for node in graph.nodes:  # topological order: a producer is decided before its readers
        if node.op_type not in FOLDED_OPS or node.domain not in _STANDARD_DOMAINS:
            continue
        if len(node.outputs) != 1 or node.outputs[0] in outputs or node.subgraphs:
            continue
        text = ""
        if node.op_type == "ConstantOfShape":
            if not all(i in graph.initializers or i in folded for i in node.inputs if i):
                continue
            value = graph.values.get(node.outputs[0])
            shape = value.type.shape if value is not None else None
            known = shape is not None and all(isinstance(d, int) for d in shape)
            text = f"⟨{_shape(shape)}⟩" if known and shape is not None else "⟨filled⟩"
        for attr in node.attributes if node.op_type == "Constant" else ():
            value = attr.value
            if isinstance(value, TensorSummary):
                small = value.preview and len(value.preview) <= 24
                text = f"= {value.preview}" if small else f"⟨{_shape(value.shape)}⟩"
            else:
                text = f"= {_fmt(value)}"
        folded[node.outputs[0]] = text
    return folded


def folded_input_lines(node: Node, graph: Graph, constants: dict[str, str]) -> list[str]:
    """Netron-style lines for weights and constants a node reads, e.g. ``W ⟨64×3×7×7⟩``."""
    out: list[str] = []
    inits = graph.initializers
    for i, name in enumerate(node.inputs):
        if not name:
            continue
        info = inits.get(name)
        if info is not None:
            shape = info.shape
            text = _weight_text(shape) if type(shape) is tuple else f"⟨{_shape(shape)}⟩"
            out.append(_slot_line(input_slot(node, i), text))
        elif name in constants:
            out.append(_slot_line(input_slot(node, i), constants[name]))
    return out


@lru_cache(maxsize=1 << 14)
def _slot_line(slot: str, text: str) -> str:
    """One string object per distinct line: the layout's memo of box sizes, keyed by
    the lines, then compares them by identity."""
    return f"{slot} {text}"
