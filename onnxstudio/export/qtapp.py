"""Make Qt usable for export from a terminal, a CI job or a worker without a window.

The offscreen platform is chosen only when nothing else is configured and no display
exists, so a user's own QT_QPA_PLATFORM (or a desktop session) is respected.
"""

from __future__ import annotations

import os
import sys
from typing import Any

_app: Any = None  # keeps the application alive for the process


def use_offscreen_if_headless() -> bool:
    """Select the offscreen platform when no platform is set and no display exists.

    Must run before PySide6 is first imported. Returns True when it set it.
    """
    if os.environ.get("QT_QPA_PLATFORM"):
        return False
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return False
    if sys.platform in ("win32", "darwin"):
        return False  # always have a native platform that works without a session
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    return True


def ensure_gui_app() -> Any:
    """The running QGuiApplication (or QApplication), creating a headless one if needed."""
    global _app
    use_offscreen_if_headless()
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance()
    if app is None:
        os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false")
        app = QGuiApplication(["onnxstudio"])
    _app = app
    return app
