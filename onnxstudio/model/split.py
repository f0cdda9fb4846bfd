"""Split a model into N consecutive stages that, chained, compute the whole model.

Pipelining a network across devices wants stages of equal cost joined by few, small
tensors. Cuts are chosen on the graph's topological order (every ONNX graph is stored
in one): for each of the N−1 cuts we look at the positions whose cost so far lies within
a band around the ideal share and take the one that hands the fewest bytes to the
next stage. Constant producers (Constant, Shape-of-a-weight chains) are not cut across:
every stage that needs one carries its own copy, so no stage is fed a constant.
"""

from __future__ import annotations

import difflib
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from onnxstudio.errors import CutError
from onnxstudio.model.carry import ShapeRead, carried_nodes, carried_producers, shape_reads
from onnxstudio.model.cost.ops import node_work
from onnxstudio.model.cut import Cut, boundary, value_deps
from onnxstudio.model.graph import Graph, Model, Node, TensorType

CostKind = Literal["params", "flops", "time"]
COST_KINDS: tuple[CostKind, ...] = ("params", "flops", "time")
BAND = 0.15
"""A cut may move this share of one stage's ideal cost away from the ideal, to cut less."""

_ITEMSIZE = {"float64": 8, "int64": 8, "uint64": 8, "complex64": 8, "complex128": 16,
             "float32": 4, "int32": 4, "uint32": 4, "float16": 2, "bfloat16": 2,
             "int16": 2, "uint16": 2}


@dataclass(frozen=True)
class StageInput:
    """A tensor a stage is fed, and where it comes from: the model, or stage ``stage``."""

    name: str
    stage: int | None  # None: a model input

    @property
    def source(self) -> str:
        return "model" if self.stage is None else f"stage {self.stage}"


@dataclass(frozen=True)
class Stage:
    number: int  # 1-based
    nodes: tuple[int, ...]  # main-graph node indices, carried constants included
    inputs: tuple[StageInput, ...]
    outputs: tuple[str, ...]
    cost: float
    params: int  # bytes of the weights it holds
    shape_reads: tuple[ShapeRead, ...] = ()  # sizes read off an input it is fed anyway

    @property
    def file(self) -> str:
        return f"stage_{self.number}.onnx"


@dataclass(frozen=True)
class SplitPlan:
    by: CostKind
    stages: tuple[Stage, ...]
    total_cost: float
    cut_bytes: tuple[int, ...]  # bytes handed over at each cut (static dims; symbolic = 1)

    @property
    def imbalance(self) -> float:
        """The costliest stage over the ideal share (1.0 is perfect balance)."""
        ideal = self.total_cost / len(self.stages) if self.stages else 0.0
        return max(s.cost for s in self.stages) / ideal if ideal else 1.0

    def unwritable(self, model: Model) -> str | None:
        """Why the stages cannot be written, before anyone asks (None: they can): a stage's
        input or output needs a dtype and rank, which the model does not tell."""
        graph = model.graph
        for stage in self.stages:
            for name in (*(i.name for i in stage.inputs), *stage.outputs):
                value = graph.values.get(name)
                if value is not None and tensor_bytes(value.type) is None \
                        and value.type.kind == "tensor":
                    return (f"stage {stage.number} needs '{name}', whose dtype or rank the "
                            "model does not tell; choose another number of stages")
        return None

    def cut(self, model: Model, stage: Stage) -> Cut:
        """The stage as a :class:`Cut`, ready for :func:`onnxstudio.model.cut.write_cut`."""
        graph = model.graph
        names: dict[str, None] = {}
        for index in stage.nodes:
            for name in value_deps(graph, index):
                if name in graph.initializers:
                    names[name] = None
        return Cut(boundary(graph, [i.name for i in stage.inputs]),
                   boundary(graph, stage.outputs), stage.nodes, tuple(names),
                   stage.params, stage.shape_reads)


def tensor_bytes(ttype: TensorType) -> int | None:
    """Bytes of one value (symbolic dims count 1); None when its dtype or rank is unknown."""
    if ttype.kind != "tensor" or ttype.shape is None or ttype.dtype is None:
        return None
    elements = math.prod(d if isinstance(d, int) and d > 0 else 1 for d in ttype.shape)
    return elements * _ITEMSIZE.get(ttype.dtype or "", 1)


def _shape(graph: Graph, name: str) -> tuple[int, ...] | None:
    """A value's shape with symbolic and unknown dims as 1; None when its rank is unknown."""
    value = graph.values.get(name)
    shape = value.type.shape if value is not None else None
    return None if shape is None else tuple(d if isinstance(d, int) and d > 0 else 1
                                            for d in shape)


def _flops(graph: Graph, node: Node) -> float:
    """Two FLOPs per multiply-accumulate and one per element operation, as the cost
    table counts them (model/cost/ops.py)."""
    macs, element_ops = node_work(node, lambda name: _shape(graph, name))
    return 2.0 * macs + element_ops


def node_costs(model: Model, by: CostKind, constant: Sequence[bool],
               times: Mapping[int, float] | None = None) -> np.ndarray:
    """Cost of each computing node: weight bytes it is first to need, FLOPs, or ms.

    Constant producers cost nothing themselves: what they hold or take is charged to the
    first computing node that needs them, which is where a stage will carry them.
    """
    graph = model.graph
    costs = np.zeros(len(graph.nodes), dtype=np.float64)
    if by == "time":
        if not times:
            raise CutError("splitting by time needs a profile of the model")
        for index, ms in times.items():
            if 0 <= index < len(costs):
                costs[index] = ms
    elif by == "flops":
        for node in graph.nodes:
            costs[node.index] = _flops(graph, node)
    else:
        seen: set[str] = set()
        for node in graph.nodes:
            if constant[node.index]:
                continue
            for index in [node.index, *carried_producers(graph, node.index, constant)]:
                for name in value_deps(graph, index):
                    info = graph.initializers.get(name)
                    if info is not None and name not in seen:
                        seen.add(name)
                        costs[node.index] += info.nbytes
    costs[np.asarray(constant, dtype=bool)] = 0.0
    return costs


def _check_order(graph: Graph) -> None:
    for node in graph.nodes:
        for name in value_deps(graph, node.index):
            value = graph.values.get(name)
            if value is not None and value.producer is not None and \
                    value.producer >= node.index:
                raise CutError(f"node '{node.label}' reads '{name}' before it is made: the "
                               "graph is not in topological order, so it cannot be split")


def _handover(graph: Graph, constant: list[bool]) -> tuple[np.ndarray, np.ndarray]:
    """Bytes and a 'cannot cut here' flag for a cut before each position 0..len."""
    n = len(graph.nodes)
    size = np.zeros(n + 2, dtype=np.float64)
    blocked = np.zeros(n + 2, dtype=np.int64)
    last_reader: dict[str, int] = {}
    for node in graph.nodes:
        for name in value_deps(graph, node.index):
            last_reader[name] = node.index
    for name, last in last_reader.items():
        value = graph.values.get(name)
        if value is None or value.producer is None or constant[value.producer]:
            continue
        first_cut, past = value.producer + 1, last + 1  # cuts at positions (producer, last]
        if first_cut >= past:
            continue
        nbytes = tensor_bytes(value.type)
        if nbytes is None:  # a stage input needs a dtype and rank: never cut across it
            blocked[first_cut] += 1
            blocked[past] -= 1
        else:
            size[first_cut] += nbytes
            size[past] -= nbytes
    return np.cumsum(size)[: n + 1], np.cumsum(blocked)[: n + 1]


def _choose_cuts(prefix: np.ndarray, work: np.ndarray, handover: np.ndarray,
                 blocked: np.ndarray, stages: int) -> list[int]:
    """N−1 positions: within a band of each ideal share, the one handing over least.

    ``work[i]``: how many computing (non-constant) nodes lie before position i; every
    stage gets at least one, since a stage of constants alone would compute nothing.
    """
    n = len(prefix) - 1
    total = float(prefix[-1])
    ideal = total / stages
    cuts: list[int] = []
    previous = 0
    for j in range(1, stages):
        positions = np.arange(previous + 1, n)
        positions = positions[(work[positions] > work[previous])
                              & (work[n] - work[positions] >= stages - j)]
        if len(positions) == 0:
            raise CutError(f"the graph has too few nodes for {stages} stages")
        # re-aim at an equal share of what is left, so one early miss is not carried on
        target = prefix[previous] + (total - prefix[previous]) / (stages - j + 1)
        distance = np.abs(prefix[positions] - target)
        band = positions[(distance <= BAND * ideal) & (blocked[positions] == 0)]
        if len(band) == 0:  # a single node costs more than the band: take the nearest
            open_positions = positions[blocked[positions] == 0]
            band = open_positions if len(open_positions) else positions
            best = band[np.argmin(np.abs(prefix[band] - target))]
        else:
            order = np.lexsort((np.abs(prefix[band] - target), handover[band]))
            best = band[order[0]]
        cuts.append(int(best))
        previous = int(best)
    return cuts


def _stage_nodes(graph: Graph, start: int, stop: int, constant: Sequence[bool]) -> list[int]:
    """Nodes start..stop-1 that compute, plus the constant producers they need."""
    nodes = {i for i in range(start, stop)
             if not constant[i] or any(graph.values[o].kind == "output"
                                       for o in graph.nodes[i].outputs if o)}
    for index in list(nodes):
        nodes.update(carried_producers(graph, index, constant))
    return sorted(nodes)


def _stages(graph: Graph, node_lists: Sequence[list[int]], constant: Sequence[bool],
            prefix: np.ndarray, bounds: Sequence[int]) -> tuple[Stage, ...]:
    """Each stage's inputs (and where they come from), outputs, weights and cost."""
    made_in: dict[str, int] = {}
    for number, nodes in enumerate(node_lists, 1):
        for index in nodes:
            if not constant[index]:
                for name in graph.nodes[index].outputs:
                    made_in.setdefault(name, number)
    inputs: list[dict[str, StageInput]] = []
    moved: list[tuple[ShapeRead, ...]] = []
    for nodes in node_lists:
        produced = {o for i in nodes for o in graph.nodes[i].outputs}
        fed: dict[str, StageInput] = {}
        for index in nodes:
            for name in value_deps(graph, index):
                if name not in produced and name not in graph.initializers:
                    fed.setdefault(name, StageInput(name, made_in.get(name)))
        reads = tuple(shape_reads(graph, nodes, fed))
        rewired = {r.node for r in reads}
        read = {n for i in nodes if i not in rewired for n in value_deps(graph, i)}
        inputs.append({k: v for k, v in fed.items() if k in read})
        moved.append(reads)
    handed = {name for fed in inputs for name, item in fed.items() if item.stage is not None}
    result = []
    for number, nodes in enumerate(node_lists, 1):
        outputs = [o for i in nodes for o in graph.nodes[i].outputs
                   if o and made_in.get(o) == number
                   and (graph.values[o].kind == "output" or o in handed)]
        weights = {n for i in nodes for n in value_deps(graph, i) if n in graph.initializers}
        result.append(Stage(number, tuple(nodes), tuple(inputs[number - 1].values()),
                            tuple(dict.fromkeys(outputs)),
                            float(prefix[bounds[number]] - prefix[bounds[number - 1]]),
                            sum(graph.initializers[n].nbytes for n in weights),
                            moved[number - 1]))
    return tuple(result)


def _prepare(model: Model, by: CostKind, times: Mapping[int, float] | None
             ) -> tuple[list[bool], np.ndarray, np.ndarray]:
    """Carried nodes, running cost and running count of computing nodes, per position."""
    graph = model.graph
    _check_order(graph)
    constant = carried_nodes(graph)
    costs = node_costs(model, by, constant, times)
    if not costs.any():  # e.g. no weights at all: balance by node count instead
        costs = np.array([0.0 if c else 1.0 for c in constant])
    prefix = np.concatenate([[0.0], np.cumsum(costs)])
    work = np.concatenate([[0], np.cumsum([not c for c in constant])])
    return constant, prefix, work


def _plan(model: Model, by: CostKind, constant: list[bool], prefix: np.ndarray,
          handover: np.ndarray, cuts: Sequence[int]) -> SplitPlan:
    graph = model.graph
    bounds = [0, *cuts, len(graph.nodes)]
    node_lists = [_stage_nodes(graph, a, b, constant) for a, b in itertools.pairwise(bounds)]
    return SplitPlan(by, _stages(graph, node_lists, constant, prefix, bounds),
                     float(prefix[-1]), tuple(int(handover[b]) for b in bounds[1:-1]))


def plan_split(model: Model, stages: int, by: CostKind = "params",
               times: Mapping[int, float] | None = None) -> SplitPlan:
    """Where to cut ``model`` into ``stages`` consecutive parts (nothing is written)."""
    if stages < 1:
        raise CutError("the number of stages must be at least 1")
    constant, prefix, work = _prepare(model, by, times)
    computing = len(constant) - sum(constant)
    if stages > computing:
        raise CutError(f"{stages} stages asked of a graph of {computing} computing nodes")
    handover, blocked = _handover(model.graph, constant)
    cuts = _choose_cuts(prefix, work, handover, blocked, stages)
    return _plan(model, by, constant, prefix, handover, cuts)


def _position(model: Model, where: str, after_node: bool) -> int:
    """The cut position after node ``where`` (name or id), or after the node making tensor
    ``where``."""
    graph = model.graph
    if after_node:
        index = next((n.index for n in graph.nodes if where in (n.name, n.id)), None)
        if index is None:
            close = difflib.get_close_matches(where, [n.name for n in graph.nodes], n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise CutError(f"--cut-after {where}: no node of that name{hint}")
        return index + 1
    value = graph.values.get(where)
    if value is None:
        close = difflib.get_close_matches(where, list(graph.values), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise CutError(f"--cut {where}: no tensor of that name{hint}")
    if value.producer is None:
        raise CutError(f"--cut {where}: a model input or weight; cut at a tensor a node makes")
    return value.producer + 1


def plan_at(model: Model, after_nodes: Sequence[str] = (), tensors: Sequence[str] = (),
            by: CostKind = "params", times: Mapping[int, float] | None = None) -> SplitPlan:
    """Stages cut by hand: after the named nodes, or after the nodes making the named
    tensors (in the stored topological order)."""
    constant, prefix, work = _prepare(model, by, times)
    handover, blocked = _handover(model.graph, constant)
    labelled = sorted({_position(model, n, True): n for n in after_nodes}.items()
                      | {_position(model, t, False): t for t in tensors}.items())
    positions = sorted({p for p, _ in labelled})
    previous = 0
    for position, label in labelled:
        if position >= len(model.graph.nodes) or work[position] == work[previous]:
            raise CutError(f"cut at '{label}' leaves a stage with nothing to compute")
        if blocked[position]:
            raise CutError(f"cut at '{label}' crosses a tensor whose dtype or rank is unknown; "
                           "cut elsewhere")
        previous = position
    if not positions:
        raise CutError("no cut given")
    return _plan(model, by, constant, prefix, handover, positions)
