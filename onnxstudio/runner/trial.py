"""Does an edited model still run? One onnxruntime session and one run on seeded
synthetic inputs, off the GUI thread, after each edit.

onnx's checker and strict shape inference pass a Conv whose ``group`` no longer matches
its weight; onnxruntime refuses it only when it runs ("Input channels C is not equal to
kernel channels * group"). Graphs too large for a quick trial are not tried.
"""

from __future__ import annotations

from pathlib import Path

from onnxstudio.errors import OnnxStudioError
from onnxstudio.runner.cut_check import cpu_session
from onnxstudio.runner.inputs import spec_from_ort
from onnxstudio.runner.synthetic import synthetic_feeds

TRIAL_MAX_NODES = 5_000  # larger graphs: a run on every edit would hold a core too long
TRIAL_MAX_BYTES = 256 << 20


def run_problem(model: bytes, path: Path, nodes: int) -> str | None:
    """Why onnxruntime cannot run ``model`` (the edited copy of ``path``), in one line;
    None when it runs, or when it is too large to try."""
    if nodes > TRIAL_MAX_NODES or len(model) > TRIAL_MAX_BYTES:
        return None
    try:
        session = cpu_session(model, path)
        feeds = synthetic_feeds([spec_from_ort(i) for i in session.get_inputs()], seed=0)
        session.run(None, feeds)
    except OnnxStudioError as exc:
        return str(exc).removeprefix(f"{path.name}: ")
    except Exception as exc:  # onnxruntime raises its own several types
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        return lines[0] if lines else type(exc).__name__
    return None
