"""What changed between two models: paired nodes with their changes, and graph-level
differences (inputs, outputs, opsets, metadata). Qt-free; the CLI and the window share it.

Nodes are paired by structure (:mod:`diff_match`), so a copy with every node and tensor
renamed matches completely; names only break ties. A node is ``matched`` (paired, no
difference), ``changed`` (paired, see its changes), ``removed`` (only in A) or ``added``
(only in B). Renaming a node is not a change; renaming a graph input or output is.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from onnxstudio.concurrency.gil_runs import dismantle
from onnxstudio.model.diff_graph import (
    GraphEntry,
    io_entries,
    metadata_entries,
    opset_entries,
    pair_inputs,
    pair_outputs,
)
from onnxstudio.model.diff_match import match_nodes
from onnxstudio.model.diff_nodes import Change, PairContext, node_changes
from onnxstudio.model.graph import Model, Node
from onnxstudio.model.weights import WeightStore

STATUSES = ("matched", "changed", "added", "removed")
Progress = Callable[[str, float], None]


@dataclass
class NodeDiff:
    """One node of A, of B, or a pair of them."""

    status: str  # one of STATUSES
    a: Node | None
    b: Node | None
    changes: list[Change] = field(default_factory=list)

    @property
    def op_type(self) -> str:
        node = self.a or self.b
        assert node is not None
        return node.op_type

    @property
    def title(self) -> str:
        """How a list names the entry: A's name, with B's when it was renamed."""
        a, b = self.a, self.b
        if a is not None and b is not None and a.label != b.label:
            return f"{a.label} → {b.label}"
        node = a or b
        assert node is not None
        return node.label

    def as_json(self) -> dict[str, Any]:
        return {"status": self.status,
                "a": self.a.label if self.a is not None else None,
                "b": self.b.label if self.b is not None else None,
                "op_type": self.op_type,
                "changes": [c.as_json() for c in self.changes]}


@dataclass
class ModelDiff:
    """The whole comparison of model A with model B."""

    a: Model
    b: Model
    nodes: list[NodeDiff]
    inputs: list[GraphEntry]
    outputs: list[GraphEntry]
    opsets: list[GraphEntry]
    metadata: list[GraphEntry]
    seconds: float = 0.0
    by_a: dict[str, NodeDiff] = field(default_factory=dict, repr=False)  # A node id ->
    by_b: dict[str, NodeDiff] = field(default_factory=dict, repr=False)  # B node id ->

    def __post_init__(self) -> None:
        for entry in self.nodes:
            if entry.a is not None:
                self.by_a[entry.a.id] = entry
            if entry.b is not None:
                self.by_b[entry.b.id] = entry

    def summary(self) -> dict[str, int]:
        counts = dict.fromkeys(STATUSES, 0)
        for entry in self.nodes:
            counts[entry.status] += 1
        return counts

    def patterns(self, status: str) -> list[tuple[str, list[NodeDiff]]]:
        """The entries of ``status`` grouped by what changed, names and sizes aside
        ("MatMul → MatMulNBits; weight float32 → uint8"), the largest group first: a
        quantised model's 121 identical rewrites read as one line with a count."""
        groups: dict[str, list[NodeDiff]] = {}
        for entry in self.nodes:
            if entry.status == status:
                groups.setdefault(_pattern(entry), []).append(entry)
        return sorted(groups.items(), key=lambda item: -len(item[1]))

    def graph_entries(self) -> dict[str, list[GraphEntry]]:
        return {"inputs": self.inputs, "outputs": self.outputs, "opsets": self.opsets,
                "metadata": self.metadata}

    @property
    def identical(self) -> bool:
        return (all(e.status == "matched" for e in self.nodes)
                and all(e.status == "matched"
                        for entries in self.graph_entries().values() for e in entries))

    def match_ratio(self) -> float:
        """Share of A's and B's nodes that found a counterpart (1.0 for a renamed copy)."""
        total = len(self.a.graph.nodes) + len(self.b.graph.nodes)
        paired = sum(2 for e in self.nodes if e.a is not None and e.b is not None)
        return paired / total if total else 1.0

    def value_map(self) -> dict[str, str]:
        """A's tensor names to B's, for the outputs of every paired node and graph I/O."""
        names: dict[str, str] = {}
        for entry in self.nodes:
            if entry.a is not None and entry.b is not None:
                for va, vb in zip(entry.a.outputs, entry.b.outputs, strict=False):
                    if va and vb:
                        names[va] = vb
        for e in (*self.inputs, *self.outputs):
            if e.a is not None and e.b is not None:
                names[e.a["name"]] = e.b["name"]
        return names

    def absorbed_by(self, entry: NodeDiff, hops: int = 8) -> Node | None:
        """For a removed node, the B node whose output now takes the place of its result
        (a fusion: BatchNormalization folded into the Conv before it). Found through the
        first paired reader, following removed readers for up to ``hops`` steps."""
        if entry.status != "removed" or entry.a is None:
            return None
        ga = self.a.graph
        frontier = [entry.a]
        for _ in range(hops):
            nxt: list[Node] = []
            for node in frontier:
                for out in node.outputs:
                    value = ga.values.get(out) if out else None
                    for reader in value.consumers if value is not None else ():
                        found = self._source_in_b(ga.nodes[reader], out, nxt)
                        if found is not None:
                            return found
            frontier = nxt
        return None

    def _source_in_b(self, reader: Node, value: str, removed: list[Node]) -> Node | None:
        paired = self.by_a.get(reader.id)
        if paired is None or paired.b is None:
            if paired is not None and paired.status == "removed":
                removed.append(reader)
            return None
        slot = reader.inputs.index(value)
        if slot >= len(paired.b.inputs):
            return None
        source = self.b.graph.values.get(paired.b.inputs[slot])
        if source is None or source.producer is None:
            return None
        return self.b.graph.nodes[source.producer]

    def as_json(self) -> dict[str, Any]:
        keys = {"inputs": "name", "outputs": "name", "opsets": "domain", "metadata": "key"}
        return {
            "summary": self.summary(),
            "nodes": [e.as_json() for e in self.nodes],
            "graph": {section: [e.as_json(keys[section]) for e in entries]
                      for section, entries in self.graph_entries().items()},
            "patterns": [{"status": status, "text": text, "count": len(group)}
                         for status in ("changed", "removed", "added")
                         for text, group in self.patterns(status)],
        }


def _change_pattern(change: Change) -> str:
    if change.kind == "op_type":
        return ""  # the entry's title says it
    if change.weight is not None:
        a, b = change.weight.a, change.weight.b
        if a.dtype != b.dtype:
            return f"weight {a.dtype} → {b.dtype}"
        return "weight shape" if a.shape != b.shape else "weight values"
    return str(change.kind)


def _pattern(entry: NodeDiff) -> str:
    a, b = entry.a, entry.b
    if a is not None and b is not None and (a.domain, a.op_type) != (b.domain, b.op_type):
        title = f"{a.op_type} → {b.op_type}"
    else:
        title = entry.op_type
    details = sorted({p for p in map(_change_pattern, entry.changes) if p})
    return f"{title} ({'; '.join(details)})" if details else title


def diff_models(a: Model, b: Model, *, weights: bool = True,
                progress: Progress | None = None) -> ModelDiff:
    """Compare the main graphs of ``a`` and ``b``; with ``weights``, read each pair of
    paired weights (one pair at a time) to compare their values, not just their shapes."""
    report = progress or (lambda _stage, _fraction: None)
    start = time.perf_counter()
    report("Matching nodes", 0.0)
    ga, gb = a.graph, b.graph
    a_to_b = match_nodes(ga, gb)
    inputs = pair_inputs(ga, gb, a_to_b)
    outputs = pair_outputs(ga, gb, a_to_b)
    stores = (WeightStore(a.path), WeightStore(b.path)) if weights else (None, None)
    ctx = PairContext(ga, gb, a_to_b, inputs, *stores)
    report("Comparing nodes", 0.3)
    entries: list[NodeDiff] = []
    step = max(1, len(ga.nodes) // 50)
    for i, node in enumerate(ga.nodes):
        j = a_to_b[i]
        if j < 0:
            entries.append(NodeDiff("removed", node, None))
            continue
        changes = node_changes(node, gb.nodes[j], ctx)
        entries.append(NodeDiff("changed" if changes else "matched", node, gb.nodes[j], changes))
        if i % step == 0:
            report("Comparing nodes", 0.3 + 0.7 * i / len(ga.nodes))
    paired_b = set(a_to_b)
    entries.extend(NodeDiff("added", None, node)
                   for j, node in enumerate(gb.nodes) if j not in paired_b)
    ctx.free()
    dismantle(paired_b)
    report("Done", 1.0)
    return ModelDiff(
        a, b, entries,
        inputs=io_entries(ga, gb, ga.inputs, gb.inputs, inputs),
        outputs=io_entries(ga, gb, ga.outputs, gb.outputs, outputs),
        opsets=opset_entries(a, b), metadata=metadata_entries(a, b),
        seconds=time.perf_counter() - start)
