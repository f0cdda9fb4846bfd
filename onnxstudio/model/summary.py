"""A JSON-ready summary of a Model: what `onnxstudio info` prints and the model panel shows."""

from __future__ import annotations

from collections import Counter
from operator import attrgetter
from typing import Any

from onnxstudio.concurrency.gil_runs import RUN
from onnxstudio.model.graph import Graph, Model, TensorType
from onnxstudio.model.schemas import display_domain

_KEY = attrgetter("domain", "op_type")


def shape_json(vtype: TensorType) -> list[int | str | None] | None:
    return None if vtype.shape is None else list(vtype.shape)


def io_json(graph: Graph, names: list[str]) -> list[dict[str, Any]]:
    out = []
    for name in names:
        vtype = graph.values[name].type
        out.append({"name": name, "dtype": vtype.dtype, "shape": shape_json(vtype)})
    return out


def count_subgraphs(graph: Graph) -> int:
    return sum(1 + count_subgraphs(body) for n in graph.nesting() for body in n.subgraphs.values())


def operator_counts(model: Model) -> list[dict[str, Any]]:
    """One entry per (domain, op_type) in the main graph and nested bodies, most used first.

    Counted in C over raw (domain, op_type) keys, then merged per display domain: a
    Python loop per node cost 0.15 s on 100k nodes. In runs (see gil_runs): three C
    calls over 100k held the GIL 25-30 ms each while dag100k's panels were prepared."""
    nodes = model.graph.walk()
    first: dict[tuple[str, str], int] = {}  # each raw key's first node
    raw: Counter[tuple[str, str]] = Counter()
    for start in range(0, len(nodes), RUN):
        # each run's keys are freed with the run: all 100k kept to the end were freed in
        # one chain of deallocations, 14-20 ms of a worker's GIL on dag100k
        run = list(map(_KEY, nodes[start:start + RUN]))
        raw.update(run)
        if len(raw) > len(first):
            for key in raw.keys() - first.keys():
                first[key] = start + run.index(key)
        del run  # before the next run is made
    counts: Counter[tuple[str, str]] = Counter()
    since: dict[tuple[str, str], int | None] = {}
    for (domain, op), count in raw.items():  # in order of first appearance
        key = (display_domain(domain), op)
        counts[key] += count
        if key not in since:  # the earliest node of that type tells its version
            since[key] = nodes[first[(domain, op)]].schema.since_version
    return [
        {"domain": d, "op_type": op, "count": count, "since_version": since[(d, op)]}
        for (d, op), count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def model_summary(model: Model) -> dict[str, Any]:
    """A fresh dict (callers may add to it) over a summary computed once per model."""
    return dict(model.memo("summary", lambda: _summary(model)))


def _summary(model: Model) -> dict[str, Any]:
    graph = model.graph
    return {
        "path": str(model.path),
        "file_size": model.file_size,
        "ir_version": model.ir_version,
        "producer": " ".join(p for p in (model.producer_name, model.producer_version) if p),
        "producer_name": model.producer_name,
        "producer_version": model.producer_version,
        "domain": model.domain,
        "model_version": model.model_version,
        "doc_string": model.doc_string,
        "opset_imports": {display_domain(d): v for d, v in sorted(model.opset_imports.items())},
        "metadata": dict(model.metadata),
        "inputs": io_json(graph, graph.inputs),
        "outputs": io_json(graph, graph.outputs),
        "node_count": len(graph.nodes),
        "node_count_total": graph.node_count_total(),
        "operators": operator_counts(model),
        "subgraphs": count_subgraphs(graph),
        "functions": len(model.functions),
        "function_names": [f"{f.domain}::{f.name}".lstrip(":") for f in model.functions],
        "initializers": len(graph.initializers),
        "parameters": model.parameters,
        "weight_bytes": model.weight_bytes,
        "external_data": model.external_data,
        "warnings": list(model.warnings),
    }
