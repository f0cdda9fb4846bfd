"""Start the window: single instance, appearance, files from argv or the sample model."""

from __future__ import annotations

import argparse
import os
import signal
import sys

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtGui import QFileOpenEvent, QIcon
from PySide6.QtWidgets import QApplication

from onnxstudio import __version__
from onnxstudio.resources import resource
from onnxstudio.ui.main_window import MainWindow, sample_model_path
from onnxstudio.ui.settings import APPLICATION, ORGANIZATION
from onnxstudio.ui.single_instance import InstanceServer


class _FileOpenFilter(QObject):
    """macOS delivers double-clicked files as QFileOpenEvent, not argv."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self._window = window

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.FileOpen and isinstance(event, QFileOpenEvent):
            self._window.open_paths([event.file()])
            return True
        return False


def create_application(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication(argv or [sys.argv[0]])
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName("onnxstudio")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("onnxstudio")  # matches packaging/linux/onnxstudio.desktop
    app.setWindowIcon(QIcon(str(resource("icons", "onnxstudio.svg"))))
    return app


def run_app(args: argparse.Namespace) -> int:
    files: list[str] = list(args.files)  # a running window did not take them (cli.py)
    app = create_application()
    window = MainWindow()  # applies the remembered appearance
    server = InstanceServer(window.open_paths, window) if not args.new_instance else None
    app.installEventFilter(_FileOpenFilter(window))
    window.show()
    window.open_paths(files or [str(sample_model_path())])
    if os.environ.get("ONNXSTUDIO_QUIT_AFTER_OPEN"):
        # Packaging smoke tests: quit with 0 once every model is shown, 1 if one failed.
        def finish() -> None:
            tabs = window.model_tabs()
            if any(t.busy for t in tabs):
                QTimer.singleShot(100, finish)
                return
            failed = [t.error for t in tabs if t.error]
            for message in failed:
                print(f"onnxstudio: {message}", file=sys.stderr)
            app.exit(1 if failed else 0)

        QTimer.singleShot(100, finish)
    signal.signal(signal.SIGINT, lambda *_: app.quit())
    code = app.exec()
    window.shutdown()
    if server is not None:
        server.close()
    return code
