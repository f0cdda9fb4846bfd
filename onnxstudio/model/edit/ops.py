"""The edit operations as data: apply one to a model proto and get the edit that undoes it.

An edit is a JSON object such as ``{"op": "rename", "kind": "input", "from": "x",
"to": "images"}``. Operations whose name starts with ``_`` are undo steps only: they carry
snapshots (bytes) and never appear in a saved script.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import onnx

from onnxstudio.errors import EditError
from onnxstudio.model.edit import graph_ops, value_ops

Edit = Mapping[str, Any]
Apply = Callable[[onnx.ModelProto, Edit], dict[str, Any]]

OPERATIONS: dict[str, Apply] = {
    "rename": graph_ops.rename,
    "set_dim": value_ops.set_dim,
    "remove_node": graph_ops.remove_node,
    "set_attribute": value_ops.set_attribute,
    "add_node": graph_ops.add_node,
    "add_output": graph_ops.add_output,
    "remove_output": graph_ops.remove_output,
    "set_metadata": value_ops.set_metadata,
    "set_initializer": value_ops.set_initializer,
}
_UNDO_ONLY: dict[str, Apply] = {
    "_restore_structure": graph_ops.restore_structure,
    "_drop_node": graph_ops.drop_node,
    "_restore_initializer": value_ops.restore_initializer,
}


def apply_edit(model: onnx.ModelProto, edit: Edit) -> dict[str, Any]:
    """Change ``model`` in place; return the edit that undoes it.

    A refused edit raises EditError and leaves the model as it was.
    """
    if not isinstance(edit, Mapping):
        raise EditError(f"an edit must be an object with an 'op', not {edit!r}")
    op = edit.get("op")
    apply = OPERATIONS.get(op) or _UNDO_ONLY.get(op)  # type: ignore[arg-type]
    if apply is None:
        raise EditError(f"unknown edit operation {op!r} (known: {', '.join(OPERATIONS)})")
    return apply(model, edit)


def apply_edits(model: onnx.ModelProto, edits: Iterable[Edit]) -> onnx.ModelProto:
    """A copy of ``model`` with ``edits`` applied in order; the first refused one stops it,
    its message prefixed with the edit's number."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for number, edit in enumerate(edits, 1):
        try:
            apply_edit(copy, edit)
        except EditError as exc:
            raise EditError(f"edit {number}: {exc}") from exc
    return copy


def describe(edit: Edit) -> str:
    """A short name for an edit, as the undo history shows it."""
    op = edit.get("op")
    if op == "rename":
        return f"Rename {edit.get('kind')} {edit.get('from')} → {edit.get('to')}"
    if op == "set_dim":
        side = "output" if "output" in edit and "input" not in edit else "input"
        value = edit.get("value")
        return f"Set {edit.get(side)}[{edit.get('axis')}] = {'?' if value is None else value}"
    if op == "remove_node":
        return f"Remove node {edit.get('node')}"
    if op == "set_attribute":
        verb = "Remove" if edit.get("value") is None else "Set"
        return f"{verb} {edit.get('node')}.{edit.get('name')}"
    if op == "add_node":
        return f"Add {edit.get('op_type')} node {edit.get('name') or ''}".rstrip()
    if op == "add_output":
        return f"Add output {edit.get('tensor')}"
    if op == "remove_output":
        return f"Remove output {edit.get('name')}"
    if op == "set_metadata":
        verb = "Remove" if edit.get("value") is None else "Set"
        return f"{verb} metadata {edit.get('key')}"
    if op == "set_initializer":
        return f"Replace weight {edit.get('name')}"
    return str(op)
