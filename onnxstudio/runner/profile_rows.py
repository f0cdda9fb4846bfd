"""A profile as rows and sentences: one row per node (or kernel onnxruntime added), one per
operator type, and the one-glance summary. Qt-free: the profile panel shows these."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from onnxstudio.model.formatting import format_ms, plural
from onnxstudio.model.graph import Model
from onnxstudio.runner.profile import ProfileResult


def provider_name(provider: str) -> str:
    return provider.removesuffix("ExecutionProvider") or provider or "?"


@dataclass
class NodeRow:
    node_id: str  # "" for a kernel onnxruntime added
    label: str  # node name, its id when unnamed, the kernel name when unmapped
    op_type: str
    time_ms: float
    share: float  # 0..1 of the kernel time
    fused: str
    tooltip: str
    unmapped: bool


@dataclass
class OpRow:
    op_type: str
    count: int
    time_ms: float
    share: float


def node_rows(result: ProfileResult, names: dict[int, str]) -> list[NodeRow]:
    whole = result.kernel_ms or 1.0
    rows = []
    for n in result.nodes:
        fused = ", ".join(names.get(i) or f"n{i}" for i in n.covers)
        tip = [f"{n.name or '(unnamed)'} · id {n.id} · {n.op_type}",
               f"Kernels: {', '.join(n.kernels) or '—'}",
               f"Provider: {n.provider or result.provider}"]
        if fused:
            tip.append(f"Also covers: {fused}")
        rows.append(NodeRow(n.id, n.name or n.id, n.op_type, n.time_ms, n.time_ms / whole,
                             fused, "\n".join(tip), False))
    for k in result.unmapped:
        note = (f"Kernel {k.name} ({k.op_type}) was added by onnxruntime; "
                "it is not a node of the model")
        rows.append(NodeRow("", k.name, k.op_type, k.time_ms, k.time_ms / whole, "", note,
                             True))
    return rows


def covered_names(result: ProfileResult, model: Model | None) -> dict[int, str]:
    """Names of the nodes fused kernels cover: the result keeps only their indices.

    Covered nodes get no time of their own, so their names come from the loaded model
    (main-graph nodes by index); without it, the column shows ``n<index>``.
    """
    nodes = model.graph.nodes if model is not None else []
    wanted = {i for n in result.nodes for i in n.covers}
    return {i: nodes[i].name for i in wanted if i < len(nodes)}


class ProfileTables(NamedTuple):
    """The panel's rows, and each table's largest share (its bars' full length)."""

    nodes: list[NodeRow]
    ops: list[OpRow]
    node_peak: float
    op_peak: float


def table_rows(result: ProfileResult, model: Model | None) -> ProfileTables:
    """The panel's tables, built once per result: the profile task builds them on its
    worker (dag100k: 100k rows, and 25 ms more for the peaks and the kernel sum alone)
    so the panel only shows them."""
    def build() -> ProfileTables:
        ops = [OpRow(o.op_type, o.count, o.time_ms, o.share) for o in result.op_types()]
        nodes = node_rows(result, covered_names(result, model))
        return ProfileTables(nodes, ops, max((r.share for r in nodes), default=1.0) or 1.0,
                             max((o.share for o in ops), default=1.0) or 1.0)

    if "table_rows" not in result.derived:
        result.derived["table_rows"] = build()
    tables: ProfileTables = result.derived["table_rows"]
    return tables


NBSP = "\u00a0"


def summary_lines(result: ProfileResult, warmup: int | None,
                  requested: int | None = None) -> str:
    """The one-glance figures above the tables (plain text, one line per thought).

    Each "·" part is held together with no-break spaces, so a narrow dock wraps
    between figures, never between a number and its unit.
    """
    after = f", after {warmup} warm-up" if warmup is not None else ""
    of = f" of {requested} runs" if requested is not None and requested > result.runs else ""
    parts = [f"{format_ms(result.total_ms)} ms per run (mean of {result.runs}{of}{after})",
             f"kernels {format_ms(result.kernel_ms)} ms",
             f"{plural(len(result.nodes), 'node')} timed",
             f"provider {provider_name(result.provider)}",
             f"optimisation {result.optimization}"]
    lines = [f"{NBSP}· ".join(part.replace(" ", NBSP) for part in parts)]
    if result.unmapped:
        extra = sum(k.time_ms for k in result.unmapped)
        lines.append(f"{format_ms(extra)} ms in {plural(len(result.unmapped), 'kernel')} "
                     "onnxruntime added (not in the model)")
    if of:
        lines.append(f"onnxruntime's profiler recorded {result.runs} of the {requested} "
                     "runs (it stops at a million events)")
    if result.source:
        lines.append(f"Input: {result.source}")
    return "\n".join(lines)
