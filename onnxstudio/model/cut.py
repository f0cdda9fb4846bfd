"""Cut a model: the sub-model around chosen nodes or between chosen tensors, and write it.

Computing a cut reads only the plain :class:`Model` (fast enough to preview a selection
on the GUI thread); writing one re-reads the proto. We build the sub-model ourselves
rather than with ``onnx.utils.Extractor`` because Extractor takes file paths, loads
*every* external weight (not just those the cut needs), fails outright when shape
inference does, drops local functions and metadata, and writes in place; a failed or
cancelled cut must never leave a half-written file, nor touch the user's model.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import onnx
from onnx import external_data_helper

from onnxstudio.errors import CutError
from onnxstudio.model.dtypes import dtype_name
from onnxstudio.model.external import model_folder
from onnxstudio.model.formatting import human_bytes, plural
from onnxstudio.model.graph import Graph, Model, TensorType
from onnxstudio.model.load import read_model_proto
from onnxstudio.model.write import (
    EXTERNAL_THRESHOLD,
    PROTOBUF_SAFE,
    check_destination,
    check_model_file,
    write_model_file,
)

if TYPE_CHECKING:  # carry.py reads the graph through this module
    from onnxstudio.model.carry import ShapeRead


@dataclass(frozen=True)
class CutTensor:
    """A tensor on the cut's boundary: an input it is fed, or an output it returns."""

    name: str
    type: TensorType

    def describe(self) -> str:
        return f"{self.name}: {self.type.describe()}"


@dataclass(frozen=True)
class Cut:
    """What a sub-model will contain; node indices refer to the main graph, in order."""

    inputs: tuple[CutTensor, ...]
    outputs: tuple[CutTensor, ...]
    nodes: tuple[int, ...]
    initializers: tuple[str, ...]
    weight_bytes: int
    shape_reads: tuple[ShapeRead, ...] = ()

    @property
    def node_ids(self) -> list[str]:
        return [f"n{i}" for i in self.nodes]

    def summary(self) -> str:
        return (f"{plural(len(self.nodes), 'node')}, "
                f"{plural(len(self.initializers), 'weight')} ({human_bytes(self.weight_bytes)}); "
                f"{plural(len(self.inputs), 'input')}, {plural(len(self.outputs), 'output')}")


@dataclass(frozen=True)
class WrittenCut:
    """Where a sub-model went: the model file and, if any, its external-data file."""

    path: Path
    data_path: Path | None
    weight_bytes: int


def value_deps(graph: Graph, index: int) -> list[str]:
    """Values node ``index`` reads: its inputs and what its nested bodies capture."""
    node = graph.nodes[index]
    names = [name for name in node.inputs if name]
    for body in node.subgraphs.values():
        names.extend(body.captured)
    return names


_CONSTANT_DEPTH = 8  # constant-folding chains (Shape of a weight -> Gather -> ...) are short


def is_constant(graph: Graph, index: int, memo: dict[int, bool], depth: int = 0) -> bool:
    """A node computed from weights alone: worth carrying rather than feeding.

    Bounded in depth and memoised, so a 100k-node chain costs nothing (a node found too
    deep is conservatively taken as not constant: it becomes an input, still correct).
    """
    known = memo.get(index)
    if known is not None:
        return known
    node = graph.nodes[index]
    result = not node.subgraphs and depth < _CONSTANT_DEPTH
    if result:
        for name in node.inputs:
            if not name or name in graph.initializers:
                continue
            producer = graph.values[name].producer if name in graph.values else None
            if producer is None or not is_constant(graph, producer, memo, depth + 1):
                result = False
                break
    memo[index] = result
    return result


def boundary(graph: Graph, names: Iterable[str]) -> tuple[CutTensor, ...]:
    return tuple(CutTensor(n, graph.values[n].type) for n in names)


def _finish(graph: Graph, nodes: set[int], inputs: Sequence[str],
            outputs: Sequence[str]) -> Cut:
    initializers: dict[str, None] = {}
    order = sorted(nodes)
    for index in order:
        for name in value_deps(graph, index):
            if name in graph.initializers:
                initializers[name] = None
    weight_bytes = sum(graph.initializers[n].nbytes for n in initializers)
    return Cut(boundary(graph, inputs), boundary(graph, outputs), tuple(order),
               tuple(initializers), weight_bytes)


def cut_from_nodes(model: Model, node_ids: Iterable[str]) -> Cut:
    """The sub-model made of the selected nodes.

    Its inputs are the values they read but do not make (weights stay weights); its
    outputs are the values they make that something outside reads, or that the model
    returns. A node inside an If/Loop body stands for its top-level node, and Constant
    nodes feeding the selection (computed from weights alone) come along so that shapes
    and weights need not be fed.
    """
    graph = model.graph
    by_id = {node.id: node.index for node in graph.nodes}
    selected: set[int] = set()
    unknown: list[str] = []
    for node_id in node_ids:
        top = node_id.split("/", 1)[0]
        if top in by_id:
            selected.add(by_id[top])
        else:
            unknown.append(node_id)
    if not selected:
        raise CutError("nothing to extract: select nodes of the main graph"
                       + (f" (not {', '.join(unknown[:3])})" if unknown else ""))
    pending = list(selected)
    memo: dict[int, bool] = {}
    while pending:  # carry constant producers (Constant, ConstantOfShape of a weight...)
        for name in value_deps(graph, pending.pop()):
            producer = graph.values[name].producer if name in graph.values else None
            if (producer is not None and producer not in selected
                    and is_constant(graph, producer, memo)):
                selected.add(producer)
                pending.append(producer)

    produced: dict[str, None] = {}
    for index in sorted(selected):
        for name in graph.nodes[index].outputs:
            if name:
                produced[name] = None
    inputs: dict[str, None] = {}
    for index in sorted(selected):
        for name in value_deps(graph, index):
            if name not in produced and name not in graph.initializers:
                inputs[name] = None
    captured_outside = {name for i, node in enumerate(graph.nodes) if i not in selected
                        for body in node.subgraphs.values() for name in body.captured}
    outputs = [name for name in produced
               if graph.values[name].kind == "output" or name in captured_outside
               or any(c not in selected for c in graph.values[name].consumers)]
    if not outputs:  # nothing leaves the selection: return its dead ends
        outputs = [name for name in produced if not graph.values[name].consumers]
    return _finish(graph, selected, list(inputs), outputs)


def _check_names(graph: Graph, names: Sequence[str]) -> None:
    unknown = [n for n in names if n not in graph.values]
    if not unknown:
        return
    parts = []
    for name in unknown[:5]:
        close = difflib.get_close_matches(name, list(graph.values), n=1)
        parts.append(f"'{name}'" + (f" (did you mean '{close[0]}'?)" if close else ""))
    more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
    raise CutError(f"no tensor named {', '.join(parts)}{more} in the model")


def cut_from_tensors(model: Model, inputs: Sequence[str] | None,
                     outputs: Sequence[str] | None) -> Cut:
    """Everything between ``inputs`` and ``outputs`` (tensor names).

    ``inputs=None`` means "from whichever model inputs the outputs need";
    ``outputs=None`` means the model's outputs. An output that also needs a model
    input not among ``inputs``, or that none of them reaches, is an error naming both.
    """
    graph = model.graph
    want_out = list(dict.fromkeys(outputs if outputs is not None else graph.outputs))
    given = list(dict.fromkeys(inputs)) if inputs is not None else None
    _check_names(graph, [*(given or []), *want_out])
    if not want_out:
        raise CutError("no outputs given")
    stop = set(given) if given is not None else set()
    both = [n for n in want_out if n in stop]
    if both:
        raise CutError(f"'{both[0]}' is both an input and an output of the cut")
    nodes: set[int] = set()
    used_inputs: dict[str, None] = {}
    problems: list[str] = []
    for out in want_out:
        seen: set[str] = set()
        reached = False
        missing: list[str] = []
        stack = [out]
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in stop:
                reached = True
                used_inputs[name] = None
                continue
            if name in graph.initializers:
                continue
            value = graph.values[name]
            if value.producer is None:
                if given is None:
                    reached = True
                    used_inputs[name] = None
                else:
                    missing.append(name)
                continue
            if value.producer not in nodes:
                nodes.add(value.producer)
            stack.extend(value_deps(graph, value.producer))
        if missing:
            names = ", ".join(f"'{m}'" for m in sorted(missing)[:4])
            problems.append(f"output '{out}' is unreachable from the given inputs: it also "
                            f"needs {names} (add {'it' if len(missing) == 1 else 'them'} "
                            "to the inputs)")
        elif given and not reached:
            problems.append(f"output '{out}' is unreachable from the given inputs: it "
                            "depends on none of them")
    if problems:
        raise CutError("; ".join(problems))
    if given is not None:
        unused = [n for n in given if n not in used_inputs]
        if unused:
            raise CutError(f"input '{unused[0]}' does not lead to any of the outputs")
        ordered_inputs = given
    else:
        ordered_inputs = [n for n in graph.inputs if n in used_inputs]
        ordered_inputs += [n for n in used_inputs if n not in ordered_inputs]
    if not nodes:
        raise CutError("the cut contains no nodes")
    return _finish(graph, nodes, ordered_inputs, want_out)


# ---------------------------------------------------------------- writing


def protected_paths(model: Model, extra: Iterable[str | Path]) -> list[Path]:
    folder = Path(model.path).parent
    paths = [Path(model.path), *(Path(p) for p in extra)]
    for graph in [model.graph, *(f.body for f in model.functions)]:
        paths += [folder / info.external_location for info in graph.initializers.values()
                  if info.external_location]
    return paths


def _value_infos(proto: onnx.ModelProto, inferred: onnx.ModelProto | None
                 ) -> dict[str, onnx.ValueInfoProto]:
    """Declared types, unless inference knows more (an exporter may declare a dtype only)."""
    found: dict[str, onnx.ValueInfoProto] = {}
    for g in (inferred.graph if inferred is not None else None, proto.graph):
        if g is None:
            continue
        for vi in (*g.value_info, *g.output, *g.input):
            if vi.type.WhichOneof("value") is not None and (
                    vi.name not in found or _complete(vi) or not _complete(found[vi.name])):
                found[vi.name] = vi
    return found


def _complete(vi: onnx.ValueInfoProto) -> bool:
    """onnx.checker needs a tensor's elem_type and shape (rank) on graph inputs/outputs."""
    if vi.type.WhichOneof("value") != "tensor_type":
        return True
    return bool(vi.type.tensor_type.elem_type) and vi.type.tensor_type.HasField("shape")


def _from_tensor_type(name: str, ttype: TensorType) -> onnx.ValueInfoProto | None:
    """A ValueInfo from what the Model knows, when the proto's inference has nothing."""
    if ttype.kind != "tensor" or ttype.dtype is None or ttype.shape is None:
        return None
    elem = next((code for code in onnx.TensorProto.DataType.values()
                 if dtype_name(code) == ttype.dtype), None)
    if elem is None:
        return None
    shape = None if ttype.shape is None else [d for d in ttype.shape]
    return onnx.helper.make_tensor_value_info(name, elem, shape)


def _used_functions(proto: onnx.ModelProto, nodes: Iterable[onnx.NodeProto]
                    ) -> list[onnx.FunctionProto]:
    available = {(f.domain, f.name): f for f in proto.functions}
    used: dict[tuple[str, str], None] = {}
    stack = list(nodes)
    while stack:
        node = stack.pop()
        key = (node.domain, node.op_type)
        if key in available and key not in used:
            used[key] = None
            stack.extend(available[key].node)
        for attr in node.attribute:
            for g in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else
                      attr.graphs if attr.type == onnx.AttributeProto.GRAPHS else []):
                stack.extend(g.node)
    return [f for f in proto.functions if (f.domain, f.name) in used]


def _inline_weights(g: onnx.GraphProto, wanted: set[str], source: Path
                    ) -> list[onnx.TensorProto]:
    """Copies of the ``wanted`` initializers with their bytes inline (a cut is written
    beside no external-data file of its own)."""
    initializers = []
    base = model_folder(source)
    for tensor in g.initializer:
        if tensor.name not in wanted:
            continue
        copy = onnx.TensorProto()
        copy.CopyFrom(tensor)
        if external_data_helper.uses_external_data(copy):
            try:  # locations were checked to lie inside the model's folder on reading
                external_data_helper.load_external_data_for_tensor(copy, str(base))
            except OSError as exc:
                raise CutError(f"{source.name}: cannot read the weights of "
                               f"'{tensor.name}' ({exc.strerror or exc})") from exc
            copy.data_location = onnx.TensorProto.DEFAULT
            del copy.external_data[:]
        initializers.append(copy)
    return initializers


def build_cut_proto(model: Model, cut: Cut, proto: onnx.ModelProto | None = None,
                    known: Mapping[str, TensorType] | None = None,
                    inferred: onnx.ModelProto | None = None) -> onnx.ModelProto:
    """The sub-model as a proto, weights loaded (only those it needs) and inline.

    ``known``: types seen in a real run, for boundary tensors whose shape inference
    cannot tell (onnx.checker insists that graph inputs and outputs have a rank).
    ``inferred``: ``proto`` after shape inference, when several cuts share it.
    """
    known = known or {}
    from onnxstudio.model.inference import infer_shapes

    source = Path(model.path)
    if proto is None:
        proto, _external = read_model_proto(source)
    if inferred is None:
        inferred, _problem = infer_shapes(proto)
    infos = _value_infos(proto, inferred)
    graph = model.graph

    def value_info(name: str) -> onnx.ValueInfoProto:
        vi = infos.get(name)
        if vi is not None and _complete(vi):
            copy = onnx.ValueInfoProto()
            copy.CopyFrom(vi)
            return copy
        for ttype in (known.get(name), graph.values[name].type if name in graph.values
                      else None):
            made = _from_tensor_type(name, ttype) if ttype is not None else None
            if made is not None:
                return made
        what = "type" if vi is None else "rank"
        raise CutError(f"the {what} of '{name}' is unknown (shape inference cannot see "
                       "through the operator that makes it), so it cannot be an input or "
                       "output of the sub-model; cut elsewhere, or run the model first")

    g = proto.graph
    reads = {r.node: r for r in cut.shape_reads}
    nodes = [reads[i].apply(g.node[i]) if i in reads else g.node[i] for i in cut.nodes]
    new_inputs = [value_info(t.name) for t in cut.inputs]
    new_outputs = [value_info(t.name) for t in cut.outputs]
    wanted = set(cut.initializers)
    initializers = _inline_weights(g, wanted, source)
    sparse = [t for t in g.sparse_initializer if t.values.name in wanted]
    if proto.ir_version < 4:  # before IR 4 every initializer must also be a graph input
        declared = {vi.name for vi in new_inputs}
        new_inputs += [onnx.helper.make_tensor_value_info(t.name, t.data_type, t.dims)
                       for t in initializers if t.name not in declared]
    boundary = {t.name for t in (*cut.inputs, *cut.outputs)}
    inner = [value_info(name) for i in cut.nodes for name in g.node[i].output
             if name and name not in boundary and name in infos]
    new_graph = onnx.helper.make_graph(
        nodes, f"{g.name or 'graph'}_cut", new_inputs, new_outputs,
        initializer=initializers, doc_string=g.doc_string, value_info=inner,
        sparse_initializer=sparse)
    out = onnx.ModelProto()
    out.ir_version = max(proto.ir_version, 3)  # IR 1-2 had no opset_import, which we keep
    out.opset_import.extend(proto.opset_import)
    out.producer_name = proto.producer_name
    out.producer_version = proto.producer_version
    out.domain = proto.domain
    out.model_version = proto.model_version
    out.doc_string = proto.doc_string
    onnx.helper.set_model_props(out, {**{p.key: p.value for p in proto.metadata_props},
                                      "onnxstudio.cut_from": source.name})
    out.functions.extend(_used_functions(proto, nodes))
    out.graph.CopyFrom(new_graph)
    return out


def write_cut(model: Model, cut: Cut, dest: str | Path, *, external: bool | None = None,
              threshold: int = EXTERNAL_THRESHOLD, protect: Iterable[str | Path] = (),
              known: Mapping[str, TensorType] | None = None, check: bool = True,
              proto: onnx.ModelProto | None = None,
              inferred: onnx.ModelProto | None = None) -> WrittenCut:
    """Write the sub-model to a NEW file, atomically, and check it with onnx.checker.

    ``external``: keep weights in ``DEST.data`` beside it; ``None`` decides by size
    (``threshold``); ``proto`` and ``inferred``: the model's proto, read and shape-inferred
    once for several cuts. The model's own file, its external data and ``protect`` (other
    open files) are refused as destinations. Everything is written into a temporary
    folder beside ``dest`` and checked there; only then renamed into place.
    """
    dest = Path(dest).expanduser()
    check_destination(dest, protected_paths(model, protect), CutError)
    sub = build_cut_proto(model, cut, proto=proto, known=known, inferred=inferred)
    total = sum(t.ByteSize() for t in sub.graph.initializer)
    if external is None:
        external = total > threshold
    external = external or sub.ByteSize() > PROTOBUF_SAFE

    def checked(path: Path) -> None:
        check_model_file(path, CutError, "the sub-model")

    data_path = write_model_file(sub, dest, external=external, error=CutError,
                                 check=checked if check else None)
    return WrittenCut(dest, data_path, total)
