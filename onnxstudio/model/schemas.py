"""Resolve each operator's schema under the model's opset imports, via onnx.defs.

Cached per (domain, op_type, opset): a 100k-node graph uses a few dozen distinct
operators, and onnx's schema lookup is the slow part of extraction otherwise.
"""

from __future__ import annotations

from functools import lru_cache

import onnx.defs

from onnxstudio.model.graph import SchemaInfo

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
        latest = onnx.defs.get_schema(op_type, domain=domain)
    except onnx.defs.SchemaError:
        return SchemaInfo(known=False, custom_domain=custom)
    if opset is None:
        schema = latest
    else:
        try:
            schema = onnx.defs.get_schema(op_type, max_inclusive_version=opset, domain=domain)
        except onnx.defs.SchemaError:
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


def operator_schema(op_type: str, domain: str, opset: int | None) -> onnx.defs.OpSchema | None:
    """The full OpSchema (inputs, outputs, attributes, type constraints) for documentation."""
    try:
        if opset is None:
            return onnx.defs.get_schema(op_type, domain=normalize_domain(domain))
        return onnx.defs.get_schema(
            op_type, max_inclusive_version=opset, domain=normalize_domain(domain))
    except onnx.defs.SchemaError:
        return None


def newest_opset(domain: str = "") -> int:
    """The newest opset version onnx knows for ``domain``."""
    versions = onnx.defs.get_all_schemas_with_history()
    domain = normalize_domain(domain)
    if domain == "":
        return onnx.defs.onnx_opset_version()
    return max((s.since_version for s in versions if s.domain == domain), default=1)
