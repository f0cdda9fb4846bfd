"""The app's QSettings, in one place so tests can point them at a temporary folder."""

from __future__ import annotations

import os

from PySide6.QtCore import QSettings

ORGANIZATION = "onnxstudio"
APPLICATION = "onnxstudio"
MAX_RECENT = 10


def app_settings() -> QSettings:
    """Settings for this user; ``ONNXSTUDIO_SETTINGS_DIR`` redirects them (tests, portable use)."""
    folder = os.environ.get("ONNXSTUDIO_SETTINGS_DIR")
    if folder:
        return QSettings(os.path.join(folder, "onnxstudio.ini"), QSettings.Format.IniFormat)
    return QSettings(ORGANIZATION, APPLICATION)


def recent_files() -> list[str]:
    value = app_settings().value("recent_files", [])
    if isinstance(value, str):  # QSettings gives a bare string for one-element lists
        value = [value]
    return [str(v) for v in value] if isinstance(value, list) else []


def add_recent_file(path: str) -> list[str]:
    files = [path, *[f for f in recent_files() if f != path]][:MAX_RECENT]
    app_settings().setValue("recent_files", files)
    return files
