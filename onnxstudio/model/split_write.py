"""Write a split's stages and manifest: all or nothing, as the user's files are made.

Every stage and the manifest are written into a temporary folder beside the target and
moved in only when all are written (a failed split leaves nothing behind, not stage_1 and
stage_2 without a manifest). The model is read once, its weights stay on disk: each stage
loads only its own weights while it is written.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from onnxstudio.errors import CutError
from onnxstudio.model.cut import protected_paths, write_cut
from onnxstudio.model.graph import Model
from onnxstudio.model.load import read_model_proto
from onnxstudio.model.split import SplitPlan
from onnxstudio.model.write import check_destination


@dataclass(frozen=True)
class WrittenSplit:
    folder: Path
    files: tuple[Path, ...]
    manifest: Path


def manifest_json(model: Model, plan: SplitPlan) -> dict[str, Any]:
    """What ``manifest.json`` says: each stage's file, what it is fed and from where."""
    return {
        "model": Path(model.path).name,
        "by": plan.by,
        "total_cost": plan.total_cost,
        "imbalance": round(plan.imbalance, 4),
        "cut_bytes": list(plan.cut_bytes),
        "model_inputs": list(model.graph.inputs),
        "model_outputs": list(model.graph.outputs),
        "stages": [{
            "file": stage.file,
            "inputs": [{"name": i.name, "from": i.source} for i in stage.inputs],
            "outputs": list(stage.outputs),
            "params": stage.params,
            "nodes": len(stage.nodes),
            "cost": stage.cost,
            "share": stage.cost / plan.total_cost if plan.total_cost else 0.0,
        } for stage in plan.stages],
    }


def _staging(out: Path) -> Path:
    """A temporary folder beside ``out`` (the final moves stay on one file system)."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    except OSError as exc:
        raise CutError(f"{out}: cannot create the folder ({exc.strerror or exc})") from exc


def write_split(model: Model, plan: SplitPlan, folder: str | Path) -> WrittenSplit:
    """Write ``stage_1.onnx … stage_N.onnx`` (weights in ``.data`` files when large) and
    ``manifest.json`` into ``folder``, all or nothing.

    Each stage goes through :func:`write_cut` (checked by onnx.checker, never over the
    model or its weights) into a staging folder; the files are moved into ``folder`` once
    all are written, the manifest last.
    """
    out = Path(folder).expanduser()
    if out.exists() and not out.is_dir():
        raise CutError(f"{out}: is a file, not a folder")
    protected = protected_paths(model, ())
    for stage in plan.stages if out.is_dir() else ():  # the model may be a stage_1.onnx
        check_destination(out / stage.file, protected, CutError)
    from onnxstudio.model.infer_child import ChildInference
    from onnxstudio.model.inference import infer_shapes
    from onnxstudio.model.open import ISOLATE_INFERENCE_NODES

    # onnx's C++ inference holds the GIL for its whole run (dag100k: 1.8 s of the window
    # frozen behind Write Stages): a large graph's runs in a child, as the window's open
    child = ChildInference(Path(model.path)) \
        if model.graph.node_count_total() > ISOLATE_INFERENCE_NODES else None
    proto, _external = read_model_proto(Path(model.path))
    inferred, _problem = child.result() if child is not None else infer_shapes(proto)
    staging = _staging(out)
    try:
        for stage in plan.stages:
            write_cut(model, plan.cut(model, stage), staging / stage.file, proto=proto,
                      inferred=inferred)
        (staging / "manifest.json").write_text(
            json.dumps(manifest_json(model, plan), indent=2) + "\n")
        out.mkdir(parents=True, exist_ok=True)
        names = sorted(p.name for p in staging.iterdir() if p.name != "manifest.json")
        for name in [*names, "manifest.json"]:
            os.replace(staging / name, out / name)
    except OSError as exc:
        raise CutError(f"{out}: the stages could not be written ({exc.strerror or exc})"
                       ) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return WrittenSplit(out, tuple(out / s.file for s in plan.stages), out / "manifest.json")
