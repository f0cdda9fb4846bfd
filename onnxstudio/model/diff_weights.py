"""Compare two weights by shape, dtype and content, one pair in memory at a time."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from onnxstudio.model.graph import InitializerInfo
from onnxstudio.model.weights import WeightReadError, WeightStore, display_array


@dataclass(frozen=True)
class WeightSide:
    """One side of a weight comparison: what it is and a fingerprint of its bytes."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    digest: str | None = None  # blake2b of the raw values; None when unread
    mean: float | None = None
    std: float | None = None

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self.dtype, "shape": list(self.shape),
                "hash": self.digest, "mean": self.mean, "std": self.std}

    def describe(self) -> str:
        shape = "×".join(str(d) for d in self.shape) or "scalar"
        return f"{self.dtype}[{shape}]"


@dataclass(frozen=True)
class WeightDiff:
    a: WeightSide
    b: WeightSide
    equal: bool
    max_abs: float | None = None  # over equal shapes only; None when not comparable
    error: str | None = None  # why the content could not be read

    def summary(self) -> str:
        if self.error:
            return self.error
        if (self.a.dtype, self.a.shape) != (self.b.dtype, self.b.shape):
            return f"{self.a.describe()} → {self.b.describe()}"
        return "identical" if self.equal else f"max |a−b| = {self.max_abs:.4g}"


def _digest(array: np.ndarray) -> str:
    return hashlib.blake2b(np.ascontiguousarray(array).tobytes(), digest_size=8).hexdigest()


def _side(info: InitializerInfo, array: np.ndarray | None, digest: str | None = None
          ) -> WeightSide:
    """The side's description; statistics only for weights that differ (they cost more
    than the hash, and nobody reads them for an identical pair)."""
    if array is None:
        return WeightSide(info.name, info.dtype, info.shape)
    values = display_array(array)
    mean = std = None
    if values.dtype.kind in "biuf" and values.size:
        wide = values.astype(np.float64, copy=False)
        mean, std = float(np.nanmean(wide)), float(np.nanstd(wide))
    return WeightSide(info.name, info.dtype, info.shape, digest, mean, std)


def compare_weights(info_a: InitializerInfo, info_b: InitializerInfo,
                    store_a: WeightStore | None, store_b: WeightStore | None) -> WeightDiff:
    """Shape and dtype always; content when both stores are given (then both arrays are
    read, fingerprinted, compared and dropped before the next pair)."""
    same_kind = (info_a.dtype, info_a.shape) == (info_b.dtype, info_b.shape)
    if store_a is None or store_b is None or not same_kind:
        # a float32 weight against its int4 blocks differs whatever the values: reading
        # both was 3 GB and 25 s on an int4-vs-fp32 LLM diff, for no more information
        return WeightDiff(_side(info_a, None), _side(info_b, None), same_kind)
    try:
        array_a = store_a.read(info_a.name)
        array_b = store_b.read(info_b.name)
    except WeightReadError as exc:
        return WeightDiff(_side(info_a, None), _side(info_b, None), False, error=str(exc))
    digest_a, digest_b = _digest(array_a), _digest(array_b)
    if same_kind and digest_a == digest_b:
        return WeightDiff(WeightSide(info_a.name, info_a.dtype, info_a.shape, digest_a),
                          WeightSide(info_b.name, info_b.dtype, info_b.shape, digest_b),
                          True, 0.0)
    side_a, side_b = _side(info_a, array_a, digest_a), _side(info_b, array_b, digest_b)
    if not same_kind:
        return WeightDiff(side_a, side_b, False)
    va, vb = display_array(array_a), display_array(array_b)
    max_abs = None
    if va.dtype.kind in "biuf" and vb.dtype.kind in "biuf" and va.size:
        delta = np.abs(va.astype(np.float64) - vb.astype(np.float64))
        max_abs = float(np.nanmax(delta)) if not np.isnan(delta).all() else float("nan")
    return WeightDiff(side_a, side_b, False, max_abs)
