"""Concrete tensor sizes for the cost table: symbolic input dims set (1, or ``--dim``),
then onnx's shape inference with data propagation, so that sizes computed by
Shape -> Gather -> Concat -> Reshape chains become numbers too (BERT-12: 408 values with
symbolic dims under plain inference, 3 with it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from onnxstudio.model import onnx_core
from onnxstudio.model.graph import Dim, TensorType
from onnxstudio.model.guard import unsafe_for_inference
from onnxstudio.model.inferred import inferred_types
from onnxstudio.model.typeproto import UNKNOWN, tensor_type

if TYPE_CHECKING:
    import onnx


@dataclass
class Sizes:
    """Value name -> concrete type, and how every dimension that was not a number got one."""

    types: dict[str, TensorType | None]
    dims: dict[str, int]  # symbolic name -> size used
    given: set[str] = field(default_factory=set)  # names the caller sized (--dim)
    guessed: set[str] = field(default_factory=set)  # values with a dim taken as 1
    unknown: set[str] = field(default_factory=set)  # values with no shape at all
    problem: str | None = None  # shape inference failed (then declared types only)

    def resolve(self, dim: Dim, value: str) -> int:
        """A dimension as a number: symbolic ones by name (1 when not given), unknown 1."""
        if isinstance(dim, int):
            return dim
        if dim is None:
            self.guessed.add(value)
            return 1
        if dim not in self.dims:
            self.dims[dim] = 1
        return self.dims[dim]

    def assumptions(self) -> list[str]:
        """What the figures assume about sizes, one sentence each."""
        out = []
        for name, size in self.dims.items():
            how = "given" if name in self.given else f"symbolic; set it with --dim {name}=SIZE"
            out.append(f"dimension {name} = {size} ({how})")
        if self.guessed:
            out.append(f"{len(self.guessed)} value(s) with unknown dimensions count them as 1")
        if self.unknown:
            first = sorted(self.unknown)[0]
            out.append(f"{len(self.unknown)} value(s) have no inferred shape (e.g. {first}): "
                       "they count as empty, so the nodes around them may show 0")
        if self.problem:
            out.append(self.problem)
        return out


def concrete_sizes(proto: onnx.ModelProto, given: Mapping[str, int] | None = None) -> Sizes:
    """Fix the graph inputs' symbolic dims (``given`` or 1) on a copy of ``proto`` and
    infer every value's type from there. ``proto`` itself is not changed."""
    given = dict(given or {})
    copy = type(proto)()
    copy.CopyFrom(proto)
    sizes = _sizes(fix_input_dims(copy, given), given)
    inferred, sizes.problem = infer_sized(copy)
    if inferred is not None:
        sized_types(sizes, inferred)
    return sizes


def fix_input_dims(proto: onnx.ModelProto, given: Mapping[str, int]) -> dict[str, int]:
    """Set ``proto``'s graph inputs' symbolic dims to ``given`` sizes (else 1), in place;
    the sizes used, by dim name."""
    dims: dict[str, int] = {}
    initializers = {t.name for t in proto.graph.initializer}
    for vi in proto.graph.input:
        if vi.name in initializers or not vi.type.HasField("tensor_type"):
            continue
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_value"):
                continue
            name = d.dim_param
            size = given.get(name, 1) if name else 1
            if name:
                dims[name] = size
            d.Clear()
            d.dim_value = size
    return dims


def infer_sized(proto: onnx.ModelProto) -> tuple[onnx.ModelProto | None, str | None]:
    """onnx's inference with data propagation of a model whose inputs are sized
    (inferred model, or None and why not)."""
    unsafe = unsafe_for_inference(proto)
    if unsafe:
        return None, unsafe
    try:
        return onnx_core.infer_shapes(proto, strict_mode=False, data_prop=True), None
    except Exception as exc:  # onnx raises several types; declared types still serve
        return None, f"shape inference failed: {str(exc).strip().splitlines()[0][:200]}"


def _sizes(dims: dict[str, int], given: dict[str, int]) -> Sizes:
    return Sizes({}, {**dims, **{k: v for k, v in given.items() if k not in dims}},
                 set(given))


def sized_types(sizes: Sizes, inferred: onnx.ModelProto) -> None:
    """``sizes.types`` from an inferred model (the main graph's values and its inputs as
    they were sized: bodies are not walked)."""
    sizes.types = inferred_types(inferred, nested=False)
    for vi in inferred.graph.input:  # the inputs as fixed above
        found = tensor_type(vi.type)
        sizes.types[vi.name] = None if found == UNKNOWN else found


def sizes_apart(path: Path, data: bytes | None, given: Mapping[str, int] | None = None,
                kill_on: Callable[[Callable[[], None]], object] | None = None) -> Sizes:
    """``concrete_sizes`` of the model file at ``path`` (or its edited ``data``, which
    must not refer to external data), inferred in a child process: onnx's C++ inference
    holds the GIL for its whole run (dag100k: ~0.6 s), which would freeze the window
    from a worker thread. Only the sized types come back. ``kill_on`` (a cancel token's
    ``watch``) stops the child; Cancelled is raised then."""
    from onnxstudio.model.infer_child import ChildInference

    given = dict(given or {})
    child = ChildInference(path, sizes=given, data=data, kill_on=kill_on)
    types, problem = child.result()
    sizes = _sizes(child.dims, given)
    sizes.problem = problem
    if types is not None:
        sized_types(sizes, types)
    return sizes
