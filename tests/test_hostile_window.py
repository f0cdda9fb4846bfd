"""Issue 16 in the window: hostile models get a clear error page, never "internal error"."""

from __future__ import annotations

from pathlib import Path

import pytest

from onnxstudio.ui.main_window import MainWindow
from tests.builders import save, tiny_mlp
from tests.conftest import shown_window
from tests.hostile import deep_model, save_in, secret_outside, with_external_w1
from tests.test_main_window import wait_open


@pytest.fixture
def window(qtbot) -> MainWindow:
    return shown_window(qtbot, 1200, 800)


def _opset_2_pow_31(folder: Path) -> Path:
    model = tiny_mlp()
    model.opset_import[0].version = 2**31
    return save(model, folder / "opset.onnx")


def _traversal(folder: Path) -> Path:
    secret_outside(folder)
    return save_in(folder / "models", with_external_w1("../secret.bin", offset="0",
                                                       length="128"))


def _deep(folder: Path) -> Path:
    path = folder / "deep.onnx"
    path.write_bytes(deep_model(40))
    return path


@pytest.mark.parametrize(("make", "reason"), [
    (_opset_2_pow_31, "opset version 2147483648 of domain 'ai.onnx' is out of range"),
    (_traversal, "lies outside the model's folder; refusing to read it"),
    (_deep, "nests too deeply"),
])
def test_hostile_model_shows_one_clear_reason(window: MainWindow, qtbot, tmp_path: Path,
                                              make, reason: str) -> None:
    path = make(tmp_path)
    tab = wait_open(qtbot, window.open_paths([str(path)])[0])
    assert tab.error is not None and tab.error.startswith(f"{path.name}: ")
    assert reason in tab.error and "internal error" not in tab.error
    assert "\n" not in tab.error
    shown = tab._error_page.message.text().replace("\u200b", "")  # wrap points
    assert tab._error_page.isVisible() and shown == tab.error
    label = tab._error_page.message
    qtbot.waitUntil(lambda: label.height() >= label.heightForWidth(label.width()))
    assert label.width() > 300  # a long reason wraps in a wide column, never cut to one line
