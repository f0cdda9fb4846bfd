"""Text for what a node carries: attribute values, attributes as JSON, exporter provenance.

PyTorch's dynamo exporter writes `pkg.torch.onnx.stack_trace` (a Python traceback) and
`pkg.torch.onnx.class_hierarchy` (a Python list literal) into node metadata; users want
"which module, which source line", so both are parsed here into plain structures.
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass
from typing import Any

from onnxstudio.model.graph import Attribute, Node, TensorSummary

STACK_TRACE_KEY = "pkg.torch.onnx.stack_trace"
CLASS_HIERARCHY_KEY = "pkg.torch.onnx.class_hierarchy"
LIST_LIMIT = 64  # list attributes longer than this are shortened in the panel (not in JSON)


def _number(x: float) -> str:
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return repr(x) if isinstance(x, float) else str(x)


def format_value(value: Any, limit: int = LIST_LIMIT) -> str:
    """One attribute value as a user reads it: 1, 0.5, 'NOTSET', [1, 1], float32[64] …"""
    if isinstance(value, TensorSummary):
        shape = "×".join(str(d) for d in value.shape) or "scalar"
        return f"{value.dtype}[{shape}] {value.preview}".rstrip()
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        shown = [format_value(v, limit) if not isinstance(v, str) else repr(v)
                 for v in value[:limit]]
        more = f", … ({len(value)} items)" if len(value) > limit else ""
        return "[" + ", ".join(shown) + more + "]"
    if isinstance(value, float):
        return _number(value)
    return str(value)


def format_attribute(attr: Attribute) -> str:
    if attr.type in ("GRAPH", "GRAPHS"):
        names = attr.value if isinstance(attr.value, list) else [attr.value]
        return ", ".join(f"⟶ {n}" for n in names)
    if attr.type == "STRING":
        return repr(attr.value)
    return format_value(attr.value)


def _jsonable(value: Any) -> Any:
    if isinstance(value, TensorSummary):
        return {"dtype": value.dtype, "shape": list(value.shape), "preview": value.preview}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def attributes_dict(node: Node) -> dict[str, Any]:
    return {a.name: _jsonable(a.value) for a in node.attributes}


def attributes_json(node: Node) -> str:
    """The node's attributes as a JSON object (what "Copy attributes as JSON" puts out)."""
    return json.dumps(attributes_dict(node), indent=2, ensure_ascii=False)


@dataclass(frozen=True)
class Frame:
    """One frame of an exporter stack trace."""

    file: str
    line: int
    function: str
    code: str = ""

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"


_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>\S+))?')


def parse_stack_trace(text: str) -> list[Frame]:
    """Frames of a Python traceback, outermost first; the innermost is the source line."""
    frames: list[Frame] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = _FRAME.search(line)
        if not match:
            continue
        code = ""
        if i + 1 < len(lines) and not _FRAME.search(lines[i + 1]):
            code = lines[i + 1].strip()
        frames.append(Frame(match["file"], int(match["line"]), match["func"] or "", code))
    return frames


def parse_class_hierarchy(text: str) -> list[str]:
    """The module path from the model class down to the op, e.g. [BertModel, BertLayer, ...]."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return [part.strip() for part in text.strip("[]").split(",") if part.strip()]
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [str(value)]


def short_class(name: str) -> str:
    """'transformers.models.bert.modeling_bert.BertLayer' -> 'BertLayer';
    'aten.gather.default' -> 'aten.gather' (an ATen op keeps its namespace)."""
    if name.startswith(("aten.", "prims.")):
        return name.removesuffix(".default")
    return name.rsplit(".", 1)[-1]
