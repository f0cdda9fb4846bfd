"""Panels with one shape (issue 34): every dock of the window comes from a ``Panel``
registered in ``ui/panel_registry.py``; ``PanelSet`` makes their docks, arranges them,
feeds them the current model and selection, and derives the version of the saved dock
layout from them, so adding, removing or reordering a panel never needs a hand bump."""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from PySide6.QtWidgets import QDockWidget, QMainWindow

from onnxstudio.ui.widgets.dock_spec import DockSpec

if TYPE_CHECKING:
    from onnxstudio.model import Model
    from onnxstudio.runner.pipeline import RunOutcome
    from onnxstudio.ui.canvas.model_tab import ModelTab


class Panel(Protocol):
    """What the window asks of every panel: its docks, then the hooks it calls."""

    def docks(self) -> Sequence[DockSpec]: ...

    def show_model(self, tab: ModelTab | None, model: Model | None) -> None:
        """The current tab changed, loaded, or its model was edited."""

    def show_selection(self, tab: ModelTab, ids: list[str]) -> None:
        """The boxes selected on the current canvas."""

    def show_run(self, tab: ModelTab | None, outcomes: Sequence[RunOutcome]) -> None:
        """The Run panel finished a run of the current tab's model."""

    def shutdown(self) -> None:
        """The window closes: stop background work."""


P = TypeVar("P", bound=Panel)


class PanelHost(Protocol):
    """What a panel may ask of the window while it is built and afterwards."""

    def window_widget(self) -> QMainWindow: ...

    def current_tab(self) -> ModelTab | None: ...

    def model_tabs(self) -> list[ModelTab]: ...

    def tab_count(self) -> int: ...

    def open_paths(self, paths: list[str]) -> list[ModelTab]: ...

    def show_panel(self, key: str) -> None: ...

    def show_status(self, text: str) -> None: ...

    def panel(self, kind: type[P]) -> P:
        """A panel registered before the asking one (the run insight reads the run panel)."""


PanelFactory = Callable[[PanelHost], Panel]


def dock_state_version(names: Sequence[str]) -> int:
    """The version QMainWindow.saveState/restoreState are given: a hash of the docks'
    object names in order. A layout saved with other docks is then refused by Qt
    (restoreState returns False) and the first-start layout is used, never misapplied."""
    return zlib.crc32("\n".join(names).encode()) & 0x7FFFFFFF


class PanelSet:
    """The registered panels of one window and the docks made for them."""

    def __init__(self, window: QMainWindow) -> None:
        self.window = window
        self.panels: list[Panel] = []
        self.specs: dict[str, DockSpec] = {}
        self.docks: dict[str, QDockWidget] = {}

    def build(self, host: PanelHost, factories: Sequence[PanelFactory]) -> None:
        """Each factory's panel in order, a dock for each of its specs, then the first-start
        arrangement (tab groups, hidden until first use)."""
        for make in factories:
            panel = make(host)
            self.panels.append(panel)
            for spec in panel.docks():
                self._add(spec)
        for area in {s.area for s in self.specs.values()}:
            tabbed = [self.docks[s.key] for s in self.specs.values()
                      if s.area == area and s.start == "tabbed"]
            for first, other in itertools.pairwise(tabbed):
                self.window.tabifyDockWidget(first, other)
            if tabbed:
                tabbed[0].raise_()
        for key in self.keys("first_use"):  # a saved state may show them again
            self.docks[key].hide()

    def _add(self, spec: DockSpec) -> None:
        if spec.key in self.specs:
            raise ValueError(f"two panels register the dock {spec.key!r}")
        dock = QDockWidget(spec.title, self.window)
        dock.setObjectName(spec.object_name)
        dock.setWidget(spec.widget)
        self.window.addDockWidget(spec.area, dock)
        self.specs[spec.key] = spec
        self.docks[spec.key] = dock

    def keys(self, start: str) -> list[str]:
        return [k for k, s in self.specs.items() if s.start == start]

    def find(self, kind: type[P]) -> P:
        found = next((p for p in self.panels if isinstance(p, kind)), None)
        if found is None:
            raise LookupError(f"no {kind.__name__} registered before this panel")
        return found

    @property
    def version(self) -> int:
        return dock_state_version([s.object_name for s in self.specs.values()])

    def show(self, key: str) -> None:
        """Show and raise the dock ``key``; a first-use dock joins its neighbour's tabs."""
        dock = self.docks.get(key)
        if dock is None:
            return
        spec = self.specs[key]
        near = self.docks.get(spec.beside)
        if spec.start == "first_use" and dock.isHidden() and near is not None \
                and not near.isHidden() and not near.isFloating() \
                and dock not in self.window.tabifiedDockWidgets(near):
            # Tabbed on first use, not up front: a tab group of hidden docks makes
            # restoreState grow the window past its saved geometry.
            self.window.tabifyDockWidget(near, dock)
        dock.show()
        dock.raise_()

    def show_model(self, tab: ModelTab | None, model: Model | None) -> None:
        for panel in self.panels:
            panel.show_model(tab, model)

    def show_selection(self, tab: ModelTab, ids: list[str]) -> None:
        for panel in self.panels:
            panel.show_selection(tab, ids)

    def show_run(self, tab: ModelTab | None, outcomes: Sequence[RunOutcome]) -> None:
        for panel in self.panels:
            panel.show_run(tab, outcomes)

    def shutdown(self) -> None:
        for panel in self.panels:
            panel.shutdown()
