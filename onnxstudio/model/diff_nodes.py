"""What differs between two matched nodes: operator, version, attributes, wiring, weights."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import onnx

from onnxstudio.concurrency.gil_runs import dismantle
from onnxstudio.model.diff_match import attribute_keys
from onnxstudio.model.diff_weights import WeightDiff, compare_weights
from onnxstudio.model.graph import Graph, Node, TensorSummary
from onnxstudio.model.weights import WeightStore

ChangeKind = Literal["op_type", "version", "attribute", "inputs", "outputs", "weight"]


@dataclass(frozen=True)
class Change:
    """One difference of a matched node pair; ``a``/``b`` are JSON-ready (None: absent)."""

    kind: ChangeKind
    name: str
    a: Any
    b: Any
    weight: WeightDiff | None = None

    def as_json(self) -> dict[str, Any]:
        if self.weight is not None:
            b = {**self.weight.b.as_json(), "max_abs_diff": self.weight.max_abs}
            return {"kind": self.kind, "name": self.name, "a": self.weight.a.as_json(), "b": b}
        return {"kind": self.kind, "name": self.name, "a": self.a, "b": self.b}


@lru_cache(maxsize=4096)
def _schema_default(domain: str, op_type: str, version: int, name: str) -> Hashable:
    """The value the schema gives an omitted attribute, or None when it has no default."""
    try:
        schema = onnx.defs.get_schema(op_type, version, domain)
    except onnx.defs.SchemaError:
        return None
    attr = schema.attributes.get(name)
    if attr is None or not attr.default_value.name:
        return None
    value = onnx.helper.get_attribute_value(attr.default_value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list):
        return tuple(v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in value)
    return value if isinstance(value, int | float | str) else None


def _json_value(value: Any) -> Any:
    if isinstance(value, TensorSummary):
        shape = "×".join(str(d) for d in value.shape) or "scalar"
        return f"{value.dtype}[{shape}] {value.preview}".strip()
    if isinstance(value, tuple):
        return [_json_value(v) for v in value]
    return value


def _attribute_changes(a: Node, b: Node) -> list[Change]:
    keys_a, keys_b = attribute_keys(a), attribute_keys(b)
    if keys_a == keys_b:
        return []
    values_a = {x.name: x.value for x in a.attributes}
    values_b = {x.name: x.value for x in b.attributes}
    changes = []
    for name in sorted(keys_a.keys() | keys_b.keys()):
        ka, kb = keys_a.get(name), keys_b.get(name)
        if ka == kb:
            continue
        if ((ka is None and kb == _default_of(a, name))
                or (kb is None and ka == _default_of(b, name))):
            continue  # one spells out the schema default, the other omits it
        changes.append(Change("attribute", name, _shown(values_a.get(name), ka),
                              _shown(values_b.get(name), kb)))
    return changes


def _shown(value: Any, key: Hashable) -> Any:
    """A body attribute shows its operator count; anything else its plain value."""
    if value is None:
        return None
    if isinstance(key, tuple) and key and isinstance(key[0], tuple):
        return f"body of {len(key)} nodes"
    return _json_value(value)


def _default_of(node: Node, name: str) -> Hashable:
    version = node.schema.since_version
    if not node.schema.known or version is None:
        return None
    return _schema_default(node.domain, node.op_type, version, name)


@dataclass
class PairContext:
    """What comparing the wiring of a pair needs: the pairing and both graphs."""

    a: Graph
    b: Graph
    a_to_b: list[int]
    inputs_a_to_b: dict[str, str]  # graph input names
    store_a: WeightStore | None
    store_b: WeightStore | None

    def __post_init__(self) -> None:
        self._made_a = _producers(self.a)
        self._made_b = _producers(self.b)
        self._weights: dict[tuple[str, str], WeightDiff] = {}
        self._added = set(range(len(self.b.nodes))) - set(self.a_to_b)

    def free(self) -> None:
        """Its maps of every value, freed in pieces: dropped at once, dag100k's went in
        one chain of deallocations holding the GIL (see ``diff_match.match_nodes``)."""
        dismantle(self._made_a, self._made_b, self._added)

    def same_source(self, va: str, vb: str) -> bool:
        """Whether input ``va`` of an A node and ``vb`` of its match come from the same
        place: paired producers (same output), weights, paired graph inputs."""
        if not va or not vb:
            return va == vb
        pa, pb = self._made_a.get(va), self._made_b.get(vb)
        if (pa is not None and self.a_to_b[pa[0]] < 0) or (pb is not None and pb[0] in self._added):
            return True  # the node removed or added in between is the change, reported once
        if pa is not None or pb is not None:
            return (pa is not None and pb is not None and pa[1] == pb[1]
                    and self.a_to_b[pa[0]] == pb[0])
        if va in self.a.initializers or vb in self.b.initializers:
            return va in self.a.initializers and vb in self.b.initializers
        if va in self.inputs_a_to_b:
            return self.inputs_a_to_b[va] == vb
        return va == vb  # outer-scope values keep their names

    def weight(self, va: str, vb: str) -> WeightDiff | None:
        info_a, info_b = self.a.initializers.get(va), self.b.initializers.get(vb)
        if info_a is None or info_b is None:
            return None
        key = (va, vb)
        if key not in self._weights:
            self._weights[key] = compare_weights(info_a, info_b, self.store_a, self.store_b)
        return self._weights[key]


def _producers(graph: Graph) -> dict[str, tuple[int, int]]:
    return {name: (i, k) for i, node in enumerate(graph.nodes)
            for k, name in enumerate(node.outputs) if name}


def node_changes(a: Node, b: Node, ctx: PairContext) -> list[Change]:
    """Every difference between node ``a`` of graph A and its match ``b`` in graph B."""
    changes: list[Change] = []
    if (a.domain, a.op_type) != (b.domain, b.op_type):
        # Another operator: its attributes mean other things, so only the swap is told.
        changes.append(Change("op_type", "op_type", _op(a), _op(b)))
    else:
        if a.schema.since_version != b.schema.since_version:
            changes.append(Change("version", a.op_type, a.schema.since_version,
                                  b.schema.since_version))
        changes.extend(_attribute_changes(a, b))
    changes.extend(_input_changes(a, b, ctx))
    changes.extend(_output_changes(a, b, ctx))
    return changes


def _op(node: Node) -> str:
    return f"{node.domain}::{node.op_type}" if node.domain else node.op_type


def _input_changes(a: Node, b: Node, ctx: PairContext) -> list[Change]:
    changes = []
    for slot in range(max(len(a.inputs), len(b.inputs))):
        va = a.inputs[slot] if slot < len(a.inputs) else ""
        vb = b.inputs[slot] if slot < len(b.inputs) else ""
        if not ctx.same_source(va, vb):
            changes.append(Change("inputs", f"input {slot}", va or None, vb or None))
            continue
        weight = ctx.weight(va, vb)
        if weight is not None and not weight.equal:
            changes.append(Change("weight", va, weight.summary(), None, weight))
    return changes


def _output_changes(a: Node, b: Node, ctx: PairContext) -> list[Change]:
    changes = []
    outs_a, outs_b = set(ctx.a.outputs), set(ctx.b.outputs)
    for k in range(max(len(a.outputs), len(b.outputs))):
        va = a.outputs[k] if k < len(a.outputs) else ""
        vb = b.outputs[k] if k < len(b.outputs) else ""
        if bool(va) != bool(vb) or (va in outs_a) != (vb in outs_b):
            changes.append(Change("outputs", f"output {k}", va or None, vb or None))
            continue
        if not va:
            continue
        ta, tb = ctx.a.values[va].type, ctx.b.values[vb].type
        if ta.dtype and tb.dtype and ta.shape is not None and tb.shape is not None and ta != tb:
            changes.append(Change("outputs", f"output {k}", ta.describe(), tb.describe()))
    return changes
