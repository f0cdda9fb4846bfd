"""A diff tab's work off the GUI thread: both models opened with their shapes, compared,
merged, and everything the tab shows worked out (colours, counts, the list's rows), so
the landing turn only hands it to the widgets."""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

from onnxstudio.model import Model
from onnxstudio.model.diff import ModelDiff, diff_models
from onnxstudio.model.diff_merge import merged_model
from onnxstudio.model.open import open_model
from onnxstudio.render.overlay import OverlayData, diff_overlay
from onnxstudio.ui.diff.changes_list import Row, describe_all, listed
from onnxstudio.ui.tasks import TaskContext


@dataclass
class Computed:
    """What the background diff hands back: the diff and the merged graph."""

    result: ModelDiff
    merged: Model
    merged_status: dict[str, str]
    described: list[str]  # the changes list's words for each node, worked out here
    overlays: tuple[OverlayData, OverlayData]  # A's and B's colours (a pass over all nodes)
    # the header's counts and the list's first rows: each a pass over every node, which
    # on the GUI thread froze dag100k's diff as it landed
    counts: dict[str, int]
    ratio: float
    identical: bool
    rows: list[Row]


def _open(path: Path, side: str, start: float, context: TaskContext) -> Model:
    """Open one side with its inferred shapes (a large graph infers in a child process,
    so the event loop never waits on it)."""
    model, shapes = open_model(
        path, progress=lambda stage, f: context.progress(f"{side}: {stage}", start + f * 0.2))
    try:
        context.check()
        context.progress(f"{side}: inferring shapes", start + 0.2)
        shapes.apply(model)
    finally:
        shapes.cancel()
    context.check()
    return model


def compute(path_a: Path, path_b: Path, context: TaskContext) -> Computed:
    a = _open(path_a, "A", 0.0, context)
    b = _open(path_b, "B", 0.3, context)
    result = diff_models(a, b, progress=lambda stage, f: context.progress(stage, 0.6 + f * 0.35))
    merged, status = merged_model(result)
    described = describe_all(result)
    title = f"Diff {path_a.name} → {path_b.name}"
    overlays = (diff_overlay(title, _statuses(result, "a"), _tips(result, described, "a")),
                diff_overlay(title, _statuses(result, "b"), _tips(result, described, "b")))
    return Computed(result, merged, status, described, overlays, result.summary(),
                    result.match_ratio(), result.identical, listed(result, described))


def _statuses(result: ModelDiff, side: str) -> dict[str, str]:
    return {node.id: e.status for e in result.nodes
            if (node := e.a if side == "a" else e.b) is not None}


def _tips(result: ModelDiff, described: list[str], side: str) -> dict[str, str]:
    """The changes list's words for each changed or removed node on ``side``."""
    return {node.id: html.escape(what)
            for e, what in zip(result.nodes, described, strict=True)
            if e.status in ("changed", "removed")
            and (node := e.a if side == "a" else e.b) is not None}
