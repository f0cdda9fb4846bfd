"""What the user typed or picked, as edit operations for the core.

The panels emit edit keys (``attr:n12:alpha``, ``dims:in:x``...) with the new text; the
canvas names boxes (``n12``, ``in:x``, ``out:y``) and tensors. This module turns those into
``{"op": ...}`` edits; it knows the plain Model, never the proto.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from onnxstudio.errors import EditError
from onnxstudio.model import Model

_MAIN_NODE = re.compile(r"^n(\d+)$")


def node_ref(model: Model, node_id: str) -> str:
    """How an edit names a main-graph node: its name, or ``#index`` when it has none."""
    match = _MAIN_NODE.match(node_id)
    if match is None:
        raise EditError("nodes inside If/Loop/Scan bodies or functions cannot be edited yet")
    node = model.graph.nodes[int(match.group(1))]
    return node.name or f"#{node.index}"


def parse_value(text: str) -> Any:
    """A typed value from what the user wrote: ``2``, ``0.5``, ``[1, 2]``, ``1, 2``,
    ``'SAME_UPPER'`` or a bare word (a string)."""
    text = text.strip()
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    if isinstance(value, tuple):
        value = list(value)
    return value


def parse_dims(text: str) -> list[int | str | None]:
    """``[1, 3, ?, width]`` (dtype words before the bracket are ignored) as dims."""
    match = re.search(r"\[(.*)\]", text)
    body = match.group(1) if match else text
    dims: list[int | str | None] = []
    for part in (p.strip() for p in body.replace("×", ",").split(",")):
        if not part:
            continue
        dims.append(None if part == "?" else int(part) if part.isdigit() else part)
    return dims


def dims_edits(model: Model, side: str, name: str, text: str) -> list[dict[str, Any]]:
    """One set_dim per changed axis of input (``side="in"``) or output ``name``."""
    value = model.graph.values.get(name)
    old = value.type.shape if value is not None else None
    new = parse_dims(text)
    key = "input" if side == "in" else "output"
    if old is None:
        raise EditError(f"'{name}' has no known shape to edit")
    if len(new) != len(old):
        raise EditError(f"'{name}' has {len(old)} dimensions; give {len(old)}, not {len(new)}")
    return [{"op": "set_dim", key: name, "axis": axis, "value": dim}
            for axis, (dim, was) in enumerate(zip(new, old, strict=True)) if dim != was]


def edits_for_key(model: Model, key: str, text: str) -> list[dict[str, Any]]:
    """The edits an in-place change in the Node or Model panel stands for."""
    kind, _, rest = key.partition(":")
    if kind == "attr":
        node_id, _, name = rest.rpartition(":")
        return [{"op": "set_attribute", "node": node_ref(model, node_id), "name": name,
                 "value": parse_value(text)}]
    if kind == "node-name":
        return [{"op": "rename", "kind": "node", "from": node_ref(model, rest), "to": text}]
    if kind == "meta":
        return [{"op": "set_metadata", "key": rest, "value": text}]
    side, _, name = rest.partition(":")
    if kind == "io-name":
        return [{"op": "rename", "kind": "input" if side == "in" else "output",
                 "from": name, "to": text}]
    if kind == "dims":
        return dims_edits(model, side, name, text)
    raise EditError(f"cannot edit '{key}'")
