"""Hand-built layouts for the export tests, so they do not depend on the layout engine."""

from __future__ import annotations

import itertools

from onnxstudio.layout.types import Box, Edge, GroupFrame, Layout


def chain_layout(n: int = 4, direction: str = "TB") -> Layout:
    """n operator boxes in a column (or row), input and output boxes, one group frame."""
    boxes = [Box("in:x", "input", 40, 20, 80, 28, "x", "float32[1×3]")]
    ops = ["Conv", "Relu", "MaxPool", "Gemm", "Softmax", "Add", "MatMul"]
    cats = ["conv", "activation", "pool", "math", "activation", "math", "math"]
    for i in range(n):
        boxes.append(Box(f"n{i}", "node", 30, 80 + 60 * i, 100, 36, ops[i % len(ops)],
                         f"/block/{ops[i % len(ops)]}_{i}", [f"attr {i}"], cats[i % len(cats)]))
    boxes.append(Box("out:y", "output", 40, 80 + 60 * n, 80, 28, "y", "float32[1×10]"))
    edges = []
    ids = [b.id for b in boxes]
    for a, b in itertools.pairwise(ids):
        sa, sb = next(x for x in boxes if x.id == a), next(x for x in boxes if x.id == b)
        edges.append(Edge(a, b, f"t_{a}", "1×3", [(sa.center[0], sa.y + sa.height),
                                                  (sb.center[0], sb.y)]))
    groups = [GroupFrame("/block", "block", 20, 70, 120, 60 * n, n,
                         [f"n{i}" for i in range(n)])]
    layout = Layout(direction, 170, 80 + 60 * n + 48, boxes, groups, edges)  # type: ignore[arg-type]
    return layout


def grid_layout(cols: int, rows: int, w: float = 100, h: float = 36, gap: float = 40) -> Layout:
    """A cols × rows grid of boxes with edges down each column: big layouts, cheaply."""
    boxes, edges = [], []
    for c in range(cols):
        for r in range(rows):
            boxes.append(Box(f"n{c}_{r}", "node", 20 + c * (w + gap), 20 + r * (h + gap), w, h,
                             "Add" if (r + c) % 2 else "Conv", f"/g{c}/op{r}",
                             category="math" if (r + c) % 2 else "conv"))
            if r:
                x = 20 + c * (w + gap) + w / 2
                edges.append(Edge(f"n{c}_{r - 1}", f"n{c}_{r}", f"v{c}_{r}", "",
                                  [(x, 20 + (r - 1) * (h + gap) + h), (x, 20 + r * (h + gap))]))
    return Layout("TB", 40 + cols * (w + gap) - gap, 40 + rows * (h + gap) - gap, boxes, [], edges)
