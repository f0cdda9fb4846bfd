"""Edits of values: a dimension, an attribute, a metadata entry, an initializer's data.

Each function changes the model in place and returns the edit that undoes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference

from onnxstudio.errors import EditError
from onnxstudio.model.edit import names as nm
from onnxstudio.model.edit.fields import Edit, integer, text
from onnxstudio.model.schemas import normalize_domain, operator_schema

A = onnx.AttributeProto
_CONVERT: dict[int, type] = {A.INT: int, A.FLOAT: float, A.STRING: str}
_LISTS: dict[int, type] = {A.INTS: int, A.FLOATS: float, A.STRINGS: str}


def _dim_value(dim: onnx.TensorShapeProto.Dimension) -> int | str | None:
    if dim.HasField("dim_value"):
        return int(dim.dim_value)
    if dim.HasField("dim_param"):
        return dim.dim_param
    return None


def set_dim(model: onnx.ModelProto, edit: Edit) -> dict[str, Any]:
    """Set one dimension of a model input (or, with ``"output"``, of an output)."""
    side = "output" if "output" in edit and "input" not in edit else "input"
    name, axis, value = text(edit, side), integer(edit, "axis"), edit.get("value")
    if isinstance(value, bool) or not (value is None or isinstance(value, (int, str))):
        raise EditError("set_dim: 'value' must be a size, a symbol such as \"batch\", or null")
    if isinstance(value, int) and value < 0:
        raise EditError(f"set_dim: {value} is not a size; use a symbol for a free dimension")
    declared = model.graph.input if side == "input" else model.graph.output
    vi = next((v for v in declared if v.name == name), None)
    if vi is None or not vi.type.HasField("tensor_type"):
        raise EditError(f"set_dim: '{name}' is not a tensor {side} of the model")
    shape = vi.type.tensor_type.shape
    known = vi.type.tensor_type.HasField("shape")
    if not known or not -len(shape.dim) <= axis < len(shape.dim):
        raise EditError(f"set_dim: '{name}' has no axis {axis} "
                        f"(rank {len(shape.dim) if known else 'unknown'})")
    dim = shape.dim[axis]
    old = _dim_value(dim)
    dim.Clear()
    if isinstance(value, int):
        dim.dim_value = value
    elif value:
        dim.dim_param = value
    return {"op": "set_dim", side: name, "axis": axis, "value": old}


def _attr_type(model: onnx.ModelProto, node: onnx.NodeProto, name: str, value: Any) -> int:
    """The attribute's type from the schema in force, else from the node or the value."""
    opsets = {normalize_domain(o.domain): o.version for o in model.opset_import}
    domain = normalize_domain(node.domain)
    schema = operator_schema(node.op_type, domain, opsets.get(domain))
    if schema is not None:
        if name not in schema.attributes:
            known = ", ".join(sorted(schema.attributes)) or "none"
            raise EditError(f"set_attribute: {node.op_type} has no attribute '{name}' "
                            f"(it has: {known})")
        return int(schema.attributes[name].type)
    current = next((a for a in node.attribute if a.name == name), None)
    if current is not None:
        return int(current.type)
    return int(helper.make_attribute(name, value).type)


def attribute_proto(model: onnx.ModelProto, node: onnx.NodeProto, name: str,
                    value: Any) -> onnx.AttributeProto:
    """``value`` (JSON: number, string, list) as the attribute type the schema asks for."""
    kind = _attr_type(model, node, name, value)
    label = A.AttributeType.Name(kind).lower()
    try:
        if kind in _CONVERT:
            if isinstance(value, (list, dict)) or (kind != A.STRING and isinstance(value, str)):
                raise TypeError
            typed: Any = _CONVERT[kind](value)
            if kind == A.INT and typed != value:
                raise TypeError
        elif kind in _LISTS:
            if not isinstance(value, list) or any(isinstance(v, (list, dict)) for v in value):
                raise TypeError
            typed = [_LISTS[kind](v) for v in value]
        else:
            raise EditError(f"set_attribute: '{name}' is a {label} attribute, which "
                            "cannot be set from a script")
    except (TypeError, ValueError) as exc:
        raise EditError(f"set_attribute: {node.op_type}.{name} takes {label}, "
                        f"not {value!r}") from exc
    return helper.make_attribute(name, typed, attr_type=kind)


def attribute_value(attr: onnx.AttributeProto) -> Any:
    """An attribute as script JSON (the inverse of ``attribute_proto``)."""
    value = helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list):
        return [v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in value]
    return value


def set_attribute(model: onnx.ModelProto, edit: Edit) -> dict[str, Any]:
    """Set (or, with a null value, remove) one attribute of a main-graph node."""
    graph = model.graph
    ref, name, value = text(edit, "node"), text(edit, "name"), edit.get("value")
    node = graph.node[nm.find_node(graph, ref)]
    index = next((i for i, a in enumerate(node.attribute) if a.name == name), None)
    undo: dict[str, Any] = {"op": "set_attribute", "node": ref, "name": name, "value": None}
    if index is not None:
        old = node.attribute[index]
        if old.type in (A.GRAPH, A.GRAPHS, A.TENSOR, A.SPARSE_TENSOR):
            raise EditError(f"set_attribute: '{name}' holds a graph or tensor; it cannot be "
                            "set from a script")
        undo["value"], undo["index"] = attribute_value(old), index
    if value is None:
        if index is None:
            raise EditError(f"set_attribute: '{ref}' has no attribute '{name}' to remove")
        del node.attribute[index]
        return undo
    made = attribute_proto(model, node, name, value)
    if index is None:
        where = edit.get("index")
        node.attribute.insert(where if isinstance(where, int) else len(node.attribute), made)
    else:
        node.attribute[index].CopyFrom(made)
    return undo


def set_metadata(model: onnx.ModelProto, edit: Edit) -> dict[str, Any]:
    """Set a metadata entry; a null value removes it."""
    key, value = text(edit, "key"), edit.get("value")
    if value is not None and not isinstance(value, str):
        raise EditError(f"set_metadata: the value of '{key}' must be text or null")
    props = model.metadata_props
    index = next((i for i, p in enumerate(props) if p.key == key), None)
    undo: dict[str, Any] = {"op": "set_metadata", "key": key, "value": None}
    if index is not None:
        undo["value"], undo["index"] = props[index].value, index
    if value is None:
        if index is None:
            raise EditError(f"set_metadata: there is no metadata entry '{key}' to remove")
        del props[index]
    elif index is not None:
        props[index].value = value
    else:
        where = edit.get("index")
        entry = onnx.StringStringEntryProto(key=key, value=value)
        props.insert(where if isinstance(where, int) else len(props), entry)
    return undo


def strict_shape_problem(model: onnx.ModelProto) -> str | None:
    """What strict shape inference says is wrong, or None.

    Intermediate shape annotations (``value_info``) are left out: exporters write them,
    an edit upstream makes them stale, and they are derived data, refreshed on saving.
    """
    if model.graph.value_info:
        bare = onnx.ModelProto()
        bare.CopyFrom(model)
        bare.graph.ClearField("value_info")
        model = bare
    try:
        shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    except Exception as exc:  # onnx raises several types for one failure
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        return lines[0] if lines else type(exc).__name__
    return None


def _read_npy(path: Path) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except FileNotFoundError as exc:
        raise EditError(f"set_initializer: {path}: file not found") from exc
    except (OSError, ValueError) as exc:
        raise EditError(f"set_initializer: {path.name}: not a readable .npy array "
                        f"({exc})") from exc


def set_initializer(model: onnx.ModelProto, edit: Edit) -> dict[str, Any]:
    """Replace a weight's values from a .npy file: same dtype; a new shape only if every
    reader still passes shape inference with it."""
    graph = model.graph
    name, path = text(edit, "name"), Path(text(edit, "npy")).expanduser()
    index = next((i for i, t in enumerate(graph.initializer) if t.name == name), None)
    if index is None:
        raise EditError(f"set_initializer: no initializer named '{name}'")
    old = graph.initializer[index]
    array = _read_npy(path)
    want = helper.tensor_dtype_to_np_dtype(old.data_type)
    if array.dtype != want:
        raise EditError(f"set_initializer: {path.name} holds {array.dtype}, but '{name}' "
                        f"is {want}; convert it first")
    undo = restore_initializer_edit(index, old)
    if tuple(array.shape) != tuple(old.dims):
        before = strict_shape_problem(model)
        graph.initializer[index].CopyFrom(numpy_helper.from_array(array, name))
        after = strict_shape_problem(model) if before is None else None
        if after is not None:
            restore_initializer(model, undo)
            raise EditError(f"set_initializer: '{name}' cannot become {list(array.shape)} "
                            f"(was {list(old.dims)}): {after}")
    else:
        graph.initializer[index].CopyFrom(numpy_helper.from_array(array, name))
    return undo


def restore_initializer_edit(index: int, tensor: onnx.TensorProto) -> dict[str, Any]:
    return {"op": "_restore_initializer", "index": index,
            "tensor": tensor.SerializeToString()}


def restore_initializer(model: onnx.ModelProto, edit: Edit) -> dict[str, Any]:
    """Put back a weight exactly as it was (an external-data reference stays one)."""
    index = edit["index"]
    undo = restore_initializer_edit(index, model.graph.initializer[index])
    model.graph.initializer[index].CopyFrom(onnx.TensorProto.FromString(edit["tensor"]))
    return undo
