"""Commands that work on the current tab's graph: Select Between, Split, Export Diagram."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QWidget

from onnxstudio.export.options import ExportResult
from onnxstudio.model.index import node_by_id
from onnxstudio.render.overlay import Overlay, OverlayData, build_overlay
from onnxstudio.ui.canvas.model_tab import ModelTab
from onnxstudio.ui.widgets.status import StatusBar

if TYPE_CHECKING:  # the dialogs and the path search load on first use, not at start-up
    from onnxstudio.ui.dialogs.merge_dialog import MergeDialog
    from onnxstudio.ui.dialogs.split_dialog import SplitDialog


def select_between(tab: ModelTab) -> str:
    """Select every node on the paths joining the tab's two selected main-graph nodes;
    the status-bar sentence that says what happened (or what to do first)."""
    from onnxstudio.model.paths import nodes_between
    from onnxstudio.ui.canvas.band_select import drawn_boxes

    assert tab.model is not None and tab.layout_data is not None
    graph = tab.model.graph
    ends = [n.index for n in (node_by_id(tab.model, i) for i in tab.view.selected_ids())
            if n is not None and "/" not in n.id]
    if len(ends) != 2:
        return "Select Between: select exactly two nodes of the main graph first " \
               "(Ctrl-click adds one)"
    between = nodes_between(graph, *ends)
    if not between:
        return f"No path joins {' and '.join(graph.nodes[i].label for i in ends)}"
    ids = [graph.nodes[i].id for i in sorted(between)]
    tab.view.set_selection(drawn_boxes(tab.layout_data, graph, ids))
    return (f"Selected {len(between):,} nodes between {graph.nodes[min(ends)].label} and "
            f"{graph.nodes[max(ends)].label}")


def open_split_dialog(parent: QWidget, tab: ModelTab) -> SplitDialog | None:
    """The split preview for ``tab``: its plan coloured on the canvas while it is open."""
    from onnxstudio.ui.dialogs.split_dialog import SplitDialog

    if tab.model is None:
        return None
    profile = tab.run_results.get("profile")
    times = profile.times_by_index if profile is not None else None  # on the planner
    before = tab.overlay_data
    layout, graph = tab.layout_data, tab.model.graph

    def fold(data: OverlayData) -> Overlay | None:  # on the dialog's planner
        return build_overlay(layout, graph, data) if layout is not None else None

    def preview(data: OverlayData | None, cut: set[str], folded: Overlay | None) -> None:
        # folded for the layout shown when the dialog opened; laid out again since, the
        # tab folds the colours itself
        tab.set_overlay(data if data is not None else before,
                        folded if tab.layout_data is layout else None)
        tab.view.mark_values(cut)

    dialog = SplitDialog(parent, tab.model, preview, times, fold)
    dialog.show()
    return dialog


def export_diagram(parent: QWidget, tab: ModelTab, status_bar: StatusBar) -> None:
    """File → Export Diagram… for ``tab``; when done the status bar says where it went,
    with a way to get there."""
    if tab.model is None or tab.layout_data is None:
        return
    from onnxstudio.ui.dialogs.export_dialog import start_export

    def exported(result: ExportResult) -> None:
        folder = result.path.parent
        count = f"{len(result.files)} tiles" if len(result.files) > 1 else result.path.name
        status_bar.show_action_message(
            f"Exported {count} to {folder}", "Open folder",
            lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))), 30000)

    flow = start_export(parent, tab.model, tab.layout_data, tab.view)
    if flow is not None:
        flow.finished.connect(exported)


def open_merge_dialog(parent: QWidget, opened: Callable[[str], object]) -> MergeDialog:
    """File → Merge Models…: non-modal; ``opened`` gets the merged model's path."""
    from onnxstudio.ui.dialogs.merge_dialog import MergeDialog

    dialog = MergeDialog(parent)
    dialog.merged.connect(opened)
    dialog.show()
    return dialog
