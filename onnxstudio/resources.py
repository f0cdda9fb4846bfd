"""Where the bundled resources (icons, label lists, sample model) live at run time.

Installed builds (wheel, editable, PyInstaller) carry the repository's top-level
``resources/`` folder as the package ``onnxstudio._resources`` and it is found through
``importlib.resources``. A source checkout that is only on ``sys.path`` (not installed)
has no such package; there the folder beside the ``onnxstudio`` package is used.
"""

from __future__ import annotations

import importlib.resources
from functools import cache
from pathlib import Path

PACKAGE = "onnxstudio._resources"


@cache
def resources_dir() -> Path:
    """The resources folder as a real directory (Qt and onnx need file paths)."""
    try:
        root = importlib.resources.files(PACKAGE)
    except ModuleNotFoundError:
        return Path(__file__).resolve().parent.parent / "resources"
    if not isinstance(root, Path):  # e.g. zipimport: not something our builds produce
        raise RuntimeError(f"{PACKAGE} is not installed as a directory ({root!r})")
    return root


def resource(*parts: str) -> Path:
    return resources_dir().joinpath(*parts)
