"""A machine without Qt's system libraries or a display gets one line naming the package
to install, a non-zero exit code, no traceback and no abort from inside Qt."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from onnxstudio import system_libraries
from onnxstudio.cli import main
from tests.builders import save, tiny_mlp
from tests.conftest import REPO

# What Python raises on a machine without the library: the dynamic loader's own words.
BLOCK_QT = """
import sys, importlib.abc
class MissingLibrary(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.startswith({prefix!r}):
            raise ImportError("{soname}: cannot open shared object file: No such file or "
                              "directory")
sys.meta_path.insert(0, MissingLibrary())
from onnxstudio.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _onnxstudio(args: list[str], env: dict[str, str], block: tuple[str, str] | None = None
                ) -> subprocess.CompletedProcess[str]:
    """``onnxstudio ARGS`` in a fresh interpreter; ``block``: (module prefix, soname) whose
    import fails as it does where the library is missing."""
    code = BLOCK_QT.format(prefix=block[0], soname=block[1]) if block else \
        "import sys; from onnxstudio.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def _env(**changes: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in changes}
    env.update({k: v for k, v in changes.items() if v is not None})
    return env


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("onnxstudio: "), done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


def test_the_window_without_glib_names_the_package(tmp_path: Path) -> None:
    model = save(tiny_mlp(), tmp_path / "m.onnx")
    done = _onnxstudio(["--new-instance", str(model)], _env(QT_QPA_PLATFORM="offscreen"),
                       block=("PySide6.Qt", "libglib-2.0.so.0"))
    line = _one_line(done)
    assert "libglib-2.0.so.0" in line
    assert "apt-get install libglib2.0-0" in line and "dnf install glib2" in line
    assert "pacman -S glib2" in line and "macOS" in line


@pytest.mark.parametrize("suffix", [".png", ".pdf"])
def test_a_qt_export_without_libgl_names_the_package(tmp_path: Path, suffix: str) -> None:
    model = save(tiny_mlp(), tmp_path / "m.onnx")
    out = tmp_path / f"m{suffix}"
    done = _onnxstudio(["export", str(model), str(out)], _env(),
                       block=("PySide6.QtGui", "libGL.so.1"))
    line = _one_line(done)
    assert "internal error" not in line
    assert "libGL.so.1" in line and "apt-get install libgl1" in line
    assert "dnf install libglvnd-glx" in line
    assert not out.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="DISPLAY is Linux's")
def test_no_display_is_one_line_not_qts_abort(tmp_path: Path) -> None:
    model = save(tiny_mlp(), tmp_path / "m.onnx")
    done = _onnxstudio([str(model)], _env(DISPLAY=None, WAYLAND_DISPLAY=None,
                                          QT_QPA_PLATFORM=None))
    assert "no display to open the window on" in _one_line(done)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="DISPLAY is Linux's")
def test_an_x_display_nobody_serves_is_one_line_not_qts_abort(tmp_path: Path) -> None:
    if not system_libraries._loadable("libxcb.so.1") \
            or not system_libraries._loadable("libxcb-cursor.so.0"):
        pytest.skip("libxcb/libxcb-cursor not installed (scripts/bootstrap.sh run installs them)")
    model = save(tiny_mlp(), tmp_path / "m.onnx")
    display = ":4711"  # no X server listens there: /tmp/.X11-unix/X4711 does not exist
    assert not Path("/tmp/.X11-unix/X4711").exists()
    done = _onnxstudio([str(model)], _env(DISPLAY=display, WAYLAND_DISPLAY=None,
                                          QT_QPA_PLATFORM=None))
    assert "cannot connect to the X display ':4711'" in _one_line(done)


def test_x11_without_xcb_cursor_names_the_package(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Qt 6.5+ aborts the X11 plugin without libxcb-cursor, saying only "xcb-cursor0 or
    libxcb-cursor0 is needed"; the one line names each distribution's package."""
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.setattr(system_libraries, "_loadable", lambda so: so != "libxcb-cursor.so.0")
    assert main(["--new-instance"]) == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and "libxcb-cursor.so.0" in line
    assert "apt-get install libxcb-cursor0" in line and "dnf install xcb-util-cursor" in line


def test_an_unknown_library_says_how_to_find_its_package() -> None:
    exc = ImportError("libQuux.so.3: cannot open shared object file: No such file or directory")
    assert system_libraries.library_message(exc) == (
        "Qt needs the system library libQuux.so.3, which is missing: install the package "
        "that provides it (Debian/Ubuntu: apt-file search libQuux.so.3; Fedora: dnf "
        "provides '*/libQuux.so.3')")
    assert system_libraries.library_message(ImportError("No module named 'quux'")) is None
