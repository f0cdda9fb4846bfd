"""The layout an export draws: the view's own, or one built from the CLI's options.

The GUI passes its current ExpandState and direction so the file matches the screen;
the CLI starts from the same default state the window opens with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from onnxstudio.export.options import ExportOptions

if TYPE_CHECKING:
    from onnxstudio.layout.state import ExpandState
    from onnxstudio.layout.types import Direction, Layout
    from onnxstudio.model.graph import Model


def export_state(model: Model, options: ExportOptions,
                 current: ExpandState | None = None) -> ExpandState:
    """The expand state the options ask for: current (or the default), all, or none."""
    from onnxstudio.layout.state import ExpandState, default_state

    if options.expand == "all":
        state = ExpandState()
        state.expand_all(model.graph, bodies=True)
        return state
    if options.expand == "collapsed":
        return ExpandState()
    return current.copy() if current is not None else default_state(model.graph)


def layout_for_export(model: Model, options: ExportOptions,
                      current: ExpandState | None = None,
                      direction: Direction | None = None,
                      cancel: Callable[[], bool] | None = None,
                      progress: Callable[[float], None] | None = None) -> Layout:
    """Lay the model out for export (runs the layout engine, or reads the layout cache;
    call it off the GUI thread)."""
    from onnxstudio.layout.batch import warm_pool
    from onnxstudio.layout.cache import layout_model, scope_tree

    if options.expand == "all":  # the worker pool starts while the groups are built
        warm_pool(model.memo("node_count_total", model.graph.node_count_total))
    scope_tree(model, cancel)  # from the layout cache when it can: states are made from it
    state = export_state(model, options, current)
    chosen: Direction = options.direction or direction or "TB"
    return layout_model(model, state, chosen, cancel, progress)
