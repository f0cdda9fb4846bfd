"""Headless sub-commands: each module has ``add_parser(subparsers)`` and ``run(args) -> int``."""

from __future__ import annotations

import importlib
from types import ModuleType

# Sub-command name -> module under onnxstudio.commands. Imported lazily so that
# `onnxstudio info` never pays for Qt or onnxruntime.
COMMANDS: dict[str, str] = {
    "info": "info",
    "run": "run",
    "export": "export",
    "extract": "extract",
    "profile": "profile",
    "compare": "compare",
    "diff": "diff",
    "split": "split",
    "merge": "merge",
    "edit": "edit",
    "cost": "cost",
    "placement": "placement",
}


def load(name: str) -> ModuleType:
    return importlib.import_module(f"onnxstudio.commands.{COMMANDS[name]}")
