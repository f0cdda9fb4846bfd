"""The inspector's five panels and their routes to the canvas, in one object.

The main window creates one ``Inspector`` and calls
``entries()`` once, then ``show_model``/``show_selection`` as tabs and selection change.
Panel requests go to the current tab: jump → ``ModelTab.reveal`` (expands the groups
and bodies on the way and centres the box), body link → expand that node in place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QWidget

from onnxstudio.layout.state import ExpandState, shown_as
from onnxstudio.layout.types import Layout
from onnxstudio.model.graph import Model
from onnxstudio.ui.inspector.model_panel import ModelPanel
from onnxstudio.ui.inspector.node_panel import NodePanel
from onnxstudio.ui.inspector.opset_panel import OpsetPanel
from onnxstudio.ui.inspector.search_panel import SearchPanel
from onnxstudio.ui.inspector.weights_panel import WeightsPanel

if TYPE_CHECKING:
    from onnxstudio.ui.canvas.model_tab import ModelTab

Right = Qt.DockWidgetArea.RightDockWidgetArea
Left = Qt.DockWidgetArea.LeftDockWidgetArea


class Inspector(QObject):
    """Owns the node, model, opset, weights and search panels of one window."""

    editRequested = Signal(str, str)  # a value edited in place: (edit key, new text)

    def __init__(self, current_tab: Callable[[], ModelTab | None],
                 open_path: Callable[[str], object] | None = None,
                 show_panel: Callable[[str], None] | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._current_tab = current_tab
        self._show_panel = show_panel or (lambda _key: None)
        self.node = NodePanel()
        self.model = ModelPanel()
        self.opsets = OpsetPanel()
        self.weights = WeightsPanel()
        self.search = SearchPanel()
        self._model: Model | None = None

        self.node.jumpToNode.connect(self.reveal)
        self.model.jumpToNode.connect(self.reveal)
        self.search.resultActivated.connect(self.reveal)
        self.node.expandBody.connect(self.expand_body)
        self.node.openInitializer.connect(self.open_initializer)
        self.search.initializerActivated.connect(self.open_initializer)
        self.search.matchesChanged.connect(self._highlight)
        self.node.tree.valueEdited.connect(self.editRequested)
        self.model.tree.valueEdited.connect(self.editRequested)
        if open_path is not None:
            self.opsets.openConverted.connect(open_path)

    def entries(self) -> dict[str, tuple[str, QWidget, Qt.DockWidgetArea]]:
        """(title, widget, area) per panel key: the window makes each a dock."""
        return {
            "node": ("Node", self.node, Right),
            "model": ("Model", self.model, Right),
            "opsets": ("Opsets", self.opsets, Right),
            "weights": ("Weights", self.weights, Right),
            "search": ("Search", self.search, Left),
        }

    # --- fed by the window ------------------------------------------------------------

    def show_model(self, model: Model | None) -> None:
        if model is self._model:
            return
        self._model = model
        self.node.set_model(model)
        self.model.set_model(model)
        self.opsets.set_model(model)
        self.weights.set_model(model)
        self.search.set_model(model)

    def refresh(self, model: Model, box_ids: list[str]) -> None:
        """``model`` changed in place (its inferred shapes arrived): re-show what shows
        value types or warnings."""
        if model is not self._model:
            return
        self.model.set_model(model)
        self.show_selection(model, box_ids)

    def show_selection(self, model: Model | None, box_ids: list[str]) -> None:
        self.show_model(model)
        if model is None or not box_ids:
            return  # keep showing the last node: an empty click should not blank the panel
        self.node.show_selection(box_ids)

    def follow_layout(self, model: Model | None, state: ExpandState, layout: Layout) -> None:
        """After a collapse hid the node shown, show the group that now holds it."""
        box_id = self.node.box_id
        if model is None or model is not self._model or box_id is None:
            return
        if layout.box(box_id) is not None or box_id.startswith(("in:", "out:")):
            return
        holder = shown_as(model.graph, state, box_id)
        if holder != box_id and layout.box(holder) is not None:
            self.node.show_summary(model, [holder])

    # --- routed to the canvas ---------------------------------------------------------

    def reveal(self, box_id: str) -> None:
        tab = self._current_tab()
        if tab is not None:
            tab.reveal(box_id)

    def expand_body(self, node_id: str) -> None:
        tab = self._current_tab()
        if tab is None:
            return
        if tab.model is not None and node_id not in tab.state.nodes:
            tab.state.reveal(tab.model.graph, node_id)  # the groups around the node
            tab.state.nodes.add(node_id)  # and the node's own bodies, in place
            tab.relayout()
        tab.reveal(node_id)

    def open_initializer(self, name: str) -> None:
        if self._model is not None:
            self._show_panel("weights")
            self.weights.show_initializer(self._model, name)

    def _highlight(self, ids: set[str]) -> None:
        tab = self._current_tab()
        setter = getattr(tab.view, "set_highlighted", None) if tab is not None else None
        if setter is not None:
            setter(ids)
