"""The operators a model uses, one row per (domain, op_type), for the opset table.

Qt-free so the open task can compute it off the GUI thread (``prepare_model_views``)
and so the CLI could print it.
"""

from __future__ import annotations

from typing import Any

from onnxstudio.model.graph import Model
from onnxstudio.model.index import ModelIndex
from onnxstudio.model.schemas import display_domain, normalize_domain
from onnxstudio.model.summary import model_summary


def operator_rows(model: Model) -> list[dict[str, Any]]:
    """One row per (domain, op_type): count, version in force, newest, and a note."""
    return model.memo("operator_rows", lambda: _operator_rows(model))


def _operator_rows(model: Model) -> list[dict[str, Any]]:
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for node in model.graph.walk():
        key = (node.domain, node.op_type)
        row = rows.get(key)
        if row is None:
            schema = node.schema
            since = schema.since_version
            imported = normalize_domain(node.domain) in model.opset_imports
            if node.function:
                note = "local function"
            elif schema.known and not imported:
                note, since = "opset not imported", None
            elif not schema.known:
                note = "no schema"
            elif schema.since_version is None:
                note = "beyond model opset"
            elif schema.deprecated:
                note = "deprecated"
            else:
                note = ""
            row = rows[key] = {
                "op_type": node.op_type, "domain": display_domain(node.domain), "count": 0,
                "since": since, "latest": schema.latest_version, "note": note}
        row["count"] += 1
    return sorted(rows.values(), key=lambda r: (r["domain"] != "ai.onnx", r["domain"],
                                                 r["op_type"]))


def prepare_model_views(model: Model) -> None:
    """Compute what the inspector shows for a model; call it off the GUI thread.

    On a 100k-node graph the summary, index and operator table take 0.25 s together,
    which would otherwise freeze the window the moment the model appears.
    """
    model_summary(model)
    ModelIndex.of(model)
    operator_rows(model)
    model.memo("node_count_total", model.graph.node_count_total)  # the status line's
