"""The whole cost table of a model: node costs (model/cost) summed per scope of the tree
the canvas draws (`scopes.graph_scope_tree`), so its scopes are the groups a user can
collapse. One entry point for the CLI and the window's task."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from onnxstudio.layout.scope_tree import ScopeGroup
from onnxstudio.layout.scopes import graph_scope_tree
from onnxstudio.model.cost import ModelCost, ScopeCost, concrete_sizes, model_cost
from onnxstudio.model.cost.shapes import sizes_apart
from onnxstudio.model.external import may_use_external_data
from onnxstudio.model.graph import Graph, Model
from onnxstudio.model.load import checked_copy, read_checked
from onnxstudio.model.open import ISOLATE_INFERENCE_NODES

if TYPE_CHECKING:
    import onnx


def cost_table(model: Model, proto: onnx.ModelProto,
               dims: Mapping[str, int] | None = None) -> ModelCost:
    """Costs of ``model`` (built from ``proto``) with symbolic ``dims`` sized (else 1)."""
    cost = model_cost(model, concrete_sizes(proto, dims))
    cost.scopes = scope_costs(model.graph, cost)
    return cost


def scope_costs(graph: Graph, cost: ModelCost) -> list[ScopeCost]:
    """Every group of ``graph``'s scope tree with the sums of the nodes inside, in tree
    order (a group before its children). Chunks of large flat groups are left out."""
    by_id = {n.id: n for n in cost.nodes}
    tree = graph_scope_tree(graph)
    out: list[ScopeCost] = []

    def visit(group: ScopeGroup, depth: int) -> tuple[int, int, int, int]:
        at = len(out)
        macs = params = output = count = 0
        boxes, groups = tree.part(group)
        for box in boxes:
            n = by_id.get(box)
            if n is not None:
                macs, params, output, count = (macs + n.macs, params + n.params,
                                               output + n.output_bytes, count + 1)
        for child in groups:
            m, p, o, c = visit(child, depth + (child.kind != "chunk"))
            macs, params, output, count = macs + m, params + p, output + o, count + c
        if group is not tree.root and group.kind != "chunk":
            out.insert(at, ScopeCost(group.id, depth, macs, params, output, count))
        return macs, params, output, count

    visit(tree.root, 0)
    return out


def cost_of_file(path: str | Path, model: Model, model_bytes: bytes | None = None,
                 dims: Mapping[str, int] | None = None,
                 kill_on: Callable[[Callable[[], None]], object] | None = None) -> ModelCost:
    """The cost table of the model a tab shows: its file, or its edited bytes, parsed
    again (through the loader's checks) for shape inference on a copy; off the GUI
    thread, and for a large graph in a child process (``sizes_apart``), which
    ``kill_on`` (the task's cancel token's ``watch``) stops."""
    if model.graph.node_count_total() > ISOLATE_INFERENCE_NODES and (
            model_bytes is None or not may_use_external_data(model_bytes)):
        cost = model_cost(model, sizes_apart(Path(path), model_bytes, dims, kill_on))
        cost.scopes = scope_costs(model.graph, cost)
        return cost
    checked = checked_copy(path, model_bytes) if model_bytes is not None else read_checked(path)
    return cost_table(model, checked.proto, dims)
