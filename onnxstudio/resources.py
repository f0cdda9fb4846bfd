"""Where the bundled resources (icons, label lists, sample model) live at run time."""

from __future__ import annotations

import sys
from pathlib import Path


def resources_dir() -> Path:
    """The `resources/` folder: beside the package in a checkout, or inside a frozen app."""
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen) / "resources"
    return Path(__file__).resolve().parent.parent / "resources"


def resource(*parts: str) -> Path:
    return resources_dir().joinpath(*parts)
