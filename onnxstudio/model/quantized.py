"""Packed low-bit weights counted as the weights they stand for.

An int4 model keeps each MatMulNBits weight as uint8 blocks (two values a byte) with
per-block scales and zero points beside it: counted element by element, a 494 M
parameter model read 265 M. The operator says what the packed bytes mean: ``K`` × ``N``
weights (GatherBlockQuantized: the unpacked table), the scales and zero points being part
of how they are stored.
"""

from __future__ import annotations

from onnxstudio.model.graph import Graph

_PACKED = {"MatMulNBits": (1, (2, 3)), "MatMulBnb4": (1, (2,)),
           "GatherBlockQuantized": (0, (2, 3))}
"""op -> (input holding the packed weight, inputs holding its scales and zero points)."""


def _int_attr(graph: Graph, index: int, name: str, default: int) -> int:
    attribute = graph.nodes[index].attribute(name)
    value = attribute.value if attribute is not None else default
    return value if isinstance(value, int) else default


def packed_weights(graph: Graph) -> dict[str, int]:
    """Packed weight (or its scales) name -> how many weights it stands for (0: none)."""
    found: dict[str, int] = {}
    for node in graph.nodes:
        slots = _PACKED.get(node.op_type) if node.domain == "com.microsoft" else None
        if slots is None or len(node.inputs) <= slots[0]:
            continue
        weight = graph.initializers.get(node.inputs[slots[0]])
        if weight is None:
            continue
        if node.op_type == "GatherBlockQuantized":
            bits = _int_attr(graph, node.index, "bits", 4)
            found[weight.name] = weight.elements * (8 // bits if weight.dtype == "uint8"
                                                    else 1)
        else:
            found[weight.name] = _int_attr(graph, node.index, "K", 0) * \
                _int_attr(graph, node.index, "N", 0)
        for slot in slots[1]:
            if slot < len(node.inputs) and node.inputs[slot] in graph.initializers:
                found.setdefault(node.inputs[slot], 0)
    return found


def unpacked_parameters(graph: Graph, counted: int) -> int:
    """``counted`` (elements of every weight) with packed weights taken at what they mean."""
    packed = packed_weights(graph)
    return counted + sum(n - graph.initializers[name].elements for name, n in packed.items())
