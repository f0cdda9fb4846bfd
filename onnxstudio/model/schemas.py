"""Resolve each operator's schema under the model's opset imports, via onnx.defs.

Cached per (domain, op_type, opset): a 100k-node graph uses a few dozen distinct
operators, and onnx's schema lookup is the slow part of extraction otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Any

from onnxstudio.model.graph import SchemaInfo
from onnxstudio.model.onnx_core import SchemaError, defs
from onnxstudio.model.ort_schemas import ort_schema

# Domains whose operators onnx itself defines; anything else is a custom domain.
ONNX_DOMAINS = {"", "ai.onnx", "ai.onnx.ml", "ai.onnx.training", "ai.onnx.preview.training"}


def normalize_domain(domain: str) -> str:
    return "" if domain == "ai.onnx" else domain


def display_domain(domain: str) -> str:
    """The default domain written out, as `onnxstudio info` and the panels show it."""
    return "ai.onnx" if domain in ("", "ai.onnx") else domain


@lru_cache(maxsize=4096)
def resolve_schema(op_type: str, domain: str, opset: int | None) -> SchemaInfo:
    """The schema in force for ``op_type`` at ``opset`` (None: the newest) in ``domain``."""
    domain = normalize_domain(domain)
    custom = domain not in ONNX_DOMAINS
    try:
        latest = defs.get_schema(op_type, domain=domain)
    except SchemaError:
        return SchemaInfo(known=False, custom_domain=custom)
    if opset is None:
        schema = latest
    else:
        try:
            schema = defs.get_schema(op_type, max_inclusive_version=opset, domain=domain)
        except SchemaError:
            # The op exists, but only from a later opset than the model imports.
            return SchemaInfo(
                known=True, since_version=None, latest_version=latest.since_version,
                deprecated=latest.deprecated, doc=latest.doc or "", custom_domain=custom)
    return SchemaInfo(
        known=True,
        since_version=schema.since_version,
        latest_version=latest.since_version,
        deprecated=schema.deprecated,
        doc=schema.doc or "",
        custom_domain=custom,
    )


def operator_schema(op_type: str, domain: str, opset: int | None) -> Any | None:
    """The full schema (inputs, outputs, attributes, type constraints) for documentation:
    onnx's OpSchema, or for contrib domains onnxruntime's (same fields, a few spelled
    differently: ``typeStr``, ``_default_value``)."""
    domain = normalize_domain(domain)
    try:
        if opset is None:
            return defs.get_schema(op_type, domain=domain)
        return defs.get_schema(op_type, max_inclusive_version=opset, domain=domain)
    except SchemaError:
        pass
    if domain in ONNX_DOMAINS:
        return None
    return ort_schema(op_type, domain, opset)


@lru_cache(maxsize=4096)
def input_names(op_type: str, domain: str, opset: int | None) -> tuple[tuple[str, ...], bool]:
    """The schema's formal input names and whether the last is variadic; ((), False)
    when neither onnx nor onnxruntime describes the operator."""
    schema = operator_schema(op_type, domain, opset)
    if schema is None:
        return (), False
    formal = list(schema.inputs)
    variadic = bool(formal) and str(formal[-1].option).endswith("Variadic")
    return tuple(p.name for p in formal), variadic


def slot_names(names: Sequence[str], count: int, variadic_last: bool) -> list[str]:
    """Schema parameter names for ``count`` actual inputs/outputs (variadic ones numbered,
    ``#i`` past the schema's end)."""
    fixed = len(names) - 1 if variadic_last else len(names)
    out = []
    for i in range(count):
        if i < fixed:
            out.append(names[i])
        elif variadic_last:
            out.append(f"{names[-1]}[{i - fixed}]")
        else:
            out.append(f"#{i}")
    return out


@cache
def newest_opset(domain: str = "") -> int:
    """The newest opset version onnx knows for ``domain`` (listing every schema takes
    12 ms, and the opset panel asks each time a model is shown)."""
    import onnx.defs

    domain = normalize_domain(domain)
    if domain == "":
        return onnx.defs.onnx_opset_version()
    versions = onnx.defs.get_all_schemas_with_history()
    return max((s.since_version for s in versions if s.domain == domain), default=1)
