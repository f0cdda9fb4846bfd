"""Libraries' one-time costs, paid while the main window is being built instead of
inside the user's first open, where they froze the window:

- onnx builds its operator-schema registry at the first lookup (~40 ms in C++, holding
  the GIL): done on a thread;
- shiboken creates Qt's Python enums lazily: the first ``viewport()`` of a scroll area
  creates ~80 of them (~20 ms; every canvas calls it), the first ``QBrush(QColor)``
  five more (~20 ms). The first must run on the GUI thread (it needs a widget).
"""

from __future__ import annotations

import threading

from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QAbstractScrollArea

from onnxstudio.model.schemas import resolve_schema

_started = False


def _warm_off_thread() -> None:
    resolve_schema("Conv", "", None)
    QBrush(QColor(0, 0, 0))


def start_warmup() -> None:
    """Warm up once per process (call on the GUI thread); it never fails anything."""
    global _started
    if _started:
        return
    _started = True
    threading.Thread(target=_warm_off_thread, name="onnxstudio-warmup", daemon=True).start()
    QAbstractScrollArea().viewport()
