"""Light/dark/system appearance of the whole window (the canvas follows via render.theme).

The canvases take their theme from the palette the window shows (``shown``), never from
the setting apart from it: a window built without ``run_app`` once read "dark" from the
settings for its canvas while its palette stayed light. ``ThemeFollower`` re-reads the
palette whenever it changes, and re-applies "system" when the desktop's scheme changes.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, Slot
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QWidget

APPEARANCES = ("system", "light", "dark")


def resolve(appearance: str, scheme: Qt.ColorScheme | None = None) -> str:
    """'light' or 'dark'; 'system' follows the desktop's colour scheme (``scheme`` when
    given: the one a change signal just announced)."""
    if appearance in ("light", "dark"):
        return appearance
    if scheme is None:
        scheme = QGuiApplication.styleHints().colorScheme()
    return "dark" if scheme == Qt.ColorScheme.Dark else "light"


def shown(palette: QPalette) -> str:
    """The theme a window with ``palette`` shows: 'dark' when its background is."""
    return "dark" if palette.color(QPalette.ColorRole.Window).lightness() < 128 else "light"


def _dark_palette() -> QPalette:
    p = QPalette()
    roles = {
        QPalette.ColorRole.Window: "#232529",
        QPalette.ColorRole.WindowText: "#e6e6e6",
        QPalette.ColorRole.Base: "#1b1d21",
        QPalette.ColorRole.AlternateBase: "#272a2f",
        QPalette.ColorRole.ToolTipBase: "#30343a",
        QPalette.ColorRole.ToolTipText: "#f0f0f0",
        QPalette.ColorRole.Text: "#e6e6e6",
        QPalette.ColorRole.Button: "#2c2f34",
        QPalette.ColorRole.ButtonText: "#e6e6e6",
        QPalette.ColorRole.BrightText: "#ff6b6b",
        QPalette.ColorRole.Link: "#6cb2ff",
        QPalette.ColorRole.Highlight: "#3d7bd9",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.PlaceholderText: "#8a8f98",
        QPalette.ColorRole.Mid: "#3a3e45",
        QPalette.ColorRole.Dark: "#16181b",
        QPalette.ColorRole.Midlight: "#34383e",
        # Fusion draws a tab bar's base line and frames' light edges in Light: left
        # white, it drew a white line under the tabs
        QPalette.ColorRole.Light: "#3f434a",
        QPalette.ColorRole.Shadow: "#0e0f11",
    }
    for role, color in roles.items():
        p.setColor(role, QColor(color))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText,
                 QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6f747c"))
    return p


# Fusion outlines a check box in the window colour darkened: on the dark palette the
# Search panel's "Aa" and ".*" boxes were invisible.
DARK_SHEET = """
QCheckBox::indicator { width: 12px; height: 12px; border: 1px solid #8a8f98;
                       border-radius: 2px; background: #1b1d21; }
QCheckBox::indicator:checked { background: #3d7bd9; border-color: #6cb2ff; }
QCheckBox::indicator:disabled { border-color: #4a4f57; }
"""


def apply(app: QApplication, appearance: str, scheme: Qt.ColorScheme | None = None) -> str:
    """Style the application; returns the resolved 'light' or 'dark'."""
    resolved = resolve(appearance, scheme)
    app.setStyle("Fusion")
    app.setPalette(_dark_palette() if resolved == "dark" else app.style().standardPalette())
    app.setStyleSheet(DARK_SHEET if resolved == "dark" else "")
    _repolish(app)
    return resolved


def _repolish(app: QApplication) -> None:
    """Re-resolve every style sheet: one using ``palette(...)`` keeps the colours of
    the palette it was first polished with, so after a live switch to dark the welcome
    page's text stayed black. Setting the sheet again makes Qt resolve it anew."""
    for top in app.topLevelWidgets():
        for widget in [top, *top.findChildren(QWidget)]:
            sheet = widget.styleSheet()
            if sheet:
                widget.setStyleSheet("")
                widget.setStyleSheet(sheet)
            widget.update()


class ThemeFollower(QObject):
    """Tells ``on_theme`` the theme ``window`` shows each time its palette changes (a
    switch in View → Theme, or any code setting the application's palette), and
    re-applies 'system' when the desktop's colour scheme changes while ``appearance_of``
    says the user chose 'system'."""

    def __init__(self, window: QWidget, appearance_of: Callable[[], str],
                 on_theme: Callable[[str], None]) -> None:
        super().__init__(window)
        self._window, self._appearance_of, self._on_theme = window, appearance_of, on_theme
        window.installEventFilter(self)
        QGuiApplication.styleHints().colorSchemeChanged.connect(self.scheme_changed)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._window and event.type() in (
                QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._on_theme(shown(self._window.palette()))
        return False

    @Slot(Qt.ColorScheme)
    def scheme_changed(self, scheme: Qt.ColorScheme) -> None:
        app = QApplication.instance()
        if self._appearance_of() == "system" and isinstance(app, QApplication):
            apply(app, "system", scheme)  # the palette's change event moves the canvases
