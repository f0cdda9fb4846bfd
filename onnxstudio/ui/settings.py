"""The app's QSettings, in one place so tests can point them at a temporary folder.

Writing waits on the disk: a QSettings going out of scope syncs its file, which takes a
lock file, rewrites the file and fdatasyncs both (4-28 ms on a loaded machine, 250 ms
seen inside the first open's recent-files update). What a user action remembers goes
through ``store``, written on a worker; ``app_settings`` first finishes a write still
queued, so whatever is read was stored.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping

from PySide6.QtCore import QSettings

from onnxstudio.ui.tasks import TaskRunner

ORGANIZATION = "onnxstudio"
APPLICATION = "onnxstudio"
MAX_RECENT = 10
DIR_ENV = "ONNXSTUDIO_SETTINGS_DIR"

_pending: dict[tuple[str, str], object] = {}  # (settings folder, key): value not written
_pending_lock = threading.Lock()  # guards _pending
_write_lock = threading.Lock()  # one writer at a time


def _open(folder: str) -> QSettings:
    if folder:
        return QSettings(os.path.join(folder, "onnxstudio.ini"), QSettings.Format.IniFormat)
    return QSettings(ORGANIZATION, APPLICATION)


def app_settings() -> QSettings:
    """Settings for this user; ``ONNXSTUDIO_SETTINGS_DIR`` redirects them (tests, portable use)."""
    if _pending:  # a value stored a moment ago: on disk before anything is read
        _write_pending()
    return _open(os.environ.get(DIR_ENV, ""))


def store(values: Mapping[str, object]) -> None:
    """``setValue`` for each of ``values``, written and synced on a worker thread (the
    TaskRunner pool's), not on the GUI thread."""
    folder = os.environ.get(DIR_ENV, "")
    with _pending_lock:
        _pending.update({(folder, key): value for key, value in values.items()})
    TaskRunner.pool().start(_write_pending)


def _write_pending() -> None:
    """Write every stored value not yet written (each write takes all there are, so the
    order the workers run in does not matter)."""
    with _write_lock:
        with _pending_lock:
            batch = dict(_pending)
        for folder in {f for f, _ in batch}:
            settings = _open(folder)
            for (where, key), value in batch.items():
                if where == folder:
                    settings.setValue(key, value)
            settings.sync()
        with _pending_lock:
            for item, value in batch.items():
                if _pending.get(item) is value:
                    del _pending[item]


def recent_files() -> list[str]:
    value = app_settings().value("recent_files", [])
    if isinstance(value, str):  # QSettings gives a bare string for one-element lists
        value = [value]
    return [str(v) for v in value] if isinstance(value, list) else []


def add_recent_file(path: str) -> list[str]:
    files = [path, *[f for f in recent_files() if f != path]][:MAX_RECENT]
    store({"recent_files": files})
    return files
