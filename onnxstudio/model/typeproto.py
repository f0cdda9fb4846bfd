"""ONNX type and tensor protos as the plain values the Model holds (Qt-free, no weights
read): TensorType from a TypeProto, InitializerInfo and TensorSummary from a TensorProto."""

from __future__ import annotations

from math import prod
from typing import TYPE_CHECKING

from onnxstudio.model.dtypes import dtype_name, nbytes
from onnxstudio.model.graph import InitializerInfo, TensorSummary, TensorType
from onnxstudio.model.onnx_core import TensorProto

if TYPE_CHECKING:
    import numpy as np
    import onnx

UNKNOWN = TensorType()
"""The type of a value nothing declares: no dtype, unknown rank."""


def tensor_type(type_proto: onnx.TypeProto) -> TensorType:
    """What a TypeProto says of dtype and shape; symbolic dims kept as strings."""
    which = type_proto.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        tt = getattr(type_proto, which)
        shape = None
        if tt.HasField("shape"):
            shape = tuple(
                d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                for d in tt.shape.dim
            )
        kind = "tensor" if which == "tensor_type" else "sparse_tensor"
        return TensorType(dtype_name(tt.elem_type), shape, kind)
    if which == "sequence_type":
        inner = tensor_type(type_proto.sequence_type.elem_type)
        return TensorType(inner.dtype, inner.shape, "sequence")
    if which == "optional_type":
        inner = tensor_type(type_proto.optional_type.elem_type)
        return TensorType(inner.dtype, inner.shape, "optional")
    if which == "map_type":
        key = dtype_name(type_proto.map_type.key_type) or "?"
        value = tensor_type(type_proto.map_type.value_type)
        return TensorType(f"{key}→{value.describe()}", None, "map")
    return UNKNOWN


def initializer_info(tensor: onnx.TensorProto) -> InitializerInfo:
    dtype = dtype_name(tensor.data_type) or "undefined"
    shape = tuple(int(d) for d in tensor.dims)
    elements = prod(shape)
    size = nbytes(dtype, elements)
    if dtype == "string":
        size = sum(len(s) for s in tensor.string_data)
    location = None
    if tensor.data_location == TensorProto.EXTERNAL:
        location = next((e.value for e in tensor.external_data if e.key == "location"), None)
    return InitializerInfo(tensor.name, dtype, shape, elements, size, location)


def tensor_summary(tensor: onnx.TensorProto) -> TensorSummary:
    info = initializer_info(tensor)
    preview = ""
    if info.external_location is None and info.elements <= 4096:
        try:
            flat = _values(tensor, info).ravel()
            text = ", ".join(str(x) for x in flat[:8].tolist())
            preview = f"[{text}{', …' if flat.size > 8 else ''}]"
        except Exception:  # exotic dtypes numpy cannot hold: keep the summary
            preview = ""
    return TensorSummary(info.dtype, info.shape, preview)


# Where a plain tensor keeps its values when not in raw_data, by data type (raw_data
# holds them little-endian, as onnx writes them, in the dtype dtypes.py names).
_FIELDS = {
    TensorProto.FLOAT: "float_data",
    TensorProto.DOUBLE: "double_data",
    TensorProto.INT64: "int64_data",
    TensorProto.INT32: "int32_data",
    TensorProto.INT16: "int32_data",
    TensorProto.INT8: "int32_data",
    TensorProto.UINT16: "int32_data",
    TensorProto.UINT8: "int32_data",
    TensorProto.BOOL: "int32_data",
    TensorProto.UINT32: "uint64_data",
    TensorProto.UINT64: "uint64_data",
}


def _values(tensor: onnx.TensorProto, info: InitializerInfo) -> np.ndarray:
    """A small tensor's values, as onnx.numpy_helper.to_array gives them, read here for
    the plain numeric types (numpy_helper would import all of onnx: see onnx_core);
    other types go to numpy_helper."""
    import numpy as np

    name = _FIELDS.get(tensor.data_type)
    if name is None or tensor.HasField("segment"):
        from onnx import numpy_helper

        return numpy_helper.to_array(tensor)
    dtype = info.dtype
    if tensor.HasField("raw_data"):
        values = np.frombuffer(tensor.raw_data, dtype=np.dtype(dtype).newbyteorder("<"))
    else:
        values = np.asarray(getattr(tensor, name), dtype=dtype)
    return values.astype(dtype, copy=False).reshape(info.shape)
