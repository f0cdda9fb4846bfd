"""No action freezes the window (issue 34): work the stall tracer found on the GUI
thread runs on a worker, and what the user sees is the same."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import ClassVar

from PySide6.QtCore import QSettings

from onnxstudio.ui import settings
from onnxstudio.ui.main_window import MainWindow, sample_model_path
from onnxstudio.ui.tasks import TaskRunner


class _Recording(QSettings):
    """QSettings noting the thread of every write."""

    writers: ClassVar[list[threading.Thread]] = []

    def setValue(self, key: str, value: object) -> None:
        _Recording.writers.append(threading.current_thread())
        super().setValue(key, value)


def test_recent_files_are_written_off_the_gui_thread(monkeypatch, qapp) -> None:
    """A QSettings write syncs its file (a lock file, two fdatasyncs): 250 ms of the first
    open's stall on a busy disk. The window's thread only queues it."""
    monkeypatch.setattr(settings, "QSettings", _Recording)
    _Recording.writers = []
    assert settings.add_recent_file("/models/a.onnx") == ["/models/a.onnx"]
    assert TaskRunner.wait_all()
    assert _Recording.writers and threading.main_thread() not in _Recording.writers
    fresh = QSettings(str(Path(os.environ[settings.DIR_ENV]) / "onnxstudio.ini"),
                      QSettings.Format.IniFormat)
    assert fresh.value("recent_files") in ("/models/a.onnx", ["/models/a.onnx"])


def test_a_value_stored_is_read_back_at_once(qapp) -> None:
    """Read before the worker wrote it, a stored value is there all the same."""
    settings.add_recent_file("/models/a.onnx")
    settings.store({"hide_nodes": "constant"})
    assert settings.add_recent_file("/models/b.onnx") == ["/models/b.onnx", "/models/a.onnx"]
    assert settings.recent_files() == ["/models/b.onnx", "/models/a.onnx"]
    assert settings.app_settings().value("hide_nodes") == "constant"


def test_opening_a_model_lists_it_in_recent_files_without_writing_on_the_gui_thread(
        monkeypatch, qtbot) -> None:
    monkeypatch.setattr(settings, "QSettings", _Recording)
    _Recording.writers = []
    window = MainWindow()
    qtbot.addWidget(window)
    (tab,) = window.open_paths([str(sample_model_path())])
    qtbot.waitUntil(lambda: tab.model is not None and not tab.busy, timeout=30000)
    qtbot.waitUntil(lambda: window.recent_menu.actions() != [], timeout=5000)
    assert [a.text() for a in window.recent_menu.actions()] == ["digits_cnn.onnx"]
    assert TaskRunner.wait_all()
    assert _Recording.writers and threading.main_thread() not in _Recording.writers
    assert settings.recent_files() == [str(sample_model_path())]
    window.shutdown()
