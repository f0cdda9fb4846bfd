"""What a run was fed: each input's dtype, shape and range, as the answer shows it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class FedTensor:
    name: str
    dtype: str
    shape: list[int]
    low: float
    high: float

    def describe(self) -> str:
        return f"{self.name}: {self.dtype}{self.shape} range [{self.low:.4g}, {self.high:.4g}]"


def fed_tensors(feeds: dict[str, Any]) -> list[FedTensor]:
    """What each input was fed, for the answer's "fed" line."""
    out = []
    for name, value in feeds.items():
        if not isinstance(value, np.ndarray):  # a test set's sequence, map or empty optional
            size = [len(value)] if isinstance(value, list | dict) else []
            out.append(FedTensor(name, type(value).__name__, size, 0.0, 0.0))
            continue
        arr = value
        numeric = arr.size and arr.dtype.kind in "fiub"
        lo = float(arr.min()) if numeric else 0.0
        hi = float(arr.max()) if numeric else 0.0
        out.append(FedTensor(name, str(arr.dtype), [int(d) for d in arr.shape], lo, hi))
    return out
