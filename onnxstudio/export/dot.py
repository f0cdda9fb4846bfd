"""Graphviz DOT source of a layout: the same boxes, edges, labels and groups. Qt-free.

People feed it to their own Graphviz pipelines, so it describes the graph rather than
pinning our coordinates: expanded groups become nested clusters, and each node keeps
its op type, name and key attributes as the label.
"""

from __future__ import annotations

from collections.abc import Iterator

from onnxstudio.export.region import layout_bounds
from onnxstudio.layout.types import Box, GroupFrame, Layout
from onnxstudio.printable import printable
from onnxstudio.render.theme import LIGHT, Theme


def quote(text: str) -> str:
    """A DOT double-quoted string; newlines become centred line breaks, other control
    characters visible symbols (a raw \\x1b would reach the user's terminal or tools)."""
    escaped = printable(text).replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\r", "").replace("\n", "\\n") + '"'


def box_label(box: Box) -> str:
    """The same text lines the canvas shows: title, subtitle, details."""
    return "\n".join(part for part in (box.title, box.subtitle, *box.details) if part)


def _attrs(**attrs: str) -> str:
    return "[" + ", ".join(f"{k}={quote(v)}" for k, v in attrs.items() if v) + "]"


def _box_line(box: Box, indent: str, theme: Theme) -> str:
    shape = {"input": "ellipse", "output": "ellipse", "group": "box3d"}.get(box.kind, "box")
    style = "filled" if box.kind in ("input", "output") else "rounded,filled"
    category = {"input": "io", "output": "io", "group": "group"}.get(box.kind, box.category)
    look = theme.node(category)
    tooltip = box.subtitle if box.kind == "node" else ""
    return (f"{indent}{quote(box.id)} "
            + _attrs(label=box_label(box), shape=shape, style=style, fillcolor=look.fill,
                     fontcolor=look.text, color=look.border, tooltip=tooltip) + ";")


def _contains(outer: GroupFrame, inner: GroupFrame) -> bool:
    return (outer.x <= inner.x and outer.y <= inner.y
            and outer.x + outer.width >= inner.x + inner.width
            and outer.y + outer.height >= inner.y + inner.height)


def _group_tree(groups: list[GroupFrame]) -> dict[str | None, list[GroupFrame]]:
    """Parent of each frame: its scope prefix if that is a frame, else the frame around it."""
    ids = {g.id: g for g in groups}
    by_depth: dict[int, list[GroupFrame]] = {}
    for g in groups:
        by_depth.setdefault(g.depth, []).append(g)
    children: dict[str | None, list[GroupFrame]] = {}
    for g in groups:
        parent: str | None = None
        if g.depth > 0:
            key = g.id
            while parent is None and "/" in key:
                key = key.rsplit("/", 1)[0]
                if key in ids and ids[key].depth < g.depth and ids[key] is not g:
                    parent = key
            if parent is None:
                around = [c for c in by_depth.get(g.depth - 1, []) if _contains(c, g)]
                if around:
                    parent = min(around, key=lambda c: c.width * c.height).id
        children.setdefault(parent, []).append(g)
    return children


def _cluster(group: GroupFrame, children: dict[str | None, list[GroupFrame]],
             boxes: dict[str, Box], placed: set[str], depth: int,
             theme: Theme) -> Iterator[str]:
    indent = "  " * depth
    yield f"{indent}subgraph {quote('cluster_' + group.id)} {{"
    yield (f"{indent}  label={quote(group.label)}; style=\"rounded,filled\"; "
           f"color={quote(theme.group_border)}; fillcolor={quote(theme.group_fill(group.depth))};"
           f" fontcolor={quote(theme.group_label)};")
    for sub in children.get(group.id, []):
        yield from _cluster(sub, children, boxes, placed, depth + 1, theme)
    for member in group.members:
        box = boxes.get(member)
        if box is not None and member not in placed:
            placed.add(member)
            yield _box_line(box, indent + "  ", theme)
    yield f"{indent}}}"


def layout_to_dot(layout: Layout, name: str = "model", theme: Theme = LIGHT,
                  title: list[str] | None = None) -> str:
    """DOT source for ``layout``; every box is a node, every edge an edge.

    ``title`` lines (the title block) become the graph's label at the top.
    """
    lines = [
        f"digraph {quote(name)} {{",
        f"  graph [rankdir={layout.direction}, fontname=\"Helvetica\", fontsize=10, "
        f"nodesep=0.3, ranksep=0.4, bgcolor={quote(theme.canvas)}];",
        "  node [fontname=\"Helvetica\", fontsize=10, color=\"#6b7280\", margin=\"0.12,0.04\"];",
        f"  edge [fontname=\"Helvetica\", fontsize=8, color={quote(theme.edge)}, "
        f"fontcolor={quote(theme.edge_label)}, arrowsize=0.6];",
    ]
    if title:
        lines.append(f"  labelloc=t; labeljust=l; fontsize=12; label={quote(chr(10).join(title))};")
    _, _, w, h = layout_bounds(layout)
    lines.append(f"  // onnxstudio layout: {len(layout.boxes)} boxes, {len(layout.edges)} edges, "
                 f"{w:.0f}×{h:.0f} units")
    boxes = {b.id: b for b in layout.boxes}
    placed: set[str] = set()
    children = _group_tree(list(layout.groups))
    for group in children.get(None, []):
        lines.extend(_cluster(group, children, boxes, placed, 1, theme))
    lines.extend(_box_line(b, "  ", theme) for b in layout.boxes if b.id not in placed)
    for edge in layout.edges:
        attrs = {"label": edge.label, "tooltip": edge.value}
        if edge.back:
            attrs["constraint"] = "false"
        lines.append(f"  {quote(edge.source)} -> {quote(edge.target)} {_attrs(**attrs)};")
    lines.append("}")
    return "\n".join(lines) + "\n"
