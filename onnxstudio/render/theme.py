"""Colour themes for the graph drawing, shared by the canvas and every export.

Colours are plain ``"#rrggbb"`` / ``"#rrggbbaa"`` strings so the Qt-free SVG backend and
the QPainter backend read the same values. Node headers carry the operator category's
colour (as Netron does); the body under the header stays neutral so attribute text is
readable in both themes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CATEGORIES = (
    "conv",
    "activation",
    "norm",
    "pool",
    "shape",
    "math",
    "control",
    "quant",
    "custom",
    "io",
    "group",
    "other",
)


@dataclass(frozen=True)
class NodeStyle:
    """How one operator category is painted: header fill, its text, and the outline."""

    fill: str
    text: str
    border: str


@dataclass(frozen=True)
class Theme:
    """Every colour the graph drawing uses; one instance per look (light, dark)."""

    name: str
    canvas: str
    nodes: dict[str, NodeStyle]
    node_body: str  # area under the header that holds detail lines
    node_body_text: str
    node_subtitle_text: str
    edge: str
    back_edge: str
    edge_label: str
    edge_label_bg: str
    group_fills: tuple[str, ...]  # expanded group frames, by nesting depth (cycled)
    group_border: str
    group_label: str
    group_count: str
    selection: str
    hover: str
    flash: str
    minimap_viewport: str
    minimap_bg: str
    extra: dict[str, str] = field(default_factory=dict)

    def node(self, category: str) -> NodeStyle:
        """Style for a category; unknown categories fall back to ``other``."""
        return self.nodes.get(category) or self.nodes["other"]

    def group_fill(self, depth: int) -> str:
        return self.group_fills[depth % len(self.group_fills)]


def _styles(fills: dict[str, str], text: str, border: str, light: dict[str, NodeStyle]
            ) -> dict[str, Any]:
    out = {cat: NodeStyle(fill, text, border) for cat, fill in fills.items()}
    out.update(light)
    return out


LIGHT = Theme(
    name="light",
    canvas="#ffffff",
    nodes=_styles(
        {
            "conv": "#33588a",
            "activation": "#8c3b2f",
            "norm": "#2f6b4d",
            "pool": "#2f6f73",
            "shape": "#6b5646",
            "math": "#4b5069",
            "control": "#6f4a8a",
            "quant": "#8a6a1c",
            "custom": "#9a3f67",
            "other": "#555b63",
        },
        text="#ffffff",
        border="#2b2f36",
        light={
            "io": NodeStyle("#e7e9ee", "#1f2329", "#8d949e"),
            "group": NodeStyle("#dde5f0", "#1f2a3a", "#7b8aa3"),
        },
    ),
    node_body="#ffffff",
    node_body_text="#24292f",
    node_subtitle_text="#dfe6ee",
    edge="#7d838c",
    back_edge="#b0607a",
    edge_label="#5f6670",
    edge_label_bg="#ffffffd9",
    group_fills=("#f4f6fa", "#eaeef5", "#e1e7f0", "#d8e0ec"),
    group_border="#c3ccd9",
    group_label="#3a4658",
    group_count="#7a8596",
    selection="#e8842a",
    hover="#2f7fe0",
    flash="#f2c94c",
    minimap_viewport="#2f7fe0",
    minimap_bg="#f7f8fa",
)

DARK = Theme(
    name="dark",
    canvas="#1e1f22",
    nodes=_styles(
        {
            "conv": "#3f6ea8",
            "activation": "#a04a3c",
            "norm": "#3a7d5c",
            "pool": "#378187",
            "shape": "#7d6654",
            "math": "#5b6180",
            "control": "#81599f",
            "quant": "#9c7a24",
            "custom": "#a84b76",
            "other": "#636a73",
        },
        text="#f4f5f7",
        border="#111214",
        light={
            "io": NodeStyle("#3a3d43", "#e3e5e8", "#6b717b"),
            "group": NodeStyle("#2e3a4c", "#dbe4f0", "#5d7191"),
        },
    ),
    node_body="#2b2d31",
    node_body_text="#d6d9de",
    node_subtitle_text="#e4e8ee",
    edge="#8a909a",
    back_edge="#c77a92",
    edge_label="#a3a9b2",
    edge_label_bg="#1e1f22d9",
    group_fills=("#25272b", "#2b2e33", "#32353b", "#393d44"),
    group_border="#4a4f59",
    group_label="#c9d1dc",
    group_count="#8a93a0",
    selection="#f0a04b",
    hover="#5aa2ff",
    flash="#f2c94c",
    minimap_viewport="#5aa2ff",
    minimap_bg="#26282c",
)

THEMES: dict[str, Theme] = {LIGHT.name: LIGHT, DARK.name: DARK}


def theme_named(name: str) -> Theme:
    """The theme called ``name`` ("light"/"dark"); light when unknown."""
    return THEMES.get(name, LIGHT)


__all__ = ["CATEGORIES", "DARK", "LIGHT", "THEMES", "NodeStyle", "Theme", "theme_named"]
