"""ONNX element types as the numpy-style names users and JSON consumers expect."""

from __future__ import annotations

from onnxstudio.model.onnx_core import TensorProto

_NAMES: dict[int, str] = {
    TensorProto.FLOAT: "float32",
    TensorProto.UINT8: "uint8",
    TensorProto.INT8: "int8",
    TensorProto.UINT16: "uint16",
    TensorProto.INT16: "int16",
    TensorProto.INT32: "int32",
    TensorProto.INT64: "int64",
    TensorProto.STRING: "string",
    TensorProto.BOOL: "bool",
    TensorProto.FLOAT16: "float16",
    TensorProto.DOUBLE: "float64",
    TensorProto.UINT32: "uint32",
    TensorProto.UINT64: "uint64",
    TensorProto.COMPLEX64: "complex64",
    TensorProto.COMPLEX128: "complex128",
    TensorProto.BFLOAT16: "bfloat16",
}
# Newer types: looked up by name so older onnx releases without them still import.
for _attr, _name in [
    ("FLOAT8E4M3FN", "float8e4m3fn"), ("FLOAT8E4M3FNUZ", "float8e4m3fnuz"),
    ("FLOAT8E5M2", "float8e5m2"), ("FLOAT8E5M2FNUZ", "float8e5m2fnuz"),
    ("UINT4", "uint4"), ("INT4", "int4"), ("FLOAT4E2M1", "float4e2m1"),
    ("FLOAT8E8M0", "float8e8m0"), ("UINT2", "uint2"), ("INT2", "int2"),
]:
    if hasattr(TensorProto, _attr):
        _NAMES[getattr(TensorProto, _attr)] = _name

# Bits per element; sub-byte types pack several elements per byte.
_BITS: dict[str, int] = {
    "float32": 32, "uint8": 8, "int8": 8, "uint16": 16, "int16": 16, "int32": 32,
    "int64": 64, "bool": 8, "float16": 16, "float64": 64, "uint32": 32, "uint64": 64,
    "complex64": 64, "complex128": 128, "bfloat16": 16, "float8e4m3fn": 8,
    "float8e4m3fnuz": 8, "float8e5m2": 8, "float8e5m2fnuz": 8, "float8e8m0": 8,
    "uint4": 4, "int4": 4, "float4e2m1": 4, "uint2": 2, "int2": 2,
}


def dtype_name(elem_type: int) -> str | None:
    """numpy-style name of an ONNX element type; None for UNDEFINED."""
    if elem_type == TensorProto.UNDEFINED:
        return None
    return _NAMES.get(elem_type, f"type{elem_type}")


def nbytes(dtype: str, elements: int) -> int:
    """Storage size of ``elements`` values (0 for strings, whose size is data-dependent)."""
    bits = _BITS.get(dtype)
    return 0 if bits is None else (elements * bits + 7) // 8
