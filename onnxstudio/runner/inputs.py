"""What a model's inputs look like, and the non-image ways to feed them: .npy files, random data."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import onnx

from onnxstudio.errors import InputError
from onnxstudio.runner.output_kinds import writers

# onnx TensorProto.DataType -> numpy dtype name (strings stay as object arrays).
_ONNX_DTYPES: dict[int, str] = {
    1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
    8: "object", 9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64",
}
# onnxruntime's type strings, e.g. "tensor(float)".
_ORT_DTYPES: dict[str, str] = {
    "float": "float32", "uint8": "uint8", "int8": "int8", "uint16": "uint16", "int16": "int16",
    "int32": "int32", "int64": "int64", "string": "object", "bool": "bool",
    "float16": "float16", "double": "float64", "uint32": "uint32", "uint64": "uint64",
}

Dim = int | str | None
_CLASSIFIERS = ("ZipMap", "LinearClassifier", "SVMClassifier", "TreeEnsembleClassifier")


@dataclass(frozen=True)
class TensorSpec:
    """One graph input or output as the runner needs it (a plain record, no onnx objects)."""

    name: str
    type: str  # "tensor", "sequence", "map", "optional" or "other"
    dtype: str | None  # numpy dtype name for tensors ("object" for strings), else None
    shape: tuple[Dim, ...] = ()
    denotations: tuple[str, ...] = ()
    type_denotation: str = ""

    @property
    def is_tensor(self) -> bool:
        return self.type == "tensor" and self.dtype is not None

    def describe(self) -> str:
        dims = ", ".join("?" if d is None else str(d) for d in self.shape)
        if self.type != "tensor":
            return f"{self.name}: {self.type}"
        return f"{self.name}: {self.dtype}[{dims}]"


@dataclass
class ModelInfo:
    """Inputs, outputs and metadata read from the model file (no session needed)."""

    path: Path
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]
    metadata: dict[str, str] = field(default_factory=dict)
    class_labels: list[str] | None = None  # from a ZipMap / classifier node
    producer: str = ""  # producer_name and _version: evidence of the training framework
    producer_version: str = ""
    opset: int = 0  # the default domain's opset: the export's era
    distributions: frozenset[str] = frozenset()  # outputs a Softmax writes: probabilities
    producers: dict[str, str] = field(default_factory=dict)  # output -> op that wrote it
    dim_hints: dict[str, int] = field(default_factory=dict)  # e.g. an LLM cache's head size


def _spec_from_value_info(vi: Any) -> TensorSpec:
    t = vi.type
    kind = t.WhichOneof("value")
    if kind == "tensor_type":
        tt = t.tensor_type
        dims: list[Dim] = []
        dens: list[str] = []
        if tt.HasField("shape"):
            for d in tt.shape.dim:
                if d.HasField("dim_value"):
                    dims.append(int(d.dim_value))
                elif d.HasField("dim_param"):
                    dims.append(d.dim_param)
                else:
                    dims.append(None)
                dens.append(d.denotation)
        return TensorSpec(vi.name, "tensor", _ONNX_DTYPES.get(tt.elem_type),
                          tuple(dims), tuple(dens), t.denotation)
    kinds = {"sequence_type": "sequence", "map_type": "map", "optional_type": "optional"}
    return TensorSpec(vi.name, kinds.get(kind or "", "other"), None)


def read_model_info(path: str | Path, model_bytes: bytes | None = None) -> ModelInfo:
    """Read the graph's real inputs (initializers excluded, as old IR-3 models list them too);
    ``model_bytes``: an edited in-memory copy of ``path`` to read instead."""
    import onnx

    from onnxstudio.model.load import read_model_proto

    p = Path(path)
    if model_bytes is None:
        proto, _external = read_model_proto(p)  # the one loader: checked before any session
    else:
        try:
            proto = onnx.load_from_string(model_bytes)
        except Exception as exc:  # parse errors surface when the session is created
            raise InputError(f"{p.name}: cannot read model ({exc})") from exc
    return model_info(p, proto)


def model_info(path: Path, proto: onnx.ModelProto) -> ModelInfo:
    """The ModelInfo of ``proto``, already read from ``path`` (no second parse)."""
    inits = {i.name for i in proto.graph.initializer}
    inputs = [_spec_from_value_info(v) for v in proto.graph.input if v.name not in inits]
    outputs = [_spec_from_value_info(v) for v in proto.graph.output]
    metadata = {m.key: m.value for m in proto.metadata_props}
    labels: list[str] | None = None
    for node in proto.graph.node:
        if node.op_type in _CLASSIFIERS:
            for a in node.attribute:
                if a.name == "classlabels_strings" and a.strings:
                    labels = [s.decode("utf-8", "replace") for s in a.strings]
                elif a.name in ("classlabels_int64s", "classlabels_ints") and a.ints:
                    labels = [str(i) for i in a.ints]
            if labels:
                break
    opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), 0)
    out_names = {o.name for o in proto.graph.output}
    distributions = frozenset(name for n in proto.graph.node if n.op_type == "Softmax"
                              for name in n.output if name in out_names)
    from onnxstudio.runner.llm_dims import dim_hints

    return ModelInfo(path, inputs, outputs, metadata, labels, proto.producer_name,
                     proto.producer_version, int(opset), distributions, writers(proto),
                     dim_hints(path, proto, inputs))


def spec_from_ort(arg: Any) -> TensorSpec:
    """TensorSpec from an onnxruntime NodeArg (used when only a session is at hand)."""
    type_str: str = arg.type
    shape = tuple(arg.shape or ())
    if type_str.startswith("tensor("):
        return TensorSpec(arg.name, "tensor", _ORT_DTYPES.get(type_str[7:-1]), shape)
    kind = {"seq(": "sequence", "map(": "map"}.get(type_str[:4], "other")
    return TensorSpec(arg.name, kind, None, shape)


def load_npy(path: str | Path, spec: TensorSpec | None = None) -> np.ndarray:
    """Load a .npy array (no pickles) and check it against the input it is meant for."""
    p = Path(path)
    try:
        arr = np.load(p, allow_pickle=False)
    except FileNotFoundError as exc:
        raise InputError(f"{p.name}: file not found") from exc
    except (ValueError, OSError, EOFError) as exc:
        raise InputError(f"{p.name}: not a readable .npy array ({exc})") from exc
    if not isinstance(arr, np.ndarray):
        raise InputError(f"{p.name}: expected one array, found an archive")
    if spec is None:
        return arr
    want = np.dtype(spec.dtype) if spec.dtype else None
    if want is not None and arr.dtype != want:
        if np.can_cast(arr.dtype, want, casting="same_kind"):
            arr = arr.astype(want)
        else:
            raise InputError(f"{p.name}: dtype {arr.dtype} does not fit input "
                             f"{spec.name!r} ({want})")
    if spec.shape and len(spec.shape) != arr.ndim:
        raise InputError(f"{p.name}: shape {list(arr.shape)} has rank {arr.ndim}, input "
                         f"{spec.name!r} wants rank {len(spec.shape)} ({spec.describe()})")
    for have, d in zip(arr.shape, spec.shape, strict=False):
        if isinstance(d, int) and d > 0 and have != d:
            raise InputError(f"{p.name}: shape {list(arr.shape)} does not fit input "
                             f"{spec.describe()}")
    return arr
