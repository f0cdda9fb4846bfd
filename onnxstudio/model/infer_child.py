"""Shape inference in a child process, for graphs large enough to freeze a window.

onnx's C++ inference holds the GIL for its whole run (230 ms on a 100k-node graph),
which no worker thread can hide from the GUI thread; a child process can. The child
reads the model itself (read-only) and hands back the inferred proto through a file.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import onnx

CHILD_COMMAND = "_infer-shapes"


def _command(model: Path, out: Path) -> list[str]:
    if getattr(sys, "frozen", False):  # a PyInstaller app: the executable is onnxstudio
        return [sys.executable, CHILD_COMMAND, str(model), str(out)]
    return [sys.executable, "-m", "onnxstudio", CHILD_COMMAND, str(model), str(out)]


def infer_shapes_isolated(model: Path) -> tuple[onnx.ModelProto | None, str | None]:
    """Run :func:`onnxstudio.model.open.infer_shapes` on ``model`` in a child process."""
    with tempfile.TemporaryDirectory(prefix="onnxstudio-infer-") as tmp:
        out = Path(tmp) / "inferred.onnx"
        try:
            result = subprocess.run(_command(model, out), capture_output=True, text=True,
                                    timeout=600, stdin=subprocess.DEVNULL)
            report = json.loads(result.stdout.strip().splitlines()[-1])
        except (OSError, subprocess.SubprocessError, ValueError, IndexError) as exc:
            return None, f"shape inference could not run ({type(exc).__name__})"
        problem = report.get("problem")
        if not report.get("ok") or not out.exists():
            return None, problem or "shape inference failed"
        inferred = onnx.ModelProto()
        inferred.ParseFromString(out.read_bytes())
        return inferred, problem


def child_main(argv: list[str]) -> int:
    """Entry point of the child: infer, write the proto, print one JSON line."""
    from onnxstudio.model.load import read_model_proto
    from onnxstudio.model.open import infer_shapes

    model, out = Path(argv[0]), Path(argv[1])
    try:
        proto, _ = read_model_proto(model)
    except Exception as exc:
        print(json.dumps({"ok": False, "problem": str(exc)}))
        return 0
    inferred, problem = infer_shapes(proto)
    if inferred is not None:
        out.write_bytes(inferred.SerializeToString())
    print(json.dumps({"ok": inferred is not None, "problem": problem}))
    return 0
