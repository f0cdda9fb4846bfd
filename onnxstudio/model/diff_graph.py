"""Graph-level differences: inputs and outputs (paired by wiring first), opsets, metadata."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from onnxstudio.model.graph import Graph, Model


@dataclass(frozen=True)
class GraphEntry:
    """One input, output, opset or metadata key; ``a``/``b`` None where absent."""

    status: str  # matched | changed | added | removed
    key: str  # the name on A (or B when added), the domain, the metadata key
    a: Any
    b: Any

    def as_json(self, key_name: str) -> dict[str, Any]:
        return {"status": self.status, key_name: self.key, "a": self.a, "b": self.b}


def _status(a: Any, b: Any) -> str:
    if a is None:
        return "added"
    if b is None:
        return "removed"
    return "matched" if a == b else "changed"


def _io(graph: Graph, name: str) -> dict[str, Any]:
    t = graph.values[name].type
    shape = None if t.shape is None else list(t.shape)
    return {"name": name, "dtype": t.dtype, "shape": shape}


def pair_inputs(a: Graph, b: Graph, a_to_b: list[int]) -> dict[str, str]:
    """Graph inputs of A to B: through a matched reader and slot, then by name, then
    by position among those left."""
    b_inputs = set(b.inputs)
    pairs: dict[str, str] = {}
    for name in a.inputs:
        for reader in a.values[name].consumers:
            j = a_to_b[reader]
            if j < 0:
                continue
            slot = a.nodes[reader].inputs.index(name)
            b_ins = b.nodes[j].inputs
            candidate = b_ins[slot] if slot < len(b_ins) else ""
            if candidate in b_inputs and candidate not in pairs.values():
                pairs[name] = candidate
                break
    return _complete(a.inputs, b.inputs, pairs)


def pair_outputs(a: Graph, b: Graph, a_to_b: list[int]) -> dict[str, str]:
    """Graph outputs of A to B: through the matched producer and output index first."""
    b_outputs = set(b.outputs)
    pairs: dict[str, str] = {}
    for name in a.outputs:
        producer = a.values[name].producer
        if producer is None or a_to_b[producer] < 0:
            continue
        k = a.nodes[producer].outputs.index(name)
        b_outs = b.nodes[a_to_b[producer]].outputs
        candidate = b_outs[k] if k < len(b_outs) else ""
        if candidate in b_outputs and candidate not in pairs.values():
            pairs[name] = candidate
    return _complete(a.outputs, b.outputs, pairs)


def _complete(names_a: list[str], names_b: list[str], pairs: dict[str, str]) -> dict[str, str]:
    taken = set(pairs.values())
    for name in names_a:
        if name not in pairs and name in names_b and name not in taken:
            pairs[name] = name
            taken.add(name)
    left_b = [n for n in names_b if n not in taken]
    for name in names_a:
        if name not in pairs and left_b:
            pairs[name] = left_b.pop(0)
    return pairs


def io_entries(a: Graph, b: Graph, names_a: list[str], names_b: list[str],
               pairs: dict[str, str]) -> list[GraphEntry]:
    entries = []
    for name in names_a:
        other = pairs.get(name)
        side_b = _io(b, other) if other is not None else None
        entries.append(GraphEntry(_status(_io(a, name), side_b), name, _io(a, name), side_b))
    paired = set(pairs.values())
    entries.extend(GraphEntry("added", n, None, _io(b, n)) for n in names_b if n not in paired)
    return entries


def _keyed(a: dict[str, Any], b: dict[str, Any]) -> list[GraphEntry]:
    keys = list(a) + [k for k in b if k not in a]
    return [GraphEntry(_status(a.get(k), b.get(k)), k, a.get(k), b.get(k)) for k in keys]


def opset_entries(a: Model, b: Model) -> list[GraphEntry]:
    names = {domain: domain or "ai.onnx" for domain in (*a.opset_imports, *b.opset_imports)}
    return _keyed({names[d]: v for d, v in a.opset_imports.items()},
                  {names[d]: v for d, v in b.opset_imports.items()})


def _model_fields(model: Model) -> dict[str, Any]:
    fields: dict[str, Any] = {"ir_version": model.ir_version}
    producer = f"{model.producer_name} {model.producer_version}".strip()
    if producer:
        fields["producer"] = producer
    if model.domain:
        fields["domain"] = model.domain
    if model.model_version:
        fields["model_version"] = model.model_version
    if model.doc_string:
        fields["doc_string"] = model.doc_string
    return fields


def metadata_entries(a: Model, b: Model) -> list[GraphEntry]:
    """The model's own fields (IR version, producer...) then its metadata properties."""
    return _keyed(_model_fields(a), _model_fields(b)) + _keyed(a.metadata, b.metadata)
