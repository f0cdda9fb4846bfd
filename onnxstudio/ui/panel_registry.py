"""The registered panels, in dock order: a new panel is its own file in its room and one
entry in ``PANELS`` (its class, when it takes a ``PanelHost`` and has the ``Panel``
shape, or a small adapter here for a room object with its own vocabulary).

The saved dock layout's version follows this list (``panels.dock_state_version``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from onnxstudio.ui.edit.room import EditRoom
from onnxstudio.ui.insight.cost_insight import CostInsight
from onnxstudio.ui.insight.run_insight import RunInsight
from onnxstudio.ui.insight.run_panel import RunPanel
from onnxstudio.ui.inspector.inspector import Inspector
from onnxstudio.ui.inspector.property_tree import EDIT_ROLE
from onnxstudio.ui.panels import PanelFactory, PanelHost
from onnxstudio.ui.widgets.dock_spec import LEFT, DockSpec
from onnxstudio.ui.widgets.scrolled import scrolled

if TYPE_CHECKING:
    from onnxstudio.model import Model
    from onnxstudio.runner.pipeline import RunOutcome
    from onnxstudio.ui.canvas.model_tab import ModelTab



class _Quiet:
    """Hooks a panel does not need."""

    def show_model(self, tab: ModelTab | None, model: Model | None) -> None:
        pass

    def show_selection(self, tab: ModelTab, ids: list[str]) -> None:
        pass

    def show_run(self, tab: ModelTab | None, outcomes: Sequence[RunOutcome]) -> None:
        pass

    def shutdown(self) -> None:
        pass


class InspectorPanels(_Quiet):
    """Node, Model, Opsets, Weights (tabbed on the right) and Search (left, on Ctrl+F)."""

    def __init__(self, host: PanelHost) -> None:
        self._host = host
        self.inspector = Inspector(host.current_tab, lambda path: host.open_paths([path]),
                                   host.show_panel, host.window_widget())

    def docks(self) -> Sequence[DockSpec]:
        return [DockSpec(key, title, widget, area,
                         "on_request" if key == "search" else "tabbed")
                for key, (title, widget, area) in self.inspector.entries().items()]

    def show_model(self, tab: ModelTab | None, model: Model | None) -> None:
        self.inspector.show_model(model)

    def show_selection(self, tab: ModelTab, ids: list[str]) -> None:
        if tab.model is not None:
            self.inspector.show_selection(tab.model, ids)
            if ids:
                self._host.show_panel("node")


class RunDock(_Quiet):
    """The Run panel, tabbed with the inspector's."""

    def __init__(self, host: PanelHost) -> None:
        self._host = host
        self.panel = RunPanel()
        self.panel.statusMessage.connect(host.show_status)

    def docks(self) -> Sequence[DockSpec]:
        return [DockSpec("run", "Run", self.panel)]

    def show_model(self, tab: ModelTab | None, model: Model | None) -> None:
        if model is not None and tab is not None:
            self.panel.set_model(tab.path, model, model_bytes=tab.model_bytes)
        elif self._host.tab_count() == 0:
            self.panel.set_model(None)

    def shutdown(self) -> None:
        self.panel.shutdown()


class RunInsightDocks(_Quiet):
    """Profile, Tensor and Compare: they inspect the Run panel's last input."""

    def __init__(self, host: PanelHost) -> None:
        self.insight = RunInsight(host.current_tab, host.panel(RunDock).panel,
                                  host.window_widget())
        self.insight.statusMessage.connect(host.show_status)
        self.insight.showPanel.connect(host.show_panel)

    def docks(self) -> Sequence[DockSpec]:
        i = self.insight
        return [DockSpec(key, title, scrolled(widget), start="first_use", beside="run")
                for key, title, widget in (("profile", "Profile", i.profile_panel),
                                           ("tensor", "Tensor", i.tensor_dock),
                                           ("compare", "Compare", i.compare_panel))]

    def show_model(self, tab: ModelTab | None, model: Model | None) -> None:
        self.insight.show_model(tab, model)

    def show_selection(self, tab: ModelTab, ids: list[str]) -> None:
        self.insight.show_selection(tab, ids)

    def shutdown(self) -> None:
        self.insight.shutdown()


class CostDocks(_Quiet):
    """Cost table and Where It Runs."""

    def __init__(self, host: PanelHost) -> None:
        self.cost = CostInsight(host.current_tab, host.window_widget())
        self.cost.statusMessage.connect(host.show_status)
        self.cost.showPanel.connect(host.show_panel)

    def docks(self) -> Sequence[DockSpec]:
        return [DockSpec("cost", "Cost", scrolled(self.cost.cost_panel), start="first_use",
                         beside="run"),
                DockSpec("placement", "Where It Runs", scrolled(self.cost.placement_panel),
                         start="first_use", beside="run")]

    def show_model(self, tab: ModelTab | None, model: Model | None) -> None:
        self.cost.show_model(tab, model)

    def shutdown(self) -> None:
        self.cost.shutdown()


class EditHistory(_Quiet):
    """The edit room and its History dock (left, from the first edit on); the window
    wires its edits to the tabs (``ui/editing.py``)."""

    def __init__(self, host: PanelHost) -> None:
        self.room = EditRoom(host.window_widget(), host.current_tab, host.model_tabs)
        self.room.statusMessage.connect(host.show_status)
        inspector = host.panel(InspectorPanels).inspector
        inspector.editRequested.connect(self.room.edit_key)
        for tree in (inspector.node.tree, inspector.model.tree):
            tree.itemDoubleClicked.connect(  # an editor opens on a value the user may change
                lambda item, _column: self.room.prefetch() if any(
                    item.data(c, EDIT_ROLE) for c in (0, 1)) else None)
        self.room.act_history.triggered.connect(lambda: host.show_panel("history"))

    def docks(self) -> Sequence[DockSpec]:
        return [DockSpec("history", "History", self.room.history, LEFT, "on_request")]


PANELS: list[PanelFactory] = [InspectorPanels, RunDock, RunInsightDocks, CostDocks,
                              EditHistory]
