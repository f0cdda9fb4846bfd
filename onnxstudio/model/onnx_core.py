"""onnx's protobuf messages and C++ core (schemas, shape inference) without ``import onnx``.

The onnx package's ``__init__`` imports its whole Python API (helper, numpy_helper,
compose, protobuf's JSON and text formats, ml_dtypes, and importlib.metadata for its
own version): 75 ms of a CLI export's start, before the model's first byte is read,
for nothing that reading, building, inferring or laying out uses. This module loads
just the two pieces they use, onnx's generated protobuf module and its C++ extension,
each under its own module name, so a later ``import onnx`` finds them loaded and shares
their classes (``onnx.ModelProto is ModelProto``). Where onnx is imported already, or
its files are not laid out as expected, this is plain ``import onnx``.

Those pieces are onnx internals (the generated pb2 module, the C++ extension's
positional ``infer_shapes``), so each has the public API as its fallback, which a test
forces: another onnx release changing them costs speed, never shapes.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any


def _submodule(folder: str, name: str) -> ModuleType:
    """``onnx.<name>`` from onnx's folder, loaded (and registered) without its package."""
    full = f"onnx.{name}"
    loaded = sys.modules.get(full)
    if loaded is not None:
        return loaded
    spec = importlib.machinery.PathFinder.find_spec(full, [folder])
    if spec is None or spec.loader is None:
        raise ImportError(f"{full} is not in {folder}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[full] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[full]
        raise
    return module


def _load() -> tuple[Any, Any, Any]:
    """(onnx's C++ extension or None, its protobuf module, its schema functions)."""
    if "onnx" not in sys.modules:
        try:
            spec = importlib.util.find_spec("onnx")  # finds the package, runs none of it
            folders = list(spec.submodule_search_locations or []) if spec else []
            if folders:
                core = _submodule(folders[0], "onnx_cpp2py_export")
                protos = _submodule(folders[0], "onnx_ml_pb2" if core.ONNX_ML else "onnx_pb2")
                if hasattr(core.defs, "get_schema") and hasattr(core.defs, "SchemaError") \
                        and hasattr(protos, "ModelProto"):
                    return core, protos, core.defs
        except Exception:  # another layout of onnx's files: the package as usual
            pass
    import onnx
    import onnx.defs

    return getattr(onnx, "onnx_cpp2py_export", None), onnx, onnx.defs


_core, _protos, defs = _load()

AttributeProto: Any = _protos.AttributeProto
ModelProto: Any = _protos.ModelProto
TensorProto: Any = _protos.TensorProto

# defs: what onnx.defs' get_schema and SchemaError are
SchemaError: Any = defs.SchemaError


def _private_infer_shapes() -> Any:
    """The C++ ``infer_shapes(bytes, check_type, strict_mode, data_prop)``, when there."""
    return getattr(getattr(_core, "shape_inference", None), "infer_shapes", None)


def infer_shapes(model: Any, check_type: bool = False, strict_mode: bool = False,
                 data_prop: bool = False) -> Any:
    """``onnx.shape_inference.infer_shapes`` of a ModelProto: the same C++ call, made
    directly; where onnx's extension no longer has it with that signature, the public
    function (which imports all of onnx). ``data_prop``: also follow Shape -> Gather ->
    Concat -> Reshape chains (the cost table needs concrete sizes where plain inference
    leaves ``unk__`` names)."""
    private = _private_infer_shapes()
    if private is not None:
        try:
            inferred = private(model.SerializeToString(), check_type, strict_mode, data_prop)
        except TypeError:  # pybind11's "incompatible function arguments": the API below
            pass
        else:
            return ModelProto.FromString(inferred)
    import onnx.shape_inference

    return onnx.shape_inference.infer_shapes(model, check_type=check_type,
                                             strict_mode=strict_mode, data_prop=data_prop)
