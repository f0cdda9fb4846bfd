"""Find nodes (by name or op type), tensors and initializers matching a query.

Each hit names the box the canvas should centre: the node itself; for a tensor its
producer, else its first consumer; for a main-graph input "in:<name>", for an output
"out:<name>". Results are capped so typing one letter in a 100k-node model stays quick.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from onnxstudio.model.graph import Model
from onnxstudio.model.index import ModelIndex

HitKind = Literal["node", "tensor", "initializer", "input", "output"]
MAX_RESULTS = 2000


class SearchSyntaxError(ValueError):
    """The query is not a valid regular expression; the message says why."""


@dataclass(frozen=True)
class SearchQuery:
    text: str
    regex: bool = False
    case_sensitive: bool = False

    def matcher(self) -> re.Pattern[str] | None:
        """Compiled pattern, or None for an empty query."""
        if not self.text:
            return None
        flags = 0 if self.case_sensitive else re.IGNORECASE
        try:
            return re.compile(self.text if self.regex else re.escape(self.text), flags)
        except re.error as exc:
            raise SearchSyntaxError(f"invalid regular expression: {exc}") from exc


@dataclass(frozen=True)
class SearchHit:
    kind: HitKind
    name: str  # what matched: node label, tensor or initializer name
    detail: str  # op type, dtype[shape]...
    target: str  # box id to centre: node id, "in:<name>" or "out:<name>"


@dataclass
class SearchResult:
    hits: list[SearchHit] = field(default_factory=list)
    node_ids: set[str] = field(default_factory=set)  # matched boxes, for canvas highlighting
    truncated: bool = False


def search(model: Model, query: SearchQuery, index: ModelIndex | None = None,
           limit: int = MAX_RESULTS) -> SearchResult:
    """Nodes first (in graph order, nested bodies included), then tensors, initializers."""
    pattern = query.matcher()
    result = SearchResult()
    if pattern is None:
        return result
    index = index or ModelIndex.of(model)
    hits = result.hits

    def add(hit: SearchHit) -> bool:
        if len(hits) >= limit:
            result.truncated = True
            return False
        hits.append(hit)
        return True

    for graph in index.graphs():
        for node in graph.nodes:
            if pattern.search(node.name) or pattern.search(node.op_type):
                result.node_ids.add(node.id)
                add(SearchHit("node", node.label, node.op_type, node.id))
    seen: set[str] = set()
    for graph in index.graphs():
        for name, value in graph.values.items():
            if name in seen or value.kind == "captured" or not pattern.search(name):
                continue
            seen.add(name)
            ref = index.value(graph, name)
            if ref is None:
                continue
            main = graph is model.graph
            if value.kind == "input" and main:
                kind: HitKind = "input"
                target = f"in:{name}"
            elif value.kind == "output" and main:
                kind, target = "output", f"out:{name}"
            else:
                kind = "initializer" if ref.initializer else "tensor"
                target = ref.producer if ref.producer and not ref.producer.startswith("in:") \
                    else (ref.consumers[0] if ref.consumers else "")
                if not target:
                    continue
            if kind in ("input", "output"):
                result.node_ids.add(target)
            if not add(SearchHit(kind, name, value.type.describe(), target)):
                return result
    return result
