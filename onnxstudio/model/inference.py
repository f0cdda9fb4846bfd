"""onnx's own shape inference, run the tolerant way the app needs (in this process; see
infer_child.py for running it in a child). Kept apart from open.py so the child's entry
point and the cut/split writers use it without importing the loader."""

from __future__ import annotations

from typing import TYPE_CHECKING

from onnxstudio.model import onnx_core
from onnxstudio.model.contrib_types import complete_types, uses_contrib
from onnxstudio.model.guard import unsafe_for_inference

if TYPE_CHECKING:
    import onnx


def infer_shapes(proto: onnx.ModelProto, guarded: bool = True
                 ) -> tuple[onnx.ModelProto | None, str | None]:
    """onnx's own shape inference, tolerant: returns (inferred model, problem or None).

    Strict mode first, because only it reports what went wrong; on failure the lenient
    mode still gives the shapes it could infer, so one bad node does not blank them all.
    A graph onnx would crash on (see guard.py) is not inferred at all, unless not
    ``guarded``: in a fork, where a crash ends only the fork, and its parent asks the
    guard why (BERT-96: the guard's walk is 50 ms of the fork's 0.3 s).
    """
    unsafe = unsafe_for_inference(proto) if guarded else None
    if unsafe:
        return None, unsafe
    problem = None
    try:
        inferred = onnx_core.infer_shapes(proto, check_type=True, strict_mode=True)
    except Exception as exc:  # onnx raises several types (InferenceError, RuntimeError...)
        lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
        problem = f"shape inference failed: {lines[0] if lines else type(exc).__name__}"
        try:
            inferred = onnx_core.infer_shapes(proto, strict_mode=False)
        except Exception:
            return None, problem
    if uses_contrib(proto):  # onnx stops at onnxruntime's operators: carry types through
        complete_types(inferred)
    return inferred, problem
