"""After edits: onnx's checker and strict shape inference, as warnings or save-refusing errors.

Strict shape inference fails on many real models as they come; such a failure is an error
only when the edits caused it (the original passed), otherwise a warning.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import onnx
from onnx import external_data_helper

from onnxstudio.model.edit.value_ops import strict_shape_problem
from onnxstudio.model.external import tensors_of
from onnxstudio.readable import onnx_message

_IN_MEMORY_LIMIT = 2**31 - 1


@dataclass
class CheckReport:
    """What the checks found; ``errors`` refuse the save."""

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    cannot_run: str = ""  # why onnxruntime refused a run (the window asks before saving)

    @property
    def ok(self) -> bool:
        return not self.errors

    def as_json(self) -> dict[str, object]:
        return {"ok": self.ok, "errors": self.errors, "warnings": self.warnings}


def _first_line(exc: Exception) -> str:
    """onnx's checker text as one line, the node it names kept (`readable.onnx_message`)."""
    return onnx_message(str(exc)) or type(exc).__name__


def _without_external_data(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy the checker can read in memory: it looks for external-data files relative to
    the working folder, so weights kept outside stand in as empty tensors (their shapes
    are still checked, by shape inference on the real model)."""
    tensors = [t for t in tensors_of(model)
               if external_data_helper.uses_external_data(t)]
    if not tensors:
        return model
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for tensor in tensors_of(copy):
        if external_data_helper.uses_external_data(tensor):
            tensor.data_location = onnx.TensorProto.DEFAULT
            del tensor.external_data[:]
            tensor.ClearField("dims")
            tensor.dims.append(0)
            tensor.raw_data = b""
    return copy


def _checker_problem(model: onnx.ModelProto) -> str | None:
    if model.ByteSize() > _IN_MEMORY_LIMIT:
        return "not run: the model is over 2 GB in memory"
    model = _without_external_data(model)
    try:
        onnx.checker.check_model(model)
    except (onnx.checker.ValidationError, ValueError) as exc:
        return _first_line(exc)
    return None


def check_edited(edited: onnx.ModelProto,
                 original: onnx.ModelProto | Callable[[], onnx.ModelProto | None] | None = None
                 ) -> CheckReport:
    """Run the checks on ``edited``; ``original`` (or the function reading it, called
    only when a check fails) decides whether a failure is new."""
    report = CheckReport()
    read: list[onnx.ModelProto | None] = []

    def first() -> onnx.ModelProto | None:
        if not read:
            read.append(original() if callable(original) else original)
        return read[0]

    problem = _checker_problem(edited)
    if problem is not None:
        before = _checker_problem(base) if (base := first()) is not None else None
        (report.warnings if before == problem else report.errors).append(
            f"onnx.checker: {problem}" + (" (the original fails it too)"
                                          if before == problem else ""))
    problem = strict_shape_problem(edited)
    if problem is not None:
        base = first()
        before = strict_shape_problem(base) if base is not None else None
        if base is not None and before is not None:
            report.warnings.append(f"shape inference: {problem} (the original model does "
                                   "not pass strict shape inference either)")
        else:
            report.errors.append(f"shape inference: {problem}")
    return report
