"""Plain, Qt-free description of an ONNX model that every other layer reads.

Built once from a ``ModelProto`` by :mod:`onnxstudio.model.reader`; nothing here
refers back to protobuf objects, so layout, rendering and export can run on it in a
worker thread without touching onnx.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypeVar

from onnxstudio.concurrency.gil_runs import filter_in_runs
from onnxstudio.model.formatting import shape_text

T = TypeVar("T")

Dim = int | str | None
"""One dimension: a fixed size, a symbolic name (``"batch"``), or unknown."""

_SUBGRAPHS = attrgetter("subgraphs")
# What nodes without bodies or metadata share, read-only (two empty dicts a node were
# 13 MB of dag100k's model).
NO_BODIES: Mapping[str, Graph] = MappingProxyType({})
NO_METADATA: Mapping[str, str] = MappingProxyType({})

ValueKind = Literal["input", "output", "initializer", "intermediate", "captured"]


@dataclass(frozen=True)
class TensorType:
    """What is known of a value's type. ``shape is None`` means the rank is unknown."""

    dtype: str | None = None  # numpy-style name: float32, int64, string, bfloat16...
    shape: tuple[Dim, ...] | None = None
    kind: str = "tensor"  # tensor, sequence, map, optional, sparse_tensor

    def shape_text(self) -> str:
        return shape_text(self.shape)

    def describe(self) -> str:
        base = f"{self.dtype or '?'}[{self.shape_text()}]"
        return base if self.kind == "tensor" else f"{self.kind}<{base}>"


@dataclass(slots=True)
class Value:
    """A named tensor edge: produced by at most one node, consumed by any number."""

    name: str
    type: TensorType = field(default_factory=TensorType)
    kind: ValueKind = "intermediate"
    producer: int | None = None  # index into Graph.nodes
    consumers: tuple[int, ...] = ()  # a tuple of ints: untracked by the collector


@dataclass(frozen=True)
class InitializerInfo:
    """A weight, summarised without reading its bytes (they may live in external data)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    elements: int
    nbytes: int
    external_location: str | None = None  # path relative to the model's folder


@dataclass(frozen=True)
class TensorSummary:
    """A tensor-valued attribute (e.g. Constant's ``value``), with a short preview."""

    dtype: str
    shape: tuple[int, ...]
    preview: str


@dataclass(frozen=True)
class Attribute:
    """One node attribute. ``value`` is a Python scalar/list, TensorSummary, or a subgraph key."""

    name: str
    type: str  # INT, FLOAT, STRING, INTS, FLOATS, STRINGS, TENSOR, GRAPH, GRAPHS, ...
    value: Any


@dataclass(frozen=True)
class SchemaInfo:
    """The operator schema in force for a node under the model's opset imports."""

    known: bool  # False: no schema in onnx for (domain, op_type) at any version
    since_version: int | None = None  # version of the schema in force
    latest_version: int | None = None  # newest version onnx knows
    deprecated: bool = False
    doc: str = ""
    custom_domain: bool = False  # a domain onnx does not define (com.microsoft, ...)


@dataclass(slots=True)
class Node:
    """One operator call. ``id`` is unique across the whole model, nested bodies included."""

    id: str  # "n12" in the main graph, "n12/then_branch/n3" inside a body
    index: int
    name: str
    op_type: str
    domain: str  # "" for the default domain
    inputs: tuple[str, ...]  # "" marks an omitted optional input
    outputs: tuple[str, ...]
    attributes: tuple[Attribute, ...] = ()
    subgraphs: Mapping[str, Graph] = field(default_factory=lambda: NO_BODIES)  # attr -> body
    function: tuple[str, str] | None = None  # (domain, name) of a local function it calls
    metadata: Mapping[str, str] = field(default_factory=lambda: NO_METADATA)
    doc_string: str = ""
    schema: SchemaInfo = field(default_factory=lambda: SchemaInfo(known=False))

    @property
    def label(self) -> str:
        return self.name or f"{self.op_type} #{self.index}"

    def attribute(self, name: str) -> Attribute | None:
        return next((a for a in self.attributes if a.name == name), None)


@dataclass(slots=True, weakref_slot=True)  # layout/per_graph.py holds graphs weakly
class Graph:
    """A graph body: the main graph, an If/Loop/Scan body, or a local function body."""

    name: str
    id_prefix: str  # "" for the main graph; "n12/body/" for a nested one
    nodes: list[Node] = field(default_factory=list)
    values: dict[str, Value] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)  # real inputs: initializers excluded
    outputs: list[str] = field(default_factory=list)
    initializers: dict[str, InitializerInfo] = field(default_factory=dict)
    captured: list[str] = field(default_factory=list)  # outer-scope values a body reads
    doc_string: str = ""

    def nesting(self) -> list[Node]:
        """The nodes that hold bodies (If, Loop, Scan): few or none, found in C (a Python
        loop over 100k nodes, twice per summary, cost 0.1 s of a model's open), in runs
        (one filter over dag100k held a worker's GIL 17-67 ms while its panels were
        prepared, after an open or an edit)."""
        return filter_in_runs(_SUBGRAPHS, self.nodes)

    def node_count_total(self) -> int:
        """Nodes here plus in every nested body, recursively."""
        return len(self.nodes) + sum(
            body.node_count_total() for node in self.nesting() for body in node.subgraphs.values()
        )

    def walk(self) -> list[Node]:
        """Every node here and in nested bodies, depth first."""
        if not self.nesting():
            return list(self.nodes)
        out: list[Node] = []
        for node in self.nodes:
            out.append(node)
            for body in node.subgraphs.values():
                out.extend(body.walk())
        return out


@dataclass(slots=True)
class Function:
    """A model-local function (FunctionProto); calls to it link here via Node.function."""

    domain: str
    name: str
    inputs: list[str]
    outputs: list[str]
    attribute_names: list[str]
    opset_imports: dict[str, int]
    body: Graph
    doc_string: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.domain, self.name)


@dataclass
class Model:
    """Everything the app shows about one opened file."""

    path: Path
    file_size: int
    ir_version: int
    producer_name: str
    producer_version: str
    domain: str
    model_version: int
    doc_string: str
    opset_imports: dict[str, int]  # "" is the default domain
    metadata: dict[str, str]
    graph: Graph
    functions: list[Function]
    external_data: bool
    parameters: int
    weight_bytes: int
    warnings: list[str] = field(default_factory=list)
    # Views derived from the model (summary, index, ...), computed once, ideally off the
    # GUI thread: on a 100k-node graph each takes tens of milliseconds.
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """``compute()`` once per model; later calls return the stored result."""
        if key not in self.derived:
            self.derived[key] = compute()
        return self.derived[key]

    def forget_typed_views(self) -> None:
        """Drop derived views that read value types (keys starting ``types:``): inferred
        shapes arrive after the model is shown and make them stale."""
        for key in [k for k in self.derived if k.startswith("types:")]:
            self.derived.pop(key, None)

    def function(self, key: tuple[str, str]) -> Function | None:
        return next((f for f in self.functions if f.key == key), None)

