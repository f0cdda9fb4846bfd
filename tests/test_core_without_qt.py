"""The Qt-free core imports and works in a process where PySide6 cannot be imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.builders import save, tiny_mlp
from tests.conftest import REPO

BLOCK_QT = """
import sys, importlib.abc
class BlockQt(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "PySide6" or name.startswith("PySide6."):
            raise ImportError("PySide6 is blocked in this test")
sys.meta_path.insert(0, BlockQt())
"""


def test_core_imports_and_runs_without_pyside6(tmp_path: Path) -> None:
    model = save(tiny_mlp(), tmp_path / "m.onnx")
    script = BLOCK_QT + f"""
import importlib, pkgutil
import onnxstudio.model, onnxstudio.layout, onnxstudio.runner
for pkg in (onnxstudio.model, onnxstudio.layout, onnxstudio.runner):
    for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        if not info.name.endswith("qt_worker"):
            importlib.import_module(info.name)
from onnxstudio.model import load_model
m = load_model({str(model)!r})
assert len(m.graph.nodes) == 5
from onnxstudio.cli import main
assert main(["info", {str(model)!r}]) == 0
assert not any(k.startswith("PySide6") for k in sys.modules)
print("core ok")
"""
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "core ok" in result.stdout
