"""Edits of the graph's structure: rename, remove or add a node, add or remove an output.

Each function changes the model in place and returns the edit that undoes it. Undoing a
structural change restores a snapshot of the node list (nested bodies included), which
is exact where re-deriving the rewiring would not be.
"""

from __future__ import annotations

from typing import Any

import onnx
from onnx import helper, shape_inference

from onnxstudio.errors import EditError
from onnxstudio.model.edit import names as nm
from onnxstudio.model.edit.fields import Edit, names, text

RENAME_KINDS = ("input", "output", "node", "tensor")


def rename(model: onnx.ModelProto, edit: Edit) -> dict[str, Any]:
    kind, old, new = edit.get("kind"), text(edit, "from"), text(edit, "to")
    graph = model.graph
    if kind not in RENAME_KINDS:
        raise EditError(f"rename: 'kind' must be one of {', '.join(RENAME_KINDS)}")
    if kind == "node":
        index = nm.find_node(graph, old)
        if nm.has_node(graph, new):
            raise EditError(f"rename: a node named '{new}' already exists")
        was = graph.node[index].name
        # An unnamed node ("#3") has no name a rename could give back: undone by snapshot.
        undo = {"op": "rename", "kind": "node", "from": new, "to": was} if was else (
            _snapshot(graph))
        graph.node[index].name = new
        nm.node_renamed(graph, was, new, index)
        return undo
    initializers = {t.name for t in graph.initializer}
    if kind == "input" and old not in {vi.name for vi in graph.input} - initializers:
        raise EditError(f"rename: '{old}' is not an input of the model")
    if kind == "output" and old not in {vi.name for vi in graph.output}:
        raise EditError(f"rename: '{old}' is not an output of the model")
    if kind == "tensor" and old not in nm.all_names(graph):
        raise EditError(f"rename: no tensor named '{old}'")
    if new in nm.all_names(graph):
        raise EditError(f"rename: the name '{new}' is already used in the model")
    nm.rename_value(graph, old, new)
    return {"op": "rename", "kind": kind, "from": new, "to": old}


def _snapshot(graph: onnx.GraphProto) -> dict[str, Any]:
    holder = onnx.GraphProto()
    holder.node.extend(graph.node)
    holder.output.extend(graph.output)
    holder.value_info.extend(graph.value_info)
    return {"op": "_restore_structure", "graph": holder.SerializeToString()}


def restore_structure(model: onnx.ModelProto, edit: Edit) -> dict[str, Any]:
    """Put back the nodes, outputs and value infos saved by ``_snapshot``."""
    holder = onnx.GraphProto.FromString(edit["graph"])
    undo = _snapshot(model.graph)
    for name in ("node", "output", "value_info"):
        model.graph.ClearField(name)
        getattr(model.graph, name).extend(getattr(holder, name))
    return undo


def _constant_names(graph: onnx.GraphProto) -> set[str]:
    known = {t.name for t in graph.initializer}
    known.update(o for n in graph.node if n.op_type == "Constant" for o in n.output)
    return known


def remove_node(model: onnx.ModelProto, edit: Edit) -> dict[str, Any]:
    """Bypass a node with one data input and one used output: its readers read its input."""
    graph = model.graph
    ref = text(edit, "node")
    index = nm.find_node(graph, ref)
    node = graph.node[index]
    label = f"'{ref}' ({node.op_type})"
    constants = _constant_names(graph)
    data_in = [i for i in node.input if i and i not in constants]
    outputs = {o.name for o in graph.output}
    used = [o for o in node.output if o and (o in outputs or nm.readers(graph, o))]
    if len(data_in) != 1:
        raise EditError(f"remove_node: {label} has {len(data_in)} data inputs; only a node "
                        "with exactly one can be bypassed (its readers would not know "
                        "which input to read)")
    if len(used) > 1:
        raise EditError(f"remove_node: {label} has {len(used)} outputs in use "
                        f"({', '.join(used)}); only a node with one can be bypassed")
    source = data_in[0]
    if set(used) & outputs:
        _check_output_bypass(graph, source, used[0], label)
    undo = _snapshot(graph)
    source_type = _inferred_type(model, source) if set(used) & outputs else None
    del graph.node[index]
    if used:
        out = used[0]
        stale = [vi for vi in graph.value_info if vi.name == out]
        for vi in stale:
            graph.value_info.remove(vi)
        if out in outputs:
            _keep_output_name(graph, source, out, source_type)
        else:
            nm.rename_value(graph, out, source)
    return undo


def _check_output_bypass(graph: onnx.GraphProto, source: str, out: str, label: str) -> None:
    if nm.producer(graph, source) is None:
        raise EditError(f"remove_node: {label} connects model input '{source}' straight "
                        f"to model output '{out}'; remove the output instead")
    if source in {vi.name for vi in graph.output}:
        raise EditError(f"remove_node: its input '{source}' is a model output too; "
                        "remove one of the outputs first")


def _keep_output_name(graph: onnx.GraphProto, source: str, out: str,
                      source_type: onnx.TypeProto | None) -> None:
    """The removed node made a graph output: its input takes over the output's name."""
    declared = next(vi for vi in graph.output if vi.name == out)
    for vi in [vi for vi in graph.value_info if vi.name == source]:
        graph.value_info.remove(vi)
    nm.rename_value(graph, source, out)
    declared.type.Clear()  # the output now carries the input's type, which may differ
    if source_type is not None:
        declared.type.CopyFrom(source_type)


def drop_node(model: onnx.ModelProto, edit: Edit) -> dict[str, Any]:
    """Delete a node outright (the undo of add_node: nothing reads what it made)."""
    undo = _snapshot(model.graph)
    del model.graph.node[nm.find_node(model.graph, text(edit, "node"))]
    return undo


def add_node(model: onnx.ModelProto, edit: Edit) -> dict[str, Any]:
    from onnxstudio.model.edit.value_ops import attribute_proto

    graph = model.graph
    op_type, domain = text(edit, "op_type"), edit.get("domain", "") or ""
    inputs, outputs = names(edit, "inputs"), names(edit, "outputs")
    name = edit.get("name") or ""
    if not outputs:
        raise EditError(f"add_node: {op_type} needs at least one output name")
    imported = {o.domain for o in model.opset_import} | {"ai.onnx"}
    if (domain if domain != "ai.onnx" else "") not in imported and domain not in imported:
        raise EditError(f"add_node: the model imports no opset for domain '{domain}'")
    if name and any(n.name == name for n in graph.node):
        raise EditError(f"add_node: a node named '{name}' already exists")
    existing = nm.defined_names(graph)
    missing = [i for i in inputs if i and i not in existing]
    if missing:
        raise EditError(f"add_node: no tensor named '{missing[0]}' to read")
    taken = [o for o in outputs if o in nm.all_names(graph)]
    if taken:
        raise EditError(f"add_node: the name '{taken[0]}' is already used in the model")
    node = helper.make_node(op_type, inputs, outputs, name=name or None, domain=domain)
    attrs = edit.get("attributes") or {}
    if not isinstance(attrs, dict):
        raise EditError("add_node: 'attributes' must be an object of name: value")
    for key, value in attrs.items():
        node.attribute.append(attribute_proto(model, node, key, value))
    producers = [nm.producer(graph, i) for i in inputs if i]
    position = max((p + 1 for p in producers if p is not None), default=0)
    graph.node.insert(position, node)
    return {"op": "_drop_node", "node": name or f"#{position}"}


def _inferred_type(model: onnx.ModelProto, name: str) -> onnx.TypeProto | None:
    try:
        inferred = shape_inference.infer_shapes(model)
    except Exception:  # inference helps type the output; without it the type stays open
        return None
    return next((vi.type for vi in (*inferred.graph.value_info, *inferred.graph.output,
                                    *inferred.graph.input) if vi.name == name), None)


def add_output(model: onnx.ModelProto, edit: Edit) -> dict[str, Any]:
    graph = model.graph
    name = text(edit, "tensor")
    if name in {vi.name for vi in graph.output}:
        raise EditError(f"add_output: '{name}' is already an output")
    if name not in nm.defined_names(graph):
        raise EditError(f"add_output: no tensor named '{name}' in the main graph")
    vi = onnx.ValueInfoProto(name=name)
    found = _inferred_type(model, name)
    if found is not None:
        vi.type.CopyFrom(found)
    graph.output.append(vi)
    return {"op": "remove_output", "name": name}


def remove_output(model: onnx.ModelProto, edit: Edit) -> dict[str, Any]:
    graph = model.graph
    name = text(edit, "name")
    index = next((i for i, vi in enumerate(graph.output) if vi.name == name), None)
    if index is None:
        raise EditError(f"remove_output: '{name}' is not an output of the model")
    if len(graph.output) == 1:
        raise EditError(f"remove_output: '{name}' is the model's only output; a model "
                        "needs at least one")
    undo = _snapshot(graph)
    del graph.output[index]
    return undo
