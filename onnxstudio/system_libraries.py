"""What a machine lacks for Qt, said in one line that names the package to install.

PySide6's wheels bundle Qt but not the system libraries Qt links against (GLib, OpenGL,
fontconfig, xkbcommon, the xcb-cursor the X11 plugin loads). On a minimal Linux install
``import PySide6.QtGui`` fails with "libGL.so.1: cannot open shared object file", and
QApplication without a display (or with one whose server does not answer) aborts the
process from C++. This module turns both into
a SystemSetupError, checked before Qt gets the chance to abort. Qt-free.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys

from onnxstudio.errors import SystemSetupError

# soname: (Debian/Ubuntu, Fedora, Arch) packages
PACKAGES: dict[str, tuple[str, str, str]] = {
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2", "glib2"),
    "libgthread-2.0.so.0": ("libglib2.0-0", "glib2", "glib2"),
    "libGL.so.1": ("libgl1", "libglvnd-glx", "libglvnd"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl", "libglvnd"),
    "libOpenGL.so.0": ("libopengl0", "libglvnd-opengl", "libglvnd"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype", "freetype2"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs", "dbus"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon", "libxkbcommon"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11", "libxkbcommon-x11"),
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor", "xcb-util-cursor"),
    "libxcb.so.1": ("libxcb1", "libxcb", "libxcb"),
    "libX11.so.6": ("libx11-6", "libX11", "libx11"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb", "libx11"),
}
_SONAME = re.compile(r"(lib[\w.+-]+?\.so(?:\.\d+)*)\b")


def install_hint(soname: str) -> str:
    """Where to get ``soname``: the package per distribution, or how to find it."""
    packages = PACKAGES.get(soname)
    if packages is None:
        return (f"install the package that provides it (Debian/Ubuntu: apt-file search "
                f"{soname}; Fedora: dnf provides '*/{soname}')")
    debian, fedora, arch = packages
    return (f"install it: Debian/Ubuntu: sudo apt-get install {debian}; Fedora: sudo dnf "
            f"install {fedora}; Arch: sudo pacman -S {arch} (macOS and Windows: PySide6's "
            "wheel bundles it, so reinstall PySide6-Essentials)")


def missing_library(exc: BaseException) -> str | None:
    """The shared library an ImportError says could not be loaded, else None."""
    if not isinstance(exc, ImportError):
        return None
    text = str(exc)
    if "cannot open shared object file" not in text and "Library not loaded" not in text:
        return None
    found = _SONAME.search(text)
    return found.group(1) if found else None


def library_message(exc: BaseException) -> str | None:
    """One line for an ImportError that is a missing system library, else None."""
    soname = missing_library(exc)
    if soname is None:
        return None
    return f"Qt needs the system library {soname}, which is missing: {install_hint(soname)}"


def _loadable(soname: str) -> bool:
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def _x_server_answers(display: str) -> bool:
    """Whether the X server of ``display`` accepts a connection (libxcb's own check, the
    library Qt's X11 plugin connects with); a missing libxcb is a SystemSetupError."""
    if not _loadable("libxcb.so.1"):
        raise SystemSetupError("Qt's X11 support needs the system library libxcb.so.1, "
                               f"which is missing: {install_hint('libxcb.so.1')}")
    xcb = ctypes.CDLL("libxcb.so.1")
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    connection = xcb.xcb_connect(display.encode(), None)  # never NULL: an error object
    try:
        return int(xcb.xcb_connection_has_error(connection)) == 0
    finally:
        xcb.xcb_disconnect(connection)


def check_window_can_open() -> None:
    """Raise SystemSetupError where creating the QApplication would abort the process:
    Linux without a display, or an X11 display without the xcb-cursor library Qt 6.5+
    needs. QT_QPA_PLATFORM set by the user (offscreen, wayland, ...) is their choice."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        raise SystemSetupError(
            "no display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY is set); "
            "on a server use the commands instead (onnxstudio --help), or ssh -X")
    if os.environ.get("WAYLAND_DISPLAY"):
        return
    if not _loadable("libxcb-cursor.so.0"):
        raise SystemSetupError("Qt's X11 support needs the system library libxcb-cursor.so.0, "
                               f"which is missing: {install_hint('libxcb-cursor.so.0')}")
    display = os.environ["DISPLAY"]
    if not _x_server_answers(display):
        raise SystemSetupError(f"cannot connect to the X display {display!r} (DISPLAY): is "
                               "its server running, and may this user use it (XAUTHORITY)?")
