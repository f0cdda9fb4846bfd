"""Run a cut-out sub-model on the values the full model makes at the cut, and compare.

This is how a user trusts a cut: the full model runs once (on random inputs of the right
types, seeded) with the cut's boundary tensors added as outputs; the part then runs on
the full model's values at its inputs, and its outputs must equal the full model's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort

from onnxstudio.errors import Cancelled, RunError
from onnxstudio.model.external import model_folder
from onnxstudio.model.load import check_model_bytes, read_checked, read_model_proto
from onnxstudio.runner.cancel import CancelToken
from onnxstudio.runner.inputs import read_model_info
from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.runner.synthetic import dims_note, synthetic_feeds
from onnxstudio.runner.tolerance import close_for, coarsest


@dataclass(frozen=True)
class PartCheck:
    """One output of the part against the full model's value of the same tensor."""

    name: str
    shape: tuple[int, ...]
    max_abs_diff: float
    matches: bool
    tolerance: str = ""  # the bound used, e.g. "rtol 2e-3, atol 1e-3 (float16)"

    def describe(self) -> str:
        mark = "matches" if self.matches else "DIFFERS"
        tol = f", {self.tolerance}" if self.tolerance else ""
        return (f"{self.name} {list(self.shape)}: {mark} "
                f"(max |Δ| = {self.max_abs_diff:.3g}{tol})")


def cpu_session(model: bytes | str | Path, name: str | Path) -> ort.InferenceSession:
    """A plain CPU session that onnxruntime gets as checked bytes: a file goes through the
    one loader first; bytes (from a checked proto) are checked again, their external data
    resolving next to ``name`` (the file they come from; it leads the one-line error)."""
    if isinstance(model, bytes):
        source = Path(name)
        check_model_bytes(source, model)
    else:
        source = Path(model)
        model = read_checked(source).session_bytes()
    options = ort.SessionOptions()
    options.add_session_config_entry(
        "session.model_external_initializers_file_folder_path", str(model_folder(source)))
    try:
        return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own several types
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RunError(f"{Path(name).name}: onnxruntime refused the model: {first}") from exc


def full_model_values(model_path: str | Path, names: list[str],
                      feeds: dict[str, Any] | None = None, seed: int = 0,
                      cancel: CancelToken | None = None,
                      dim_sizes: dict[str, int] | None = None) -> dict[str, np.ndarray]:
    """The full model's values of ``names`` (and its feeds) on ``feeds`` or random inputs
    (``dim_sizes``: the user's sizes of symbolic dimensions)."""
    path = Path(model_path)
    # refuses data outside the model's folder; the weights stay on disk, where onnxruntime
    # reads them (never one proto over protobuf's 2 GB, nor the weights twice in memory)
    proto, _external = read_model_proto(path)
    g = proto.graph
    known = {i.name for i in g.input} | {o for n in g.node for o in n.output}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise RunError(f"{path.name} has no tensor '{unknown[0]}': is this part cut from it?")
    declared = {o.name for o in g.output}
    proto.graph.output.extend(onnx.ValueInfoProto(name=n) for n in names if n not in declared)
    session = cpu_session(proto.SerializeToString(), path)
    note = ""
    if feeds is None:
        info = read_model_info(path)
        feeds = synthetic_feeds(info.inputs, dim_sizes, seed=seed, hints=info.dim_hints)
        note = f"; {dims_note(info.inputs, dim_sizes, info.dim_hints)}"
    wanted = [o.name for o in session.get_outputs()]
    try:
        with (cancel or CancelToken()).run_options() as options:
            results = session.run(wanted, feeds, options)
    except Cancelled:
        raise
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RunError(f"{path.name}: the full model failed to run ({first}{note})") from exc
    return {**feeds, **dict(zip(wanted, results, strict=True))}


def request_input(model_path: str | Path, request: RunRequest,
                  cancel: CancelToken | None = None) -> tuple[str, dict[str, Any]]:
    """(source, feeds): the input of a run request (an image, .npy files) as the full
    model was fed it, so a part is checked on what really flowed, not on noise."""
    from onnxstudio.runner.feeds import request_feeds
    from onnxstudio.runner.session import Session

    session = Session(Path(model_path), request.config, cancel=cancel)
    return request_feeds(request, session)


def run_part(model_path: str | Path, part_path: str | Path, seed: int = 0,
             rtol: float | None = None, atol: float | None = None,
             feeds: dict[str, Any] | None = None,
             cancel: CancelToken | None = None) -> list[PartCheck]:
    """Run ``part_path`` on what ``model_path`` computes at the cut; compare its outputs
    (within the tolerance of their dtype unless ``rtol``/``atol`` are given).

    ``feeds``: the full model's inputs (see :func:`request_input`); seeded random inputs
    of the right types when None. ``cancel`` stops its onnxruntime runs midway.
    """
    part = cpu_session(str(part_path), Path(part_path).name)
    inputs = [i.name for i in part.get_inputs()]
    outputs = [o.name for o in part.get_outputs()]
    full = full_model_values(model_path, [*inputs, *outputs], feeds=feeds, seed=seed,
                             cancel=cancel)
    missing = [n for n in inputs if n not in full]
    if missing:
        raise RunError(f"the full model does not make '{missing[0]}'")
    try:
        with (cancel or CancelToken()).run_options() as options:
            got = part.run(outputs, {n: full[n] for n in inputs}, options)
    except Cancelled:
        raise
    except Exception as exc:
        raise RunError(f"{Path(part_path).name}: the part failed to run ({exc})") from exc
    checks = []
    for name, value in zip(outputs, got, strict=True):
        want = np.asarray(full[name])
        value = np.asarray(value)
        if value.shape != want.shape:
            checks.append(PartCheck(name, tuple(value.shape), float("inf"), False))
            continue
        if value.dtype.kind in "fc" or want.dtype.kind in "fc":
            dtype = coarsest(value.dtype, want.dtype)
            d_rtol, d_atol = close_for(dtype)
            r, a = (d_rtol if rtol is None else rtol), (d_atol if atol is None else atol)
            diff = float(np.max(np.abs(value.astype(np.float64) - want))) if value.size else 0.0
            ok = bool(np.allclose(value.astype(np.float64), want.astype(np.float64), rtol=r,
                                  atol=a, equal_nan=True))
            note = f"rtol {r:g}, atol {a:g} ({dtype})"
        else:
            ok = bool(np.array_equal(value, want))
            diff = 0.0 if ok else float("inf")
            note = "exact"
        checks.append(PartCheck(name, tuple(value.shape), diff, ok, note))
    return checks
