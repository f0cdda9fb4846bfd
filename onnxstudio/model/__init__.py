"""Qt-free model core: open a file, describe its graph, resolve operator schemas."""

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
from onnxstudio.model.open import load_model

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
