"""The cost table: what each node computes, stores and keeps alive (Qt-free).

``concrete_sizes`` fixes symbolic dims and infers sizes; ``model_cost`` counts per node
(``ops`` holds the per-operator formulas) and in total; scopes are summed by
``layout/scope_costs.py`` over the scope tree the canvas draws."""

from onnxstudio.model.cost.compute import ModelCost, NodeCost, ScopeCost, model_cost
from onnxstudio.model.cost.shapes import Sizes, concrete_sizes

__all__ = ["ModelCost", "NodeCost", "ScopeCost", "Sizes", "concrete_sizes", "model_cost"]
