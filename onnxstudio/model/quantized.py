"""Packed low-bit weights counted as the weights they stand for.

An int4 model keeps each MatMulNBits weight as uint8 blocks (two values a byte) with
per-block scales and zero points beside it: counted element by element, a 494 M
parameter model read 265 M. The operator says what the packed bytes mean: ``K`` × ``N``
weights (GatherBlockQuantized: the unpacked table), the scales and zero points being part
of how they are stored.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

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


def _unpack(packed: np.ndarray, bits: int) -> np.ndarray:
    """uint8 bytes -> their ``bits``-wide values, low bits first (onnxruntime's order)."""
    if bits == 8:
        return packed.astype(np.int32)
    low, high = packed & 0x0F, packed >> 4
    return np.stack([low, high], axis=-1).reshape(*packed.shape[:-1], -1).astype(np.int32)


def dequantize_nbits(graph: Graph, name: str, read: Callable[[str], np.ndarray]
                     ) -> np.ndarray | None:
    """The float weight [K, N] a MatMulNBits' packed input ``name`` stands for (as a MatMul
    would hold it), read through ``read``; None when ``name`` is not one (or not 4/8-bit)."""
    node = next((n for n in graph.nodes if n.op_type == "MatMulNBits" and
                 n.domain == "com.microsoft" and len(n.inputs) > 2 and n.inputs[1] == name),
                None)
    if node is None:
        return None
    k, n = _int_attr(graph, node.index, "K", 0), _int_attr(graph, node.index, "N", 0)
    bits = _int_attr(graph, node.index, "bits", 4)
    block = _int_attr(graph, node.index, "block_size", 0)
    if bits not in (4, 8) or not (k and n and block) or \
            (len(node.inputs) > 4 and node.inputs[4]):  # g_idx: act-order, not handled
        return None
    blocks = -(-k // block)
    q = _unpack(read(name).reshape(n, blocks, -1), bits)[:, :, :block]
    scales = read(node.inputs[2]).astype(np.float32).reshape(n, blocks)
    zero_name = node.inputs[3] if len(node.inputs) > 3 else ""
    if not zero_name:
        zero = np.full((n, blocks), 2 ** (bits - 1), np.float32)
    else:
        points = read(zero_name)
        if points.dtype == np.uint8:  # packed like the weight, padded per row
            zero = _unpack(points.reshape(n, -1), bits)[:, :blocks].astype(np.float32)
        else:
            zero = points.astype(np.float32).reshape(n, blocks)
    weight = (q - zero[:, :, None]) * scales[:, :, None]
    return np.ascontiguousarray(weight.reshape(n, blocks * block)[:, :k].T, dtype=np.float32)
