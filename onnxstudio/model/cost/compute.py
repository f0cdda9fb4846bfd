"""What each node of a model costs: MACs, element operations, parameters, weight bytes,
output bytes, and the activation memory alive when it runs; totals with the peak.

Costs cover the main graph; nodes holding bodies (If, Loop, Scan) and calls to local
functions count as zero, which the assumptions say. Each weight is credited to the first
node that reads it, so node figures add up to the model's."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from onnxstudio.model.cost.ops import Shape, elements, node_work
from onnxstudio.model.cost.shapes import Sizes
from onnxstudio.model.dtypes import nbytes
from onnxstudio.model.graph import Graph, Model, Node, TensorSummary, TensorType

MICROSOFT = "com.microsoft"


@dataclass(frozen=True, slots=True)
class NodeCost:
    id: str
    name: str
    op_type: str
    macs: int
    element_ops: int
    params: int
    weight_bytes: int
    output_bytes: int
    memory_bytes: int  # activations alive while this node runs (its inputs and outputs too)


@dataclass(frozen=True)
class ScopeCost:
    name: str
    depth: int
    macs: int
    params: int
    output_bytes: int
    nodes: int


@dataclass
class ModelCost:
    nodes: list[NodeCost]
    macs: int
    element_ops: int
    params: int
    weight_bytes: int
    activation_bytes: int
    peak_activation_bytes: int
    peak_node: str | None  # id of the node at which the peak is reached
    assumptions: list[str]
    scopes: list[ScopeCost] = field(default_factory=list)
    _ranked: list[NodeCost] | None = field(default=None, repr=False, compare=False)

    def ranked(self) -> list[NodeCost]:
        """The nodes, most MACs first, then most element operations (the Cost dock's
        and the CLI's order), sorted once: the window asks for it on the worker that
        counted (dag100k: 0.3 s that froze the window when the dock sorted it)."""
        if self._ranked is None:
            self._ranked = sorted(self.nodes, key=lambda n: (-n.macs, -n.element_ops))
        return self._ranked

    def as_json(self) -> dict[str, Any]:
        """The issue's schema, exactly (element operations are in the CSV and the text)."""
        return {
            "total": {"macs": self.macs, "params": self.params,
                      "weight_bytes": self.weight_bytes,
                      "activation_bytes": self.activation_bytes,
                      "peak_activation_bytes": self.peak_activation_bytes},
            "nodes": [{"id": n.id, "name": n.name, "op_type": n.op_type, "macs": n.macs,
                       "params": n.params, "output_bytes": n.output_bytes}
                      for n in self.nodes],
            "scopes": [{"name": s.name, "depth": s.depth, "macs": s.macs, "params": s.params,
                        "output_bytes": s.output_bytes} for s in self.scopes],
            "assumptions": list(self.assumptions),
        }

    def to_csv(self) -> str:
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["id", "name", "op_type", "macs", "element_ops", "params", "weight_bytes",
                    "output_bytes", "memory_bytes"])
        for n in self.nodes:
            w.writerow([n.id, n.name, n.op_type, n.macs, n.element_ops, n.params,
                        n.weight_bytes, n.output_bytes, n.memory_bytes])
        return out.getvalue()


class _Shapes:
    """Concrete shapes and byte sizes of values, resolved once each."""

    def __init__(self, graph: Graph, sizes: Sizes) -> None:
        self.graph, self.sizes = graph, sizes
        self._cache: dict[str, tuple[Shape | None, str | None]] = {}

    def _type(self, name: str) -> TensorType | None:
        found = self.sizes.types.get(name)
        if found is not None:
            return found
        value = self.graph.values.get(name)
        return value.type if value is not None else None

    def _resolved(self, name: str) -> tuple[Shape | None, str | None]:
        hit = self._cache.get(name)
        if hit is None:
            t = self._type(name)
            shape = None
            if t is not None and t.shape is not None and t.kind == "tensor":
                shape = tuple(max(0, self.sizes.resolve(d, name)) for d in t.shape)
            elif name:
                self.sizes.unknown.add(name)
            hit = self._cache[name] = (shape, t.dtype if t is not None else None)
        return hit

    def shape(self, name: str) -> Shape | None:
        return self._resolved(name)[0] if name else None

    def nbytes(self, name: str) -> int:
        shape, dtype = self._resolved(name)
        return nbytes(dtype or "float32", elements(shape)) if shape is not None else 0


def _constant_weights(graph: Graph) -> dict[str, tuple[int, int]]:
    """Outputs of Constant nodes with a tensor value: name -> (elements, bytes)."""
    out: dict[str, tuple[int, int]] = {}
    for node in graph.nodes:
        if node.op_type != "Constant" or not node.outputs:
            continue
        value = node.attribute("value")
        if value is not None and isinstance(value.value, TensorSummary):
            count = elements(value.value.shape)
            out[node.outputs[0]] = (count, nbytes(value.value.dtype, count))
    return out


def _weights(node: Node, graph: Graph, constants: Mapping[str, tuple[int, int]],
             seen: set[str]) -> tuple[int, int]:
    """(parameters, bytes) of the weights ``node`` reads first. MatMulNBits' packed B
    counts as the K x N weights it stands for (its bytes as stored)."""
    params = size = 0
    for i, name in enumerate(node.inputs):
        if not name or name in seen:
            continue
        init = graph.initializers.get(name)
        if init is not None:
            count, stored = init.elements, init.nbytes
        elif name in constants:
            count, stored = constants[name]
        else:
            continue
        seen.add(name)
        if node.op_type == "MatMulNBits" and i in (2, 3) and node.domain == MICROSOFT:
            count = 0  # scales and zero points: bytes, not weights of their own
        elif node.op_type == "MatMulNBits" and i == 1 and node.domain == MICROSOFT:
            k, n = node.attribute("K"), node.attribute("N")
            if k is not None and n is not None:
                count = int(k.value) * int(n.value)
        params += count
        size += stored
    return params, size


def model_cost(model: Model, sizes: Sizes) -> ModelCost:
    """Costs of ``model``'s main-graph nodes with the concrete ``sizes``."""
    graph = model.graph
    shapes = _Shapes(graph, sizes)
    constants = _constant_weights(graph)
    not_activation = set(graph.initializers) | set(constants)
    last_use: dict[str, int] = {}
    for i, node in enumerate(graph.nodes):
        for name in node.inputs:
            if name and name not in not_activation:
                last_use[name] = i
    kept = set(graph.outputs)
    alive: dict[str, int] = {name: shapes.nbytes(name) for name in graph.inputs
                             if name not in not_activation}
    memory = sum(alive.values())
    peak, peak_node = memory, None
    seen: set[str] = set()
    rows: list[NodeCost] = []
    skipped = 0
    for i, node in enumerate(graph.nodes):
        macs, element_ops = node_work(node, shapes.shape)
        if node.subgraphs or node.function is not None:
            skipped += 1
        params, weight_bytes = _weights(node, graph, constants, seen)
        produced = 0
        if node.op_type != "Constant":
            for name in node.outputs:
                if name and name not in alive:
                    alive[name] = shapes.nbytes(name)
                    produced += alive[name]
        memory += produced
        if memory > peak:
            peak, peak_node = memory, node.id
        rows.append(NodeCost(node.id, node.name, node.op_type, macs, element_ops, params,
                             weight_bytes, produced, memory))
        for name in [*node.inputs, *node.outputs]:  # freed once their last reader ran
            if name in alive and name not in kept and last_use.get(name, -1) <= i:
                memory -= alive.pop(name)
    assumptions = sizes.assumptions()
    if skipped:
        assumptions.append(f"{skipped} node(s) with bodies or local functions count as 0")
    assumptions += [
        "MACs: Conv/ConvTranspose/Gemm/MatMul/attention multiply-accumulates, plus one "
        "add per output element where a bias is given (as onnx-tool counts)",
        "element operations: one per output element of other operators (per input "
        "element for reductions and pooling); none for reshapes, copies, shape queries",
        "weights are initializers and Constant tensors, each credited to its first "
        "reader; MatMulNBits' packed blocks count as its K x N weights",
        "peak activation memory: tensors alive at once running the nodes in the file's "
        "order (graph inputs and outputs counted, weights not)",
    ]
    return ModelCost(
        rows, sum(r.macs for r in rows), sum(r.element_ops for r in rows),
        sum(r.params for r in rows), sum(r.weight_bytes for r in rows),
        sum(r.output_bytes for r in rows), peak, peak_node, assumptions)
