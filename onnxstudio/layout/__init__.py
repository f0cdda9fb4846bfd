"""Qt-free graph layout: scope groups, a layered layout per expanded group, plain results.

Public API::

    build_layout(graph, state=None, direction="TB", cancel=None, progress=None,
                 functions=None) -> Layout
    ExpandState, default_state(graph), graph_scope_tree(graph), LayoutCancelled
"""

from onnxstudio.layout.build import build_layout
from onnxstudio.layout.layered import LayoutCancelled
from onnxstudio.layout.scopes import ScopeGroup, ScopeTree, graph_scope_tree, scope_path
from onnxstudio.layout.state import ExpandState, default_state
from onnxstudio.layout.types import Box, Direction, Edge, GroupFrame, Layout

__all__ = [
    "Box",
    "Direction",
    "Edge",
    "ExpandState",
    "GroupFrame",
    "Layout",
    "LayoutCancelled",
    "ScopeGroup",
    "ScopeTree",
    "build_layout",
    "default_state",
    "graph_scope_tree",
    "scope_path",
]
