"""A Layout as JSON-ready plain data (``onnxstudio export MODEL OUT.json``), and back.

One coordinate space for everything (pixels at zoom 1, y down, boxes by their top-left
corner), so others can measure the drawing and reuse it. Keys are stable: renaming one
breaks consumers of exported files.
"""

from __future__ import annotations

from typing import Any

from onnxstudio.layout.types import Box, Edge, GroupFrame, Layout

FORMAT = "onnxstudio.layout"
VERSION = 1


def _r(v: float) -> float:
    return round(float(v), 2)


def layout_to_dict(layout: Layout) -> dict[str, Any]:
    """Plain dict (JSON-serialisable) describing every box, group frame and edge."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "direction": layout.direction,
        "width": _r(layout.width),
        "height": _r(layout.height),
        "nodes": [
            {
                "id": b.id,
                "kind": b.kind,
                "name": b.subtitle if b.kind == "node" else b.title,
                "op_type": b.title if b.kind == "node" else "",
                "title": b.title,
                "subtitle": b.subtitle,
                "details": list(b.details),
                "category": b.category,
                "expandable": b.expandable,
                "box": {"x": _r(b.x), "y": _r(b.y), "width": _r(b.width),
                        "height": _r(b.height)},
            }
            for b in layout.boxes
        ],
        "groups": [
            {
                "id": g.id,
                "label": g.label,
                "kind": g.kind,
                "depth": g.depth,
                "node_count": g.node_count,
                "members": list(g.members),
                "box": {"x": _r(g.x), "y": _r(g.y), "width": _r(g.width),
                        "height": _r(g.height)},
            }
            for g in layout.groups
        ],
        "edges": [
            {
                "source": e.source,
                "target": e.target,
                "value": e.value,
                "label": e.label,
                "back": e.back,
                "points": [[_r(x), _r(y)] for x, y in e.points],
            }
            for e in layout.edges
        ],
    }


def layout_from_dict(data: dict[str, Any]) -> Layout:
    """Inverse of ``layout_to_dict`` (coordinates rounded to 0.01 px)."""
    if data.get("format") != FORMAT:
        raise ValueError("not an onnxstudio layout")
    boxes = [
        Box(n["id"], n["kind"], n["box"]["x"], n["box"]["y"], n["box"]["width"],
            n["box"]["height"], n["title"], n["subtitle"], tuple(n["details"]), n["category"],
            n["expandable"])
        for n in data["nodes"]
    ]
    groups = [
        GroupFrame(g["id"], g["label"], g["box"]["x"], g["box"]["y"], g["box"]["width"],
                   g["box"]["height"], g["node_count"], list(g["members"]), g["depth"],
                   g["kind"])
        for g in data["groups"]
    ]
    edges = [
        Edge(e["source"], e["target"], e["value"], e["label"],
             [(p[0], p[1]) for p in e["points"]], e["back"])
        for e in data["edges"]
    ]
    return Layout(data["direction"], data["width"], data["height"], boxes, groups, edges)
