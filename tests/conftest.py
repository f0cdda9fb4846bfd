"""Shared test setup: headless Qt, the shared model corpus, and model builders."""

from __future__ import annotations

import faulthandler
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from onnxstudio.ui.main_window import MainWindow

# Must be set before anything imports Qt.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false")

# Some tests crash a forked child on purpose (onnx's inference segfaults on graphs guard.py
# names; the parent must survive and say why). pytest's faulthandler, inherited by the fork,
# printed "Fatal Python error" and a traceback per crash into a green run. The test process
# itself keeps its faulthandler.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=faulthandler.disable)

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("ONNXSTUDIO_SHARED", REPO.parent / "shared"))
SHARED_MODELS = SHARED / "models"
LADDER = SHARED / "ladder"


def shared_model(relative: str) -> Path:
    """Path to a file under ../shared/models, skipping the test when it is absent."""
    path = SHARED_MODELS / relative
    if not path.exists():
        pytest.skip(f"../shared/models/{relative} not available")
    return path


def shown_window(qtbot: Any, width: int = 1280, height: int = 800) -> MainWindow:
    """A main window at that size, shown, closed by pytest-qt after the test. (Qt is
    imported here, not at the top: the Qt-free core tests import this module too.)"""
    from onnxstudio.ui.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(width, height)
    window.show()
    return window


def opened_tab(qtbot: Any, window: MainWindow, path: Path) -> Any:
    """``path`` opened in ``window``, once its layout is drawn."""
    tab = window.open_paths([str(path)])[0]
    qtbot.waitUntil(lambda: not tab.busy and tab.layout_data is not None, timeout=60000)
    return tab


def expanded_tab(qtbot: Any, path: Path) -> Any:
    """``path`` opened in a new window and expanded all, once that layout is drawn and
    the tab idle."""
    tab = opened_tab(qtbot, shown_window(qtbot), path)
    before = tab.layout_data
    tab.expand_all()
    qtbot.waitUntil(lambda: tab.layout_data is not before and not tab.busy, timeout=120_000)
    return tab


def ladder_model(name: str) -> Path:
    path = LADDER / name
    if not path.exists():
        pytest.skip(f"../shared/ladder/{name} not available")
    return path


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Keep QSettings and XDG paths of tests away from the real user's."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.setenv("ONNXSTUDIO_SETTINGS_DIR", str(home / "settings"))


@pytest.fixture()
def forking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let this test process fork although Qt is loaded in it (pytest-qt): for tests of
    what a fork does, whose work touches no Qt. Skips where there is no fork."""
    from onnxstudio.concurrency import fork

    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    monkeypatch.setattr(fork, "refusal", lambda: None)


@pytest.fixture()
def shown_view(qtbot: Any) -> Any:
    """An empty GraphView shown at 900×700, for the canvas tests to give a layout."""
    from onnxstudio.ui.canvas.graph_view import GraphView

    view = GraphView()
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    qtbot.waitExposed(view)
    return view


@pytest.fixture
def created(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every model counts as big (runs in a session host child); the onnxruntime
    sessions this process creates."""
    import onnxruntime

    from onnxstudio.runner import session_host

    made: list[Any] = []
    real = onnxruntime.InferenceSession

    def counted(*args: Any, **kwargs: Any) -> Any:
        made.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(session_host, "HOST_BYTES", 0)
    monkeypatch.setattr(onnxruntime, "InferenceSession", counted)
    return made
