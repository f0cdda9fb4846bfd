"""Qt-free model core: open a file, describe its graph, resolve operator schemas."""

from typing import TYPE_CHECKING, Any

from onnxstudio.model.graph import (
    Attribute,
    Function,
    Graph,
    InitializerInfo,
    Model,
    Node,
    SchemaInfo,
    TensorSummary,
    TensorType,
    Value,
)

__all__ = [
    "Attribute",
    "Function",
    "Graph",
    "InitializerInfo",
    "Model",
    "Node",
    "SchemaInfo",
    "TensorSummary",
    "TensorType",
    "Value",
    "load_model",
]

if TYPE_CHECKING:
    from onnxstudio.model.open import load_model


def __getattr__(name: str) -> Any:
    """``load_model`` imports onnx (half a second): only when it is first asked for."""
    if name == "load_model":
        from onnxstudio.model.open import load_model

        return load_model
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
