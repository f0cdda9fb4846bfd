"""How the app starts a child process of itself (shape inference, a window's profile).

A frozen app (PyInstaller) is its own executable; an installed one runs ``-m onnxstudio``
with the interpreter running it now. Either way the child's first argument names a
hidden command, which ``cli.main`` hands to ``run_child`` before any parser.
"""

from __future__ import annotations

import importlib
import sys

INFER_SHAPES = "_infer-shapes"
PROFILE = "_profile"
# command -> the module whose child_main(argv) runs it, imported only in the child
_MODULES = {INFER_SHAPES: "onnxstudio.model.infer_child",
            PROFILE: "onnxstudio.runner.profile_child"}


def child_command(command: str, *args: str) -> list[str]:
    if getattr(sys, "frozen", False):
        return [sys.executable, command, *args]
    return [sys.executable, "-m", "onnxstudio", command, *args]


def run_child(argv: list[str]) -> int | None:
    """Run the hidden command ``argv`` names; None when it names none."""
    module = _MODULES.get(argv[0]) if argv else None
    if module is None:
        return None
    code: int = importlib.import_module(module).child_main(argv[1:])
    return code
