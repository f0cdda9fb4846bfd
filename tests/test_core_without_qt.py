"""The Qt-free core imports and works in a process where PySide6 cannot be imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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


def test_svg_dot_and_json_export_without_pyside6(tmp_path: Path) -> None:
    """The Qt-free half of render/ and export/ (named in the import-linter contract) imports
    and writes SVG, DOT and JSON in a process where PySide6 cannot be imported."""
    pytest.importorskip("tomllib")  # Python 3.11+, to read the contract's module list
    model = save(tiny_mlp(), tmp_path / "m.onnx")
    script = BLOCK_QT + f"""
import importlib, pkgutil, tomllib
config = tomllib.load(open("pyproject.toml", "rb"))["tool"]["importlinter"]["contracts"]
qt_free = next(c for c in config if c["name"].startswith("Drawing and export"))
for name in qt_free["source_modules"]:
    importlib.import_module(name)
from pathlib import Path
from onnxstudio.export.build import layout_for_export
from onnxstudio.export.formats import export_layout
from onnxstudio.export.options import ExportOptions
from onnxstudio.model import load_model
m = load_model({str(model)!r})
layout = layout_for_export(m, ExportOptions())
for ext in ("svg", "dot", "json"):
    out = Path({str(tmp_path)!r}) / f"m.{{ext}}"
    export_layout(layout, m, out)
    assert out.stat().st_size > 100, ext
assert "<g " in (Path({str(tmp_path)!r}) / "m.svg").read_text()
assert not any(k.startswith("PySide6") for k in sys.modules)
print("export ok")
"""
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "export ok" in result.stdout


# The modules of render/ and export/ that may import Qt; everything else there is named
# in the import-linter contract, so a new module cannot slip past the no-Qt rule unseen.
QT_BACKENDS = {"onnxstudio.render.qt_surface", "onnxstudio.export.raster",
               "onnxstudio.export.pdf", "onnxstudio.export.qtapp", "onnxstudio.export.formats"}


def test_every_drawing_and_export_module_is_qt_free_or_a_named_backend() -> None:
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"]
                    if c["name"].startswith("Drawing and export"))
    modules = {f"onnxstudio.{p.parent.name}.{p.stem}"
               for folder in ("render", "export")
               for p in (REPO / "onnxstudio" / folder).glob("*.py") if p.stem != "__init__"}
    assert modules - QT_BACKENDS == set(contract["source_modules"])


def test_help_imports_neither_numpy_nor_onnx() -> None:
    """`onnxstudio --help` answers at once: the CLI's entry point reaches numpy and onnx
    only through the command it runs (issue 20: --help used to pay for them)."""
    script = """
import sys
from onnxstudio.cli import main
try:
    main(["--help"])
except SystemExit:
    pass
heavy = sorted(k for k in ("numpy", "onnx", "onnxruntime", "PySide6") if k in sys.modules)
print("heavy:", heavy)
"""
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "heavy: []" in result.stdout, result.stdout
