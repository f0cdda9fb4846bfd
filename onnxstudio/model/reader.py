"""Read a ModelProto into the plain Graph model: values with producers and consumers,
nested If/Loop/Scan bodies with what they capture, local functions, schemas, weights.

Written for 100k-node graphs: each protobuf field access costs about a microsecond, so
the loop touches each node's fields once, converts each distinct TypeProto once (keyed
by its serialised bytes), and creates Values only for names the graph uses. Inferred
shapes can be applied afterwards (see inferred.py), so a window can draw the graph
before onnx's shape inference has finished.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from onnxstudio.model.graph import (
    NO_BODIES,
    NO_METADATA,
    Attribute,
    Function,
    Graph,
    Model,
    Node,
    SchemaInfo,
    TensorSummary,
    TensorType,
    Value,
)
from onnxstudio.model.inferred import apply_inferred_types
from onnxstudio.model.onnx_core import AttributeProto, TensorProto
from onnxstudio.model.quantized import unpacked_parameters
from onnxstudio.model.schemas import normalize_domain, resolve_schema
from onnxstudio.model.typeproto import UNKNOWN as _UNKNOWN
from onnxstudio.model.typeproto import initializer_info, tensor_summary, tensor_type

if TYPE_CHECKING:
    import onnx

_ATTR_TYPE_NAMES = {v: k for k, v in AttributeProto.AttributeType.items()}
_SUMMARY_KEY_BYTES = 1024


@dataclass
class _Context:
    """What every graph in one model shares while it is being read."""

    opsets: dict[str, int]
    function_keys: set[tuple[str, str]]
    parameters: int = 0
    weight_bytes: int = 0
    unknown_ops: set[tuple[str, str]] = field(default_factory=set)
    type_cache: dict[bytes, TensorType] = field(default_factory=dict)
    # (domain, op_type) of the main graph and its bodies, not of local functions: what
    # the opset-import warnings check, without walking every node again.
    graph_ops: set[tuple[str, str]] = field(default_factory=set)
    in_function: bool = False
    summary_cache: dict[bytes, TensorSummary] = field(default_factory=dict)

    def type_of(self, type_proto: onnx.TypeProto) -> TensorType:
        """``tensor_type`` once per distinct TypeProto: a graph has few distinct types."""
        key = type_proto.SerializeToString()
        found = self.type_cache.get(key)
        if found is None:
            found = self.type_cache[key] = tensor_type(type_proto)
        return found

    def summary_of(self, tensor: onnx.TensorProto) -> TensorSummary:
        """Constant nodes repeat a few small tensors (bert96: 2,592 of them, 10 distinct),
        so each small one is summarised once; large ones are not worth serialising."""
        if tensor.ByteSize() > _SUMMARY_KEY_BYTES:
            return tensor_summary(tensor)
        key = tensor.SerializeToString()
        found = self.summary_cache.get(key)
        if found is None:
            found = self.summary_cache[key] = tensor_summary(tensor)
        return found


def _attribute(attr: onnx.AttributeProto, ctx: _Context) -> Attribute:
    kind = _ATTR_TYPE_NAMES.get(attr.type, str(attr.type))
    if attr.ref_attr_name:
        return Attribute(attr.name, kind, f"@{attr.ref_attr_name}")
    t = attr.type
    value: object
    if t == AttributeProto.INT:
        value = attr.i
    elif t == AttributeProto.FLOAT:
        value = attr.f
    elif t == AttributeProto.STRING:
        value = attr.s.decode("utf-8", "replace")
    elif t == AttributeProto.INTS:
        value = list(attr.ints)
    elif t == AttributeProto.FLOATS:
        value = list(attr.floats)
    elif t == AttributeProto.STRINGS:
        value = [s.decode("utf-8", "replace") for s in attr.strings]
    elif t == AttributeProto.TENSOR:
        value = ctx.summary_of(attr.t)
    elif t == AttributeProto.TENSORS:
        value = [ctx.summary_of(x) for x in attr.tensors]
    elif t == AttributeProto.GRAPH:  # the key of the body in Node.subgraphs
        value = attr.name
    elif t == AttributeProto.GRAPHS:
        value = [f"{attr.name}[{i}]" for i in range(len(attr.graphs))]
    elif t == AttributeProto.TYPE_PROTO:
        value = tensor_type(attr.tp).describe()
    else:
        import onnx.helper  # the rare kinds (sparse tensors, type protos): all of onnx

        value = str(onnx.helper.get_attribute_value(attr))
    return Attribute(attr.name, kind, value)


def _build_graph(
    name: str,
    prefix: str,
    node_protos: Sequence[onnx.NodeProto],
    inputs: Iterable[tuple[str, TensorType]],
    outputs: Iterable[tuple[str, TensorType]],
    value_infos: Iterable[onnx.ValueInfoProto],
    initializers: Sequence[onnx.TensorProto],
    ctx: _Context,
    opsets: dict[str, int],
    count_weights: bool = True,
) -> Graph:
    graph = Graph(name=name, id_prefix=prefix)
    values = graph.values
    declared: list[str] = []
    for vi in value_infos:
        values[vi.name] = Value(vi.name, ctx.type_of(vi.type))
        declared.append(vi.name)
    for tensor in initializers:
        info = initializer_info(tensor)
        graph.initializers[tensor.name] = info
        values[tensor.name] = Value(
            tensor.name, TensorType(info.dtype, info.shape), kind="initializer")
        if count_weights:
            ctx.parameters += info.elements
            ctx.weight_bytes += info.nbytes
    for value_name, vtype in inputs:
        if value_name in graph.initializers:
            continue  # an initializer listed as input (IR < 4 style) is a weight, not an input
        graph.inputs.append(value_name)
        values[value_name] = Value(value_name, vtype, kind="input")
    first_read = _read_nodes(graph, node_protos, ctx, opsets)
    for value_name, vtype in outputs:
        value = values.setdefault(value_name, Value(value_name, vtype))
        if vtype.dtype is not None or vtype.shape is not None:
            value.type = vtype
        value.kind = "output"
        graph.outputs.append(value_name)
    graph.captured = _captured(graph, declared + first_read)
    return graph


def _read_nodes(graph: Graph, node_protos: Sequence[onnx.NodeProto], ctx: _Context,
                opsets: dict[str, int]) -> list[str]:
    """One Node per NodeProto, and the producer/consumer links of every value.

    Returns the names first met as a node's input (the candidates for captured values).
    Node and Value are built positionally: keywords and default factories cost a tenth
    of the loop on a 100k-node graph.
    """
    prefix, nodes, values = graph.id_prefix, graph.nodes, graph.values
    schemas: dict[tuple[str, str], tuple[SchemaInfo, tuple[str, str] | None]] = {}
    new_node, new_value, unknown = Node, Value, _UNKNOWN
    first_read: list[str] = []
    # Values read here. While reading, a value's consumers are a list (appended to);
    # at the end a tuple, which the collector stops tracking (a dict of lists per
    # value instead cost twice the time).
    reads: list[Value] = []
    for index, proto in enumerate(node_protos):
        node_id = f"{prefix}n{index}"
        key = (proto.domain, proto.op_type)
        known = schemas.get(key)
        if known is None:
            known = schemas[key] = _schema(key, ctx, opsets)
        # a slice copies a repeated field fastest (twice list()); a tuple of it is untracked
        node_inputs = tuple(proto.input[:])
        node_outputs = tuple(proto.output[:])
        node = new_node(node_id, index, proto.name, key[1], key[0], node_inputs, node_outputs,
                        (), NO_BODIES, known[1], NO_METADATA, proto.doc_string, known[0])
        if len(proto.attribute):
            node.attributes, node.subgraphs = _node_attributes(proto, node_id, ctx, opsets)
        if len(proto.metadata_props):
            node.metadata = {p.key: p.value for p in proto.metadata_props}
        nodes.append(node)
        for value_name in node_inputs:
            if value_name:
                value = values.get(value_name)
                if value is None:
                    value = values[value_name] = new_value(
                        value_name, unknown, "intermediate", None)
                    first_read.append(value_name)
                consumers = value.consumers
                if consumers:
                    consumers.append(index)  # type: ignore[attr-defined]
                else:
                    value.consumers = [index]  # type: ignore[assignment]
                    reads.append(value)
        for value_name in node_outputs:
            if value_name:
                value = values.get(value_name)
                if value is None:
                    values[value_name] = new_value(value_name, unknown, "intermediate", index)
                else:
                    value.producer = index
    for value in reads:
        value.consumers = tuple(value.consumers)
    if not ctx.in_function:
        ctx.graph_ops.update(schemas)
    return first_read


def _schema(key: tuple[str, str], ctx: _Context,
            opsets: dict[str, int]) -> tuple[SchemaInfo, tuple[str, str] | None]:
    domain, op_type = key
    function = key if key in ctx.function_keys else None
    schema = resolve_schema(op_type, domain, opsets.get(normalize_domain(domain)))
    if not schema.known and function is None:
        ctx.unknown_ops.add(key)
    return schema, function


def _node_attributes(proto: onnx.NodeProto, node_id: str, ctx: _Context,
                     opsets: dict[str, int]
                     ) -> tuple[tuple[Attribute, ...], Mapping[str, Graph]]:
    attributes: list[Attribute] = []
    subgraphs: dict[str, Graph] = {}
    for attr in proto.attribute:
        kind = attr.type
        if kind == AttributeProto.GRAPH:
            subgraphs[attr.name] = _body(attr.g, f"{node_id}/{attr.name}/", ctx, opsets)
        elif kind == AttributeProto.GRAPHS:
            for i, g in enumerate(attr.graphs):
                body_key = f"{attr.name}[{i}]"
                subgraphs[body_key] = _body(g, f"{node_id}/{body_key}/", ctx, opsets)
        elif kind == AttributeProto.TENSOR and proto.op_type == "Constant" and \
                attr.name == "value" and proto.domain in ("", "ai.onnx"):
            _count_constant(attr.t, ctx)
        attributes.append(_attribute(attr, ctx))
    return tuple(attributes), subgraphs or NO_BODIES


_WEIGHT_DTYPES = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16,
                  TensorProto.DOUBLE}


def _count_constant(tensor: onnx.TensorProto, ctx: _Context) -> None:
    """A float Constant of more than one value is a weight (exporters put If/Loop
    branches' and local functions' weights there); scalars and shapes are not."""
    info = initializer_info(tensor)
    if tensor.data_type in _WEIGHT_DTYPES and info.elements > 1:
        ctx.parameters += info.elements
        ctx.weight_bytes += info.nbytes


def _captured(graph: Graph, candidates: list[str]) -> list[str]:
    """Values read here but defined nowhere here come from the enclosing scope, as do
    those that nested bodies capture and this graph does not define either.

    Only ``candidates`` can be such values (declared by value_info, or first met as an
    input): in the order they entered ``graph.values``, so the list keeps that order.
    """
    values = graph.values
    captured: dict[str, None] = {}
    for name in candidates:
        value = values[name]
        if value.kind == "intermediate" and value.producer is None and value.consumers:
            value.kind = "captured"
            captured[name] = None
    for node in graph.nodes:
        for body in node.subgraphs.values():
            for outer in body.captured:
                if outer not in values:
                    values[outer] = Value(outer, _UNKNOWN, "captured")
                    captured[outer] = None
    return list(captured)


def _body(proto: onnx.GraphProto, prefix: str, ctx: _Context, opsets: dict[str, int]) -> Graph:
    return _build_graph(
        proto.name, prefix, proto.node,
        [(vi.name, ctx.type_of(vi.type)) for vi in proto.input],
        [(vi.name, ctx.type_of(vi.type)) for vi in proto.output],
        proto.value_info, proto.initializer, ctx, opsets,
    )


def _function(proto: onnx.FunctionProto, ctx: _Context) -> Function:
    opsets = {normalize_domain(o.domain): o.version for o in proto.opset_import}
    body = _build_graph(
        proto.name, f"f:{proto.domain}:{proto.name}/", proto.node,
        [(n, _UNKNOWN) for n in proto.input], [(n, _UNKNOWN) for n in proto.output],
        getattr(proto, "value_info", ()), (), ctx, opsets or ctx.opsets, count_weights=False,
    )
    return Function(
        domain=proto.domain, name=proto.name, inputs=list(proto.input),
        outputs=list(proto.output), attribute_names=list(proto.attribute),
        opset_imports=opsets, body=body, doc_string=proto.doc_string,
    )


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Building allocates a few objects per node and value, and no garbage; with the
    cyclic collector on it rescans them again and again (on dag100k, 0.5 s of a 1.3 s
    build). The app's workers and the CLI pause it already; other callers get the same."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def build_model(
    proto: onnx.ModelProto,
    path: Path,
    *,
    inferred: onnx.ModelProto | None = None,
    external_data: bool = False,
    warnings: list[str] | None = None,
) -> Model:
    """Build the Model; ``inferred`` is the same model after onnx shape inference, if any."""
    with _collector_paused():
        model = _build(proto, path, external_data, list(warnings or []))
        if inferred is not None:
            apply_inferred_types(model, inferred)
    return model


def _build(proto: onnx.ModelProto, path: Path, external_data: bool,
           warnings: list[str]) -> Model:
    opsets = {normalize_domain(o.domain): o.version for o in proto.opset_import}
    ctx = _Context(opsets=opsets, function_keys={(f.domain, f.name) for f in proto.functions})
    g = proto.graph
    graph = _build_graph(
        g.name, "", g.node,
        [(vi.name, ctx.type_of(vi.type)) for vi in g.input],
        [(vi.name, ctx.type_of(vi.type)) for vi in g.output],
        g.value_info, g.initializer, ctx, opsets,
    )
    graph.doc_string = g.doc_string
    ctx.in_function = True
    functions = [_function(f, ctx) for f in proto.functions]
    used_domains = {normalize_domain(domain) for domain, _ in ctx.graph_ops}
    for domain in sorted(used_domains - set(opsets) - {f.domain for f in functions}):
        warnings.append(f"operators of domain '{domain or 'ai.onnx'}' are used "
                        "but the model imports no opset for it")
    for domain, op_type in sorted(ctx.unknown_ops):
        where = f"custom domain '{domain}'" if domain else "the default domain"
        warnings.append(f"{op_type}: no schema known to onnx in {where}")
    return Model(
        path=path,
        file_size=path.stat().st_size if path.exists() else 0,
        ir_version=proto.ir_version,
        producer_name=proto.producer_name,
        producer_version=proto.producer_version,
        domain=proto.domain,
        model_version=proto.model_version,
        doc_string=proto.doc_string,
        opset_imports=opsets,
        metadata={p.key: p.value for p in proto.metadata_props},
        graph=graph,
        functions=functions,
        external_data=external_data,
        parameters=unpacked_parameters(graph, ctx.parameters),
        weight_bytes=ctx.weight_bytes,
        warnings=warnings,
    )
