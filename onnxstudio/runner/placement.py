"""Where each node runs: the execution provider and kernel onnxruntime assigns it.

onnxruntime ≥ 1.24 records the assignment when the session option
``session.record_ep_graph_assignment_info`` is on, and
``InferenceSession.get_provider_graph_assignment_info()`` lists per provider the nodes
it took. The list describes the graph as it is partitioned: after the basic
optimisations (constant folding, BatchNormalization folded into Conv, MatMul + Add made
a Gemm), before the provider-specific fusions. So a model node is either listed by name
(or under a fused name like ``<node>/MatMulAddFusion``), or absent: folded into the
kernel of the node that feeds it, computed once as a constant when the session loads,
or removed as a no-op. This module reads the list back onto the model's nodes, then
names the fused kernels that really run them from the optimised graph the same session
saves (`fusions.py`).
"""

from __future__ import annotations

import importlib.metadata
import tempfile
from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import onnx
import onnxruntime as ort

from onnxstudio.errors import RunError
from onnxstudio.runner.cancel import CancelToken
from onnxstudio.runner.fusions import NO_OPS, name_fused_kernels
from onnxstudio.runner.session import CPU, SessionConfig
from onnxstudio.runner.source import ModelSource

RECORD = "session.record_ep_graph_assignment_info"
CONSTANT = "constant-folded at load"


@dataclass(frozen=True)
class ProviderInfo:
    """An execution provider this installation offers (or a plugin package it has)."""

    name: str
    usable: bool  # onnxruntime can create sessions with it now
    devices: tuple[str, ...] = ()  # "CPU AMD", "GPU NVIDIA" (get_ep_devices)
    plugin: str = ""  # the onnxruntime-ep-* package it comes from, if any


@dataclass
class NodePlacement:
    id: str
    name: str
    op_type: str
    provider: str | None  # None: not run (a constant computed at load, a no-op removed)
    kernel: str  # "Conv", "Gemm (MatMulAddFusion)", "folded into Conv '/conv1/Conv'"
    absorbed: list[str] = field(default_factory=list)  # ids folded into this node's kernel
    owner: str | None = None  # the node whose kernel absorbed this one


@dataclass
class Placement:
    model: Path
    requested: str
    optimization: str
    nodes: list[NodePlacement]
    providers: list[ProviderInfo]
    extra: list[tuple[str, str, str]]  # kernels onnxruntime added: (provider, name, op)
    times: dict[str, float] = field(default_factory=dict)  # provider -> ms, from a profile

    def counts(self) -> Counter[str]:
        return Counter(n.provider or "not run" for n in self.nodes)

    def fallbacks(self) -> list[NodePlacement]:
        """Nodes that run on the CPU although another provider was asked for first."""
        if self.requested == CPU:
            return []
        return [n for n in self.nodes if n.provider == CPU]

    def as_json(self) -> dict[str, Any]:
        counts, whole = self.counts(), max(1, len(self.nodes))
        time_whole = sum(self.times.values()) or 1.0
        used = {n.provider for n in self.nodes if n.provider}
        names = [p.name for p in self.providers] + sorted(used - {p.name for p in self.providers})
        info = {p.name: p for p in self.providers}
        providers = []
        for name in names:
            p = info.get(name, ProviderInfo(name, True))
            entry: dict[str, Any] = {
                "name": name, "usable": p.usable, "devices": list(p.devices),
                "plugin": p.plugin or None, "nodes": counts.get(name, 0),
                "node_share": counts.get(name, 0) / whole}
            if self.times:
                entry["time_ms"] = self.times.get(name, 0.0)
                entry["time_share"] = self.times.get(name, 0.0) / time_whole
            providers.append(entry)
        return {"nodes": [{"id": n.id, "name": n.name, "op_type": n.op_type,
                           "provider": n.provider, "kernel": n.kernel} for n in self.nodes],
                "providers": providers}


def can_report() -> bool:
    return hasattr(ort.InferenceSession, "get_provider_graph_assignment_info")


def cannot_report_message() -> str:
    return (f"onnxruntime {ort.__version__} cannot report which provider runs each node "
            "(it needs onnxruntime 1.24 or newer: get_provider_graph_assignment_info)")


def discover_providers() -> list[ProviderInfo]:
    """The providers of this installation: onnxruntime's own list (CPU first), those its
    registered devices name (plugin EPs included), and onnxruntime-ep-* packages."""
    available = [CPU, *[p for p in ort.get_available_providers() if p != CPU]]
    devices: dict[str, list[str]] = {}
    get_devices = getattr(ort, "get_ep_devices", None)
    for d in get_devices() if get_devices is not None else []:
        kind = getattr(getattr(d.device, "type", None), "name", "") or "device"
        devices.setdefault(d.ep_name, []).append(f"{kind} {d.device.vendor}".strip())
    found = [ProviderInfo(p, True, tuple(devices.get(p, ()))) for p in available]
    found += [ProviderInfo(name, False, tuple(devs), "registered plugin")
              for name, devs in devices.items() if name not in available]
    for dist in importlib.metadata.distributions():
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if name.startswith("onnxruntime-ep-"):
            found.append(ProviderInfo(name, False, (), name))
    return found


def placement(path: str | Path, provider: str = CPU, optimization: str = "all", *,
              model_bytes: bytes | None = None, cancel: CancelToken | None = None
              ) -> Placement:
    """Create a session for the model with ``provider`` first (CPU after it) and read
    where onnxruntime put every node."""
    path = Path(path)
    if not can_report():
        raise RunError(f"{path.name}: {cannot_report_message()}")
    source = ModelSource.read(path, model_bytes)

    with tempfile.TemporaryDirectory(prefix="onnxstudio-placement-") as tmp:
        saved = Path(tmp) / "optimised.onnx"

        def record(options: ort.SessionOptions) -> None:
            options.add_session_config_entry(RECORD, "1")

        def record_and_save(options: ort.SessionOptions) -> None:
            record(options)  # and the graph after the fusions, to name them
            options.optimized_model_filepath = str(saved)
            options.add_session_config_entry(  # weights aside: only the graph is read
                "session.optimized_model_external_initializers_file_name", "optimised.data")

        config = SessionConfig(provider, optimization)
        try:
            session = source.session(config, cancel=cancel,
                                     tweak=record if optimization == "disable" else record_and_save)
        except RunError:
            if provider == CPU or optimization == "disable":
                raise
            # a provider that compiles nodes cannot save its graph: the record alone
            session = source.session(config, tweak=record, cancel=cancel)
        try:
            assigned = [(sub.ep_name, n.name, n.op_type, n.domain)
                        for sub in session.session.get_provider_graph_assignment_info()
                        for n in sub.get_nodes()]
        except Exception as exc:  # a build that has the call but did not record
            raise RunError(f"{path.name}: onnxruntime did not report the assignment "
                           f"({str(exc).splitlines()[0][:200]})") from exc
        nodes, extra = map_assignment(source.proto.graph, assigned)
        if saved.is_file():
            optimised = onnx.load(str(saved), load_external_data=False)
            name_fused_kernels(source.proto.graph, optimised.graph, nodes)
    return Placement(path, provider, optimization, nodes, discover_providers(), extra)


def _qualified(op: str, domain: str) -> str:
    return op if domain in ("", "ai.onnx") else f"{domain}.{op}"


def map_assignment(graph: onnx.GraphProto, assigned: list[tuple[str, str, str, str]]
                   ) -> tuple[list[NodePlacement], list[tuple[str, str, str]]]:
    """The assignment list read onto ``graph``'s nodes (see the module docstring);
    returns the placements in graph order and the kernels no model node accounts for."""
    protos = list(graph.node)
    out = [NodePlacement(f"n{i}", n.name, n.op_type, None, "") for i, n in enumerate(protos)]
    by_name = {n.name: i for i, n in enumerate(protos) if n.name}
    unnamed: dict[str, deque[int]] = {}
    for i, n in enumerate(protos):
        if not n.name:
            unnamed.setdefault(n.op_type, deque()).append(i)
    placed: set[int] = set()
    extra: list[tuple[str, str, str]] = []
    for ep, name, op, domain in assigned:
        index, tag = by_name.get(name), ""
        if index is None and "/" in name:  # "<node>/MatMulAddFusion": made from <node>
            base, _, tag = name.rpartition("/")
            index = by_name.get(base)
        if index is None and not name and unnamed.get(op):
            index = unnamed[op].popleft()
        if index is None or index in placed:
            extra.append((ep, name, _qualified(op, domain)))
            continue
        placed.add(index)
        kernel = _qualified(op, domain)
        if tag:
            kernel += f" ({tag})"
        out[index].provider, out[index].kernel = ep, kernel
    _explain_missing(graph, protos, out, placed)
    return out, extra


def _explain_missing(graph: onnx.GraphProto, protos: list[Any], out: list[NodePlacement],
                     placed: set[int]) -> None:
    """Say why each node the list leaves out is not there, in graph order so that a
    chain (Conv -> BatchNormalization -> Add) resolves to the first kernel."""
    constant = {t.name for t in graph.initializer}
    producer: dict[str, int] = {}
    for i, node in enumerate(protos):
        for o in node.output:
            producer[o] = i
    owner_of: dict[int, int] = {i: i for i in placed}
    for i, node in enumerate(protos):
        if i in placed:
            continue
        inputs = [x for x in node.input if x]
        if node.op_type in ("Constant", "Shape", "Size") or all(x in constant for x in inputs):
            constant.update(node.output)
            out[i].kernel = CONSTANT
            continue
        if node.op_type in NO_OPS:
            out[i].kernel = "removed (a no-op)"
            continue
        feeding = next((producer[x] for x in inputs if x not in constant and x in producer),
                       None)
        owner = owner_of.get(feeding) if feeding is not None else None
        if owner is None:
            out[i].kernel = "removed by onnxruntime's optimiser"
            continue
        owner_of[i] = owner
        host = out[owner]
        out[i].provider, out[i].owner = host.provider, host.id
        out[i].kernel = f"folded into {host.op_type} '{host.name or host.id}'"
        host.absorbed.append(out[i].id)
        host.kernel += f" + {node.op_type}"


def provider_times(timed: Iterable[tuple[str, float]]) -> dict[str, float]:
    """(provider, ms) of a profile's kernels summed per provider."""
    times: dict[str, float] = {}
    for provider, ms in timed:
        key = provider or "unknown"
        times[key] = times.get(key, 0.0) + ms
    return times
