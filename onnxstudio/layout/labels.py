"""Per-operator display text (category, key attributes, folded inputs) and box sizes.

Qt-free: sizes come from fixed average character widths, so layout never needs a font
engine. render/ should draw with the same constants (import them from here) so the
text fits the boxes the layout reserved:

- titles: a ~11 px sans-serif font, average advance ``TITLE_CHAR_W`` px per character;
- detail lines: a ~10 px font, ``DETAIL_CHAR_W`` px per character;
- lines are ``TITLE_LINE_H`` / ``DETAIL_LINE_H`` px tall, boxes have ``PAD_X``/``PAD_Y``
  padding; widths are clamped to ``[MIN_W, MAX_W]`` and longer detail lines are cut
  with an ellipsis, at most ``MAX_DETAILS`` lines.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from onnxstudio.model.graph import Attribute, Graph, Node, TensorSummary

TITLE_FONT_PX = 11
DETAIL_FONT_PX = 10
TITLE_CHAR_W = 6.8
DETAIL_CHAR_W = 5.9
TITLE_LINE_H = 16.0
DETAIL_LINE_H = 14.0
PAD_X = 8.0
PAD_Y = 5.0
MIN_W = 56.0
MAX_W = 220.0
MAX_DETAILS = 6

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
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (list, tuple)):
        return ",".join(_fmt(v) for v in value)
    return str(value)


def _attrs(node: Node) -> dict[str, Attribute]:
    return {a.name: a for a in node.attributes}


def _lines(node: Node, spec: Sequence[tuple[str, str, Any]]) -> list[str]:
    """spec: (attribute, label, default-to-hide); a ``×``-joined list for shapes."""
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
    return formatter(node) if formatter is not None else []


# --- folded inputs: initializers and Constant outputs shown inside their consumer -------

INPUT_NAMES: dict[str, tuple[str, ...]] = {
    "Conv": ("X", "W", "B"),
    "ConvTranspose": ("X", "W", "B"),
    "Gemm": ("A", "B", "C"),
    "MatMul": ("A", "B"),
    "Add": ("A", "B"), "Sub": ("A", "B"), "Mul": ("A", "B"), "Div": ("A", "B"),
    "Pow": ("X", "Y"),
    "BatchNormalization": ("X", "scale", "B", "mean", "var"),
    "LayerNormalization": ("X", "scale", "B"),
    "InstanceNormalization": ("X", "scale", "B"),
    "Reshape": ("data", "shape"),
    "Gather": ("data", "indices"),
    "Unsqueeze": ("data", "axes"), "Squeeze": ("data", "axes"),
    "Slice": ("data", "starts", "ends", "axes", "steps"),
    "Expand": ("input", "shape"),
    "Where": ("condition", "X", "Y"),
    "Concat": (),
    "Range": ("start", "limit", "delta"),
    "Pad": ("data", "pads", "value", "axes"),
    "Resize": ("X", "roi", "scales", "sizes"),
    "Clip": ("input", "min", "max"),
    "QuantizeLinear": ("x", "scale", "zero_point"),
    "DequantizeLinear": ("x", "scale", "zero_point"),
    "Equal": ("A", "B"),
}


def input_slot(op_type: str, index: int) -> str:
    names = INPUT_NAMES.get(op_type, ())
    return names[index] if index < len(names) else f"in{index}"


def _shape(shape: Sequence[Any]) -> str:
    return "×".join(str(d) for d in shape) if shape else "scalar"


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
            out.append(f"{input_slot(node.op_type, i)} ⟨{_shape(info.shape)}⟩")
        elif name in constants:
            out.append(f"{input_slot(node.op_type, i)} {constants[name]}")
    return out


# --- sizes -------------------------------------------------------------------------------


def fit_details(details: list[str]) -> list[str]:
    """Cut to MAX_DETAILS lines of at most MAX_W width, so boxes stay compact."""
    max_chars = int((MAX_W - 2 * PAD_X) / DETAIL_CHAR_W)
    lines = [d if len(d) <= max_chars else d[: max_chars - 1] + "…" for d in details]
    if len(lines) > MAX_DETAILS:
        lines = [*lines[: MAX_DETAILS - 1], f"… {len(lines) - MAX_DETAILS + 1} more"]
    return lines


def box_size(title: str, details: Sequence[str] = (), subtitle: str = "") -> tuple[float, float]:
    """(width, height) in px for a box showing ``title`` over ``details`` (and subtitle)."""
    chars = max(len(title) * TITLE_CHAR_W, max((len(d) for d in details), default=0)
                * DETAIL_CHAR_W, len(subtitle) * DETAIL_CHAR_W)
    width = min(MAX_W, max(MIN_W, chars + 2 * PAD_X))
    lines = len(details) + (1 if subtitle else 0)
    return round(width), 2 * PAD_Y + TITLE_LINE_H + lines * DETAIL_LINE_H
