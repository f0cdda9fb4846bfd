"""Per-node timing of one run: onnxruntime's profiler trace mapped back onto the model's nodes.

onnxruntime writes a Chrome-trace JSON with one ``cat == "Node"`` event per kernel. With
optimisations off, kernels are the model's nodes one to one. With them on, kernels may be
fused (``Conv`` + ``Add`` + ``Relu`` becomes one ``Conv`` named after the ``Relu``'s output
value plus ``_nchwc``) or inserted (layout ``ReorderOutput``, float16 casts). The session
also saves the graph it runs, and ``profile_map`` places each kernel by the model tensors
around it; names are the fallback. Fused kernels are credited to one node and list the
nodes they cover, kernels we cannot place are kept as unmapped time, so nothing is
silently dropped or counted twice.
"""

from __future__ import annotations

import csv
import io
import json
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import onnx
import onnxruntime as ort

from onnxstudio.errors import Cancelled, RunError
from onnxstudio.runner.cancel import CancelToken
from onnxstudio.runner.feeds import request_feeds
from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.runner.profile_map import OptimisedMap
from onnxstudio.runner.synthetic import dims_note

_KERNEL_SUFFIX = "_kernel_time"
# What onnxruntime's optimisers add to the name of the node (or value) they replace:
# "fused n16" (Gemm/MatMul + activation), "InsertedPrecisionFreeCast_r21_nchwc" (a float16
# Conv run in float32), "r70_mul_nchwc", "r68_bn_nchwc" (NCHWc transformer
# after folding a Mul or BatchNormalization into the Conv), "..._token_5" (made unique).
_PREFIXES = ("fused ", "InsertedPrecisionFreeCast_")
_CONVERTED = re.compile(r"^(_bn|_mul|_add)")
_SUFFIX = re.compile(r"(_nchwc|_token_\d+|_fused|_bn|_mul|_add|/MatMulAddFusion"
                     r"|_MatMulAddFusion)$")
_MAX_CHAIN = 6  # nodes one fused kernel may cover (Conv+BN+Add+Relu ... is at most a few)


def read_trace(text: str) -> list[dict[str, Any]]:
    """The events of an onnxruntime profile. It writes one event per line, and parsing
    line by line lets a window's GUI thread take the GIL between lines: ``json.loads`` of
    a whole trace (megabytes for one run of BERT-96) holds it for a fifth of a second.
    Anything not laid out that way is parsed whole."""
    events: list[dict[str, Any]] = []
    try:
        for line in text.splitlines():
            line = line.strip().rstrip(",")
            if line in ("", "[", "]"):
                continue
            event = json.loads(line)
            if not isinstance(event, dict):
                raise ValueError("not one event per line")
            events.append(event)
    except ValueError:
        return list(json.loads(text))
    return events


@dataclass
class NodeTime:
    """Time of one model node (main graph) per run, in milliseconds."""

    index: int  # position in the model's main graph, so the id is f"n{index}"
    name: str  # as in the model ("" when the model leaves it unnamed)
    op_type: str
    time_ms: float
    kernels: list[str] = field(default_factory=list)  # onnxruntime kernel names
    covers: list[int] = field(default_factory=list)  # other nodes fused into this kernel
    provider: str = ""

    @property
    def id(self) -> str:
        return f"n{self.index}"


@dataclass
class KernelTime:
    """A kernel that maps to no model node (inserted by onnxruntime, or renamed past us)."""

    name: str
    op_type: str
    time_ms: float


@dataclass
class OpTypeTime:
    op_type: str
    time_ms: float
    share: float  # of the summed kernel time (0..1)
    count: int  # nodes (or unmapped kernels) of this type that ran


@dataclass
class ProfileResult:
    model: Path
    source: str
    optimization: str
    provider: str
    runs: int
    total_ms: float  # mean wall time of one run (onnxruntime's model_run event)
    nodes: list[NodeTime]  # sorted slowest first
    unmapped: list[KernelTime]
    fused_into: dict[int, int] = field(default_factory=dict)  # covered node -> kernel's node
    # Views derived once (the panel's table rows), ideally by the worker that profiled.
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def kernel_ms(self) -> float:
        """Summed kernel time of one run, mapped and unmapped (≤ total_ms). Kept once
        summed (dag100k: 13 ms), which the profile task does for the panel."""
        return sum(n.time_ms for n in self.nodes) + sum(k.time_ms for k in self.unmapped)

    def op_types(self) -> list[OpTypeTime]:
        """Totals per operator type, slowest first, with their share of the kernel time."""
        totals: dict[str, list[float]] = {}
        for op, t in [(n.op_type, n.time_ms) for n in self.nodes] + \
                     [(k.op_type, k.time_ms) for k in self.unmapped]:
            acc = totals.setdefault(op, [0.0, 0])
            acc[0] += t
            acc[1] += 1
        whole = self.kernel_ms or 1.0
        rows = [OpTypeTime(op, t, t / whole, int(c)) for op, (t, c) in totals.items()]
        return sorted(rows, key=lambda r: -r.time_ms)

    def times_by_index(self) -> dict[int, float]:
        """Node index -> ms, the Split dialog's "Time" cost: made by its planner's worker
        (dag100k's 100k nodes: 40-60 ms on the GUI thread as the dialog opened)."""
        return {n.index: n.time_ms for n in self.nodes}

    def node_times(self) -> dict[str, float]:
        """Node id -> ms, fused nodes sharing their kernel's time (for a heatmap)."""
        times = {n.id: n.time_ms for n in self.nodes}
        for covered, owner in self.fused_into.items():
            times.setdefault(f"n{covered}", times.get(f"n{owner}", 0.0))
        return times

    def as_json(self) -> dict[str, Any]:
        return {
            "model": str(self.model), "input": self.source, "optimization": self.optimization,
            "provider": self.provider, "runs": self.runs, "total_ms": self.total_ms,
            "kernel_ms": self.kernel_ms,
            "nodes": [{"name": n.name, "id": n.id, "op_type": n.op_type, "time_ms": n.time_ms,
                       "kernels": n.kernels,
                       "covers": [f"n{i}" for i in n.covers]} for n in self.nodes],
            "unmapped": [{"name": k.name, "op_type": k.op_type, "time_ms": k.time_ms}
                         for k in self.unmapped],
            "op_types": [{"op_type": o.op_type, "time_ms": o.time_ms, "share": o.share,
                          "count": o.count} for o in self.op_types()],
        }


def to_csv(result: ProfileResult) -> str:
    """The node table as CSV (slowest first); unmapped kernels last with an empty id."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    whole = result.kernel_ms or 1.0
    w.writerow(["id", "name", "op_type", "time_ms", "share", "kernels", "covers"])
    for n in result.nodes:
        w.writerow([n.id, n.name, n.op_type, f"{n.time_ms:.6f}", f"{n.time_ms / whole:.6f}",
                    " ".join(n.kernels), " ".join(f"n{i}" for i in n.covers)])
    for k in result.unmapped:
        w.writerow(["", k.name, k.op_type, f"{k.time_ms:.6f}", f"{k.time_ms / whole:.6f}",
                    k.name, ""])
    return out.getvalue()


def _stripped(kernel: str) -> list[str]:
    """Shorter and shorter forms of a kernel name, one optimiser decoration off at a time."""
    out = []
    name = kernel
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix):]
            out.append(name)
    while True:
        shorter = _SUFFIX.sub("", name)
        if shorter == name or not shorter:
            return out
        name = shorter
        out.append(name)


class _Mapper:
    """Places kernel events on main-graph nodes of the model."""

    def __init__(self, graph: onnx.GraphProto) -> None:
        self.nodes = list(graph.node)
        self.by_name = {n.name: i for i, n in enumerate(self.nodes) if n.name}
        self.producer = {o: i for i, n in enumerate(self.nodes) for o in n.output if o}
        self.initializers = {t.name for t in graph.initializer}
        self.uses: dict[str, int] = {o.name: 1 for o in graph.output}
        for n in self.nodes:
            for x in n.input:
                self.uses[x] = self.uses.get(x, 0) + 1

    def place(self, kernel: str, op: str, node_index: int | None) -> tuple[int, list[int]] | None:
        """(node the time goes to, other nodes the kernel covers), or None."""
        if kernel in self.by_name:
            i = self.by_name[kernel]
            if self.nodes[i].op_type == op:
                return i, []
            return self._chain(i, op)
        # onnxruntime keeps the index of nodes it did not replace; new nodes get new ones.
        if node_index is not None and node_index < len(self.nodes) \
                and self.nodes[node_index].op_type == op \
                and (not self.nodes[node_index].name or self.nodes[node_index].name == kernel):
            return node_index, []
        for base in _stripped(kernel):
            hit = self.by_name.get(base, self.producer.get(base))  # node, or value it made
            if hit is None:
                continue
            # "_bn"/"_mul"/"_add": that node was itself turned into the kernel, no fusion.
            tail = kernel[kernel.rfind(base) + len(base):]
            return (hit, []) if _CONVERTED.search(tail) else self._chain(hit, op)
        return None

    def _chain(self, last: int, op: str) -> tuple[int, list[int]]:
        """Walk back from ``last`` along first inputs to the node of the kernel's own type.

        Only through values nothing else reads: a fusion can swallow a value only then.
        """
        path = [last]
        i = last
        for _ in range(_MAX_CHAIN):
            if self.nodes[i].op_type == op:
                return i, [j for j in path if j != i]
            src = next((x for x in self.nodes[i].input
                        if x and x not in self.initializers and x in self.producer), None)
            if src is None or self.uses.get(src, 0) != 1:
                break
            i = self.producer[src]
            path.append(i)
        return last, []  # no node of that type upstream: credit the named one alone


# The activations a kernel's ``activation`` attribute stands for (FusedConv, NCHWc Conv).
_ACTIVATIONS = frozenset({"Relu", "Sigmoid", "Tanh", "LeakyRelu", "Clip", "HardSigmoid"})


def kernel_map(graph: onnx.GraphProto, optimised: onnx.GraphProto) -> OptimisedMap:
    """The optimised graph's kernels mapped to ``graph``'s nodes, by tensors and names.

    A kernel named after a node also covers what its attributes say it fused after that
    node (a Sum input: the Add; ``activation``: the Relu). An NCHWc graph has no model
    tensors between its kernels to tell so, and a residual Add would otherwise go to
    the next kernel that reaches a model tensor.
    """
    mapper = _Mapper(graph)
    kernels = {n.name: n for n in optimised.node if n.name}
    readers: dict[str, list[int]] = {}
    for i, n in enumerate(mapper.nodes):
        for x in n.input:
            readers.setdefault(x, []).append(i)

    def after(i: int, ops: frozenset[str]) -> int | None:
        out = mapper.nodes[i].output
        nxt = readers.get(out[0], []) if out else []
        return nxt[0] if len(nxt) == 1 and mapper.nodes[nxt[0]].op_type in ops else None

    def by_name(kernel: str, op: str) -> tuple[int, list[int]] | None:
        hit = mapper.place(kernel, op, None)
        node = kernels.get(kernel)
        if hit is None or node is None or op not in ("Conv", "FusedConv"):
            return hit
        extra: list[int] = []
        last: int | None = max([hit[0], *hit[1]])
        if len(node.input) >= 4 and last is not None:  # Sum: the residual Add
            last = after(last, frozenset({"Add"}))
            extra += [last] if last is not None else []
        if any(a.name == "activation" for a in node.attribute) and last is not None:
            last = after(last, _ACTIVATIONS)
            extra += [last] if last is not None else []
        return hit[0], sorted(hit[1] + extra)

    return OptimisedMap(graph, optimised, by_name)


def parse_trace(events: Sequence[dict[str, Any]], graph: onnx.GraphProto,
                skip_runs: int = 0, optimised: onnx.GraphProto | None = None
                ) -> tuple[float, int, list[NodeTime], list[KernelTime], dict[int, int]]:
    """Mean per-run times from a trace: (total_ms, runs, nodes, unmapped, fused_into).

    Runs are the ``model_run`` session events; the first ``skip_runs`` are warm-up.
    ``optimised``: the graph onnxruntime ran, which places kernels by their tensors.
    """
    run_windows = sorted((float(e["ts"]), float(e["ts"]) + float(e["dur"]))
                         for e in events
                         if e.get("cat") == "Session" and e.get("name") == "model_run")
    windows = run_windows[skip_runs:]
    if not windows:
        raise RunError("the profiler trace has no measured run")
    runs = len(windows)
    total_ms = sum(b - a for a, b in windows) / runs / 1000.0
    mapper = _Mapper(graph)
    by_tensors = kernel_map(graph, optimised) if optimised is not None else None
    nodes: dict[int, NodeTime] = {}
    unmapped: dict[str, KernelTime] = {}
    fused_into: dict[int, int] = {}
    seen: set[tuple[str, float]] = set()
    for e in events:
        if e.get("cat") != "Node" or not str(e.get("name", "")).endswith(_KERNEL_SUFFIX):
            continue
        ts = float(e.get("ts", 0.0))
        if not any(a <= ts <= b for a, b in windows):
            continue
        key = (e["name"], ts)
        if key in seen:
            continue
        seen.add(key)
        kernel = e["name"][: -len(_KERNEL_SUFFIX)]
        args = e.get("args", {})
        op = str(args.get("op_name", ""))
        raw_index = args.get("node_index")
        index = int(raw_index) if raw_index not in (None, "") else None
        ms = float(e.get("dur", 0.0)) / 1000.0 / runs
        placed = by_tensors.place(kernel, op) if by_tensors is not None \
            else mapper.place(kernel, op, index)
        if placed is None:
            k = unmapped.setdefault(kernel, KernelTime(kernel, op, 0.0))
            k.time_ms += ms
            continue
        owner, covers = placed
        proto = mapper.nodes[owner]
        nt = nodes.setdefault(owner, NodeTime(owner, proto.name, proto.op_type, 0.0,
                                              provider=str(args.get("provider", ""))))
        nt.time_ms += ms
        if kernel not in nt.kernels:
            nt.kernels.append(kernel)
        for c in covers:
            if c not in nt.covers:
                nt.covers.append(c)
                nt.covers.sort()
            fused_into[c] = owner
    ordered = sorted(nodes.values(), key=lambda n: -n.time_ms)
    return total_ms, runs, ordered, sorted(unmapped.values(), key=lambda k: -k.time_ms), \
        fused_into


def profile(request: RunRequest, runs: int = 1, warmup: int = 1,
            cancel: CancelToken | None = None,
            progress: Callable[[int, int], None] | None = None) -> ProfileResult:
    """Run the request's first input with profiling on and map the trace onto the model.

    The session is made for this alone (profiling cannot be switched on later); the trace
    goes to a temporary folder that is removed afterwards.
    """
    model = request.read()
    with tempfile.TemporaryDirectory(prefix="onnxstudio-profile-") as tmp:
        saved = Path(tmp) / "optimised.onnx"

        def enable(options: ort.SessionOptions) -> None:
            options.enable_profiling = True
            options.profile_file_prefix = str(Path(tmp) / "trace")
            if request.config.optimization != "disable":  # kernels are then not the nodes
                options.optimized_model_filepath = str(saved)
                options.add_session_config_entry(  # weights aside: only the graph is read
                    "session.optimized_model_external_initializers_file_name",
                    "optimised.data")

        session = model.session(request.config, tweak=enable, cancel=cancel)
        source, feeds = request_feeds(request, session, model)
        count = max(0, warmup) + max(1, runs)
        try:
            for done in range(1, count + 1):
                session.run(feeds)
                if progress is not None:  # (runs done, of): a determinate bar
                    progress(done, count)
        except RunError as exc:
            if not request.random or isinstance(exc, Cancelled):
                raise
            info = model.info()
            note = dims_note(info.inputs, request.dim_sizes, info.dim_hints)
            raise RunError(f"{exc} ({note})") from exc
        finally:
            trace = session.session.end_profiling()
        try:
            events = read_trace(Path(trace).read_text())
        except (OSError, ValueError) as exc:
            raise RunError(f"{request.model.name}: cannot read onnxruntime's profile "
                           f"({exc})") from exc
        optimised = _read_graph(saved)
    total, n, nodes, unmapped, fused = parse_trace(events, model.proto.graph,
                                                   skip_runs=max(0, warmup), optimised=optimised)
    return ProfileResult(request.model, source, request.config.optimization,
                         request.config.provider, n, total, nodes, unmapped, fused)


def _read_graph(path: Path) -> onnx.GraphProto | None:
    """The optimised graph onnxruntime saved, without its weights; None when it wrote
    none (optimisations off) or one we cannot read (names then place the kernels)."""
    try:
        return onnx.load(str(path), load_external_data=False).graph if path.is_file() else None
    except (OSError, ValueError, onnx.onnx_cpp2py_export.checker.ValidationError):
        return None
