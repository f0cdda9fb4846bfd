"""The kernels that really run each model node, from the graph onnxruntime optimised.

onnxruntime's assignment record describes the graph before its provider-specific fusions
(FusedConv, NCHWc Conv, FusedMatMul, Gelu, SkipLayerNormalization). The graph it saves
with ``optimized_model_filepath`` is the one after them; `profile_map.OptimisedMap`
credits each of its kernels to the model nodes it replaced, as the profile does. Here
those credits rename the placements: the node a kernel is listed under gets
"NCHWc Conv (Conv + BatchNormalization + Relu)", the nodes it absorbed say where they went.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from onnxstudio.runner.profile import kernel_map

if TYPE_CHECKING:
    import onnx

    from onnxstudio.runner.placement import NodePlacement

NO_OPS = frozenset({"Identity", "Dropout"})  # removed, not run: no kernel absorbs them
# Kernels that only move data around another kernel (layout reorders, float16 casts, the
# reshapes around a Gemm made from a 3-D MatMul): a set is named after the one computing.
_HELPERS = frozenset({"ReorderInput", "ReorderOutput", "Cast", "Reshape", "Transpose",
                      "Squeeze", "Unsqueeze", "Flatten"})


def kernel_label(kernel: onnx.NodeProto) -> str:
    """A kernel's op as a user reads it: "NCHWc Conv", "FusedConv", "Gelu"."""
    if kernel.domain == "com.microsoft.nchwc":
        return f"NCHWc {kernel.op_type}"
    if kernel.domain in ("", "ai.onnx", "com.microsoft"):
        return kernel.op_type
    return f"{kernel.domain}.{kernel.op_type}"


def name_fused_kernels(graph: onnx.GraphProto, optimised: onnx.GraphProto,
                       nodes: list[NodePlacement]) -> None:
    """Rename ``nodes`` (placements of ``graph``'s nodes, in order) after the kernels of
    ``optimised`` that run them; nodes no kernel covers keep what the record said."""
    mapping = kernel_map(graph, optimised)
    kernels: dict[int, list[onnx.NodeProto]] = {}
    covers: dict[int, list[int]] = {}
    taken: set[int] = set()
    for kernel in optimised.node:
        hit = mapping.place(kernel.name, kernel.op_type) if kernel.name else None
        if hit is None:
            continue
        owner, covered = hit
        if owner not in kernels and owner in taken:
            continue  # already inside another kernel's set
        kernels.setdefault(owner, []).append(kernel)
        fresh = [i for i in covered
                 if i not in taken and i != owner and nodes[i].op_type not in NO_OPS]
        covers.setdefault(owner, []).extend(fresh)
        taken.update([owner, *fresh])
    for owner, ran in kernels.items():
        main = min(ran, key=lambda k: k.op_type in _HELPERS)  # the first computing one
        label, absorbed = kernel_label(main), sorted(set(covers[owner]))
        host = nodes[owner]
        if not absorbed and label == host.op_type:
            continue  # the model's node, run as it is
        members = sorted([owner, *absorbed])
        host.kernel = f"{label} ({' + '.join(nodes[i].op_type for i in members)})" \
            if absorbed else label
        host.absorbed = [nodes[i].id for i in absorbed]
        host.owner = None
        for i in absorbed:
            node = nodes[i]
            node.provider, node.owner, node.absorbed = host.provider, host.id, []
            node.kernel = f"folded into {label} '{host.name or host.id}'"
    _settle_owners(nodes)


def _settle_owners(nodes: list[NodePlacement]) -> None:
    """Point every folded node at the kernel it ends up in (a node the record had fold
    into one that a fused kernel then took follows it) and list it there."""
    index = {n.id: i for i, n in enumerate(nodes)}
    for n in nodes:
        n.absorbed = []
    for n in nodes:
        if n.owner is None:
            continue
        root = nodes[index[n.owner]]
        while root.owner is not None:
            root = nodes[index[root.owner]]
        if root.id != n.owner:
            n.owner, n.provider = root.id, root.provider
            n.kernel = f"folded into {root.kernel.split(' (')[0]} '{root.name or root.id}'"
        root.absorbed.append(n.id)
