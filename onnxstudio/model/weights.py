"""Read one initializer's values on demand and describe them (statistics, histogram).

The Model keeps only a summary of each weight, so opening a 20 GB model stays fast; the
values are read here when the user asks for them, external data included, and only from
inside the model's folder (read_model_proto refuses anything else). Types numpy cannot
compute with (bfloat16, float8, int4 come from onnx as ml_dtypes) are widened for display:
bfloat16 is stored as the upper 16 bits of a float32, so widening is exact.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from onnxstudio.errors import OnnxStudioError
from onnxstudio.model.external import model_folder
from onnxstudio.model.load import read_model_proto

HISTOGRAM_BINS = 64


class WeightReadError(OnnxStudioError):
    """An initializer's values could not be read (missing, unreadable external data...)."""


def _all_initializers(graph: onnx.GraphProto, out: dict[str, onnx.TensorProto]) -> None:
    for tensor in graph.initializer:
        out.setdefault(tensor.name, tensor)
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                _all_initializers(attr.g, out)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for body in attr.graphs:
                    _all_initializers(body, out)


class WeightStore:
    """One model file's initializers, parsed once (without external data) and read lazily.

    Thread-safe: the panel reads in a worker thread while the user may click another weight.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._tensors: dict[str, onnx.TensorProto] | None = None
        self._lock = threading.Lock()

    def _index(self) -> dict[str, onnx.TensorProto]:
        with self._lock:
            if self._tensors is None:
                proto, _external = read_model_proto(self.path)
                tensors: dict[str, onnx.TensorProto] = {}
                _all_initializers(proto.graph, tensors)
                self._tensors = tensors
            return self._tensors

    def names(self) -> list[str]:
        return list(self._index())

    def read(self, name: str) -> np.ndarray:
        """The initializer's values as onnx gives them (ml_dtypes for bfloat16/float8/int4)."""
        tensor = self._index().get(name)
        if tensor is None:
            raise WeightReadError(f"{self.path.name}: no initializer named '{name}'")
        try:
            return numpy_helper.to_array(tensor, base_dir=str(model_folder(self.path)))
        except (OSError, ValueError, TypeError) as exc:
            raise WeightReadError(
                f"{self.path.name}: cannot read initializer '{name}' ({exc})") from exc


def display_array(array: np.ndarray) -> np.ndarray:
    """A numpy-native view of ``array`` that prints and computes correctly.

    ml_dtypes floats (bfloat16, float8...) become float32 (exact widening); ml_dtypes
    integers (int4, uint4...) become int8/uint8; everything else is returned unchanged.
    """
    kind = array.dtype.kind
    if kind in "biufcUSOM":
        return array
    name = array.dtype.name
    if name.startswith(("uint", "int")):
        return array.astype(np.uint8 if name.startswith("u") else np.int8)
    return array.astype(np.float32)


@dataclass(frozen=True)
class TensorStats:
    """Summary statistics of one tensor; NaN/Inf are excluded from min/max/mean/std."""

    elements: int
    minimum: float | None
    maximum: float | None
    mean: float | None
    std: float | None
    zeros: int
    nans: int
    infs: int
    histogram: np.ndarray  # counts per bin
    edges: np.ndarray  # HISTOGRAM_BINS + 1 bin edges

    @property
    def zero_share(self) -> float:
        return self.zeros / self.elements if self.elements else 0.0


def tensor_stats(array: np.ndarray, bins: int = HISTOGRAM_BINS) -> TensorStats:
    """Statistics of a numeric array (call display_array first); strings get counts only."""
    values = display_array(np.asarray(array))
    n = int(values.size)
    empty = np.zeros(0)
    if values.dtype.kind not in "biufc" or n == 0:
        return TensorStats(n, None, None, None, None, 0, 0, 0, empty, empty)
    if values.dtype.kind == "c":
        values = np.abs(values)
    flat = values.ravel()
    zeros = int(n - np.count_nonzero(flat))
    nans = infs = 0
    if flat.dtype.kind == "f":
        finite_mask = np.isfinite(flat)
        nans = int(np.isnan(flat).sum())
        infs = int(n - nans - finite_mask.sum())
        if nans or infs:
            flat = flat[finite_mask]
    if flat.size == 0:
        return TensorStats(n, None, None, None, None, zeros, nans, infs, empty, empty)
    wide = flat.astype(np.float64)
    lo, hi = float(wide.min()), float(wide.max())
    if flat.dtype.kind in "biu" and hi > lo:
        # Whole numbers of integer values per bin: int8 weights alias on uneven bins.
        span = int(hi - lo) + 1
        width = -(-span // bins)
        count = -(-span // width)
        counts, edges = np.histogram(wide, bins=count,
                                     range=(lo - 0.5, lo - 0.5 + count * width))
    else:
        counts, edges = np.histogram(wide, bins=bins, range=(lo, hi) if hi > lo else None)
    return TensorStats(
        elements=n, minimum=lo, maximum=hi, mean=float(wide.mean()), std=float(wide.std()),
        zeros=zeros, nans=nans, infs=infs, histogram=counts, edges=edges)


def as_matrix(array: np.ndarray) -> np.ndarray:
    """A 2-D view for a table: scalars 1×1, vectors one column, N-D (a,b,...,z) as rows
    of the last axis, i.e. (a·b·…, z), so every value appears exactly once."""
    if array.ndim == 0:
        return array.reshape(1, 1)
    if array.ndim == 1:
        return array.reshape(-1, 1)
    return array.reshape(-1, array.shape[-1])


def row_index_label(shape: tuple[int, ...], row: int) -> str:
    """The N-D index of a matrix row from as_matrix, e.g. '[0, 2, 5, :]'."""
    if len(shape) <= 1:
        return f"[{row}]"
    lead = np.unravel_index(row, shape[:-1])
    return "[" + ", ".join(str(int(i)) for i in lead) + ", :]"


def save_npy(array: np.ndarray, path: str | Path) -> Path:
    """Save the display form (bfloat16 etc. widened so plain numpy can load it)."""
    path = Path(path)
    np.save(path, display_array(array), allow_pickle=False)
    return path
