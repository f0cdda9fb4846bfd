"""onnxruntime's own operator schemas (``com.microsoft`` and friends), loaded on first use.

onnx knows only the standard domains; the contrib operators that onnxruntime's
optimisers and quantisers write (QLinearAdd, SkipLayerNormalization, BeamSearch, ...)
are described by onnxruntime itself. Reading them costs an import of onnxruntime, so
it happens once, and only when a model uses a domain onnx does not define.
"""

from __future__ import annotations

import threading
from typing import Any

_LOCK = threading.Lock()
_TABLE: dict[tuple[str, str], list[Any]] | None = None


def _table() -> dict[tuple[str, str], list[Any]]:
    global _TABLE
    with _LOCK:
        if _TABLE is None:
            table: dict[tuple[str, str], list[Any]] = {}
            try:
                from onnxruntime.capi import onnxruntime_pybind11_state as ort
                schemas = ort.get_all_operator_schema()
            except (ImportError, AttributeError, RuntimeError):
                schemas = []
            for schema in schemas:
                table.setdefault((schema.domain, schema.name), []).append(schema)
            for versions in table.values():
                versions.sort(key=lambda s: s.since_version)
            _TABLE = table
        return _TABLE


def ort_schema(op_type: str, domain: str, opset: int | None) -> Any | None:
    """onnxruntime's schema for ``op_type`` in ``domain`` in force at ``opset``
    (None: the newest), or None when onnxruntime does not define it."""
    versions = _table().get((domain, op_type))
    if not versions:
        return None
    if opset is None:
        return versions[-1]
    fit = [s for s in versions if s.since_version <= opset]
    return fit[-1] if fit else versions[-1]
