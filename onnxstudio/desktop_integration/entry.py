"""The desktop entry and the shared-mime-info package, and the command they launch.

The files in packaging/linux/ are exactly ``desktop_entry()`` and ``MIME_XML`` (a test
checks it), so distribution packages and ``--install-desktop`` agree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

APP_ID = "onnxstudio"
DESKTOP_ID = "onnxstudio.desktop"
MIME_TYPE = "application/x-onnx"
MIME_ICON = "application-x-onnx"
MIME_PACKAGE = "onnxstudio.xml"
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)

DESKTOP_TEMPLATE = """\
[Desktop Entry]
Type=Application
Version=1.4
Name=onnxstudio
GenericName=ONNX Model Viewer
Comment=See, inspect, run and export ONNX models
Icon=onnxstudio
TryExec={try_exec}
Exec={exec} %F
Terminal=false
Categories=Development;Qt;
MimeType=application/x-onnx;
Keywords=ONNX;neural;network;model;graph;viewer;inference;machine learning;
StartupNotify=true
StartupWMClass=onnxstudio
"""

MIME_XML = """\
<?xml version="1.0" encoding="UTF-8"?>
<!-- ONNX models (https://onnx.ai): a protobuf ModelProto with no signature bytes, so the
     type is recognised by its extension only; a weak magic would mislabel other files. -->
<mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info">
  <mime-type type="application/x-onnx">
    <comment>ONNX model</comment>
    <acronym>ONNX</acronym>
    <expanded-acronym>Open Neural Network Exchange</expanded-acronym>
    <icon name="application-x-onnx"/>
    <glob pattern="*.onnx"/>
  </mime-type>
</mime-info>
"""


_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def quote_exec_arg(arg: str) -> str:
    """Quote one Exec= argument as the Desktop Entry spec requires, then escape for a string."""
    arg = arg.replace("%", "%%")
    if not arg or any(c in _RESERVED for c in arg):
        inner = "".join("\\" + c if c in '"`$\\' else c for c in arg)
        arg = f'"{inner}"'
    return arg.replace("\\", "\\\\")


def launch_command() -> list[str]:
    """The command that starts this very installation, as absolute paths.

    A frozen app is its own executable; in a virtual environment the console script next
    to the interpreter is used (it need not be on the desktop session's PATH); failing
    that, `python -m onnxstudio` with the current interpreter, plus PYTHONPATH when the
    package is only importable from a source checkout.
    """
    if getattr(sys, "frozen", False):
        return [os.path.abspath(sys.executable)]
    script = Path(sys.executable).parent / APP_ID  # do not resolve: venvs symlink python
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script.absolute())]
    found = shutil.which(APP_ID)
    if found:
        return [os.path.abspath(found)]
    command = [os.path.abspath(sys.executable), "-m", APP_ID]
    if not _importable_from_anywhere():
        source_root = Path(__file__).resolve().parents[2]
        command = ["env", f"PYTHONPATH={source_root}", *command]
    return command


def _importable_from_anywhere() -> bool:
    """Whether a fresh interpreter started from a launcher (cwd: home) finds the package."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = subprocess.run(
        [sys.executable, "-c", f"import {APP_ID}"], cwd=Path.home() if Path.home().is_dir()
        else "/", env=env, capture_output=True, check=False,
    )
    return probe.returncode == 0


def _program(command: list[str]) -> str:
    """The executable a command runs (past `env VAR=value`), for TryExec."""
    rest = command[1:] if command[0] == "env" else command
    return next((a for a in rest if "=" not in a), command[0])


def desktop_entry(command: list[str] | None = None) -> str:
    """The desktop entry text; with no command, the generic one in packaging/linux/."""
    if command is None:
        return DESKTOP_TEMPLATE.format(exec=APP_ID, try_exec=APP_ID)
    return DESKTOP_TEMPLATE.format(
        exec=" ".join(quote_exec_arg(a) for a in command),
        try_exec=_program(command).replace("\\", "\\\\"),  # a plain string, not Exec-quoted
    )
