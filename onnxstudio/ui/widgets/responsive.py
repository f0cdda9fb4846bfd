"""A panel body that is a column in a narrow dock and two columns in a wide one.

The run-inspection panels were drawn for a ~380 px side dock; docked along the bottom of
the window they are wide and short. `SideBySide` holds a *side* widget (controls, summary)
and a *main* widget (tables, tabs): below the breakpoint the side sits above the main
widget as before; from the breakpoint on the side becomes a fixed-width column on the left
that scrolls vertically on its own, and the main widget takes the rest of the width and
all of the height.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QBoxLayout, QFrame, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

BREAKPOINT = 760  # from this width on, side by side
SIDE_WIDTH = 340  # the side column when side by side


class SideBySide(QWidget):
    """``side`` above ``main`` when narrow, ``side`` left of ``main`` when wide.

    The arrangement follows this widget's own width (``breakpoint``); ``wide()`` tells
    which one is shown. Both widgets stay the same objects: only where they sit changes.
    ``arranged`` tells the owner, e.g. to give a table more minimum height when stacked.
    """

    arranged = Signal(bool)  # wide

    def __init__(self, side: QWidget, main: QWidget, *, breakpoint: int = BREAKPOINT,
                 side_width: int = SIDE_WIDTH, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.breakpoint = breakpoint
        self.side_width = side_width
        self._side = side
        self._main = main
        self._wide = False
        # The side's content keeps to the top of its column when the column is taller.
        self._holder = QWidget()
        holder_layout = QVBoxLayout(self._holder)
        holder_layout.setContentsMargins(0, 0, 0, 0)
        holder_layout.setSpacing(0)
        holder_layout.addWidget(side)
        holder_layout.addStretch(1)
        # Only used when wide: a short dock scrolls the controls, never the tables.
        self._scroll = QScrollArea(self)
        self._scroll.setWidgetResizable(True)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._scroll.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Ignored)
        self._scroll.hide()
        self._layout = QBoxLayout(QBoxLayout.Direction.TopToBottom, self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.addWidget(self._holder)
        self._layout.addWidget(main, 1)

    def wide(self) -> bool:
        """True while side and main sit next to each other."""
        return self._wide

    def side_widget(self) -> QWidget:
        return self._side

    def main_widget(self) -> QWidget:
        return self._main

    def side_area(self) -> QWidget:
        """What holds the side right now: its scrolling column (wide) or its row (narrow)."""
        return self._scroll if self._wide else self._holder

    def set_wide(self, wide: bool) -> None:
        """Switch the arrangement (resizing does this; exposed for callers and tests)."""
        if wide == self._wide:
            return
        self._wide = wide
        if wide:
            self._layout.removeWidget(self._holder)
            self._scroll.setWidget(self._holder)
            self._scroll.setFixedWidth(self.side_width)
            self._layout.insertWidget(0, self._scroll)
            self._scroll.show()
            self._layout.setDirection(QBoxLayout.Direction.LeftToRight)
            self._layout.setSpacing(10)
        else:
            self._layout.removeWidget(self._scroll)
            self._scroll.hide()
            self._scroll.takeWidget()
            self._layout.insertWidget(0, self._holder)
            self._layout.setDirection(QBoxLayout.Direction.TopToBottom)
            self._layout.setSpacing(-1)  # the style's default
        self._holder.show()
        self.updateGeometry()  # the owner's layout re-asks hasHeightForWidth
        self.arranged.emit(wide)

    def sizeHint(self) -> QSize:
        """Side by side, no more height than the minimum is asked for: the columns take
        what height the dock has, and a scroll area around an owner whose height depends
        on its width (it sizes that owner to its preferred height) cannot stretch it."""
        hint = super().sizeHint()
        if self._wide:
            hint.setHeight(self.minimumSizeHint().height())
        return hint

    def hasHeightForWidth(self) -> bool:
        """Stacked, wrapped labels make the height depend on the width, as usual. Side by
        side it must not: a scroll area around the panel (widgetResizable) would then
        grow the panel to its *preferred* height, so a short dock scrolled the whole
        panel instead of giving the tables what height there is."""
        return False if self._wide else super().hasHeightForWidth()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.set_wide(event.size().width() >= self.breakpoint)
