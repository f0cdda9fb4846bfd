"""Per-node values painted over the graph: a profile heatmap or a divergence map.

The runner reports values per model node (``n12``); the drawing shows boxes, some of
which are collapsed groups standing for hundreds of nodes. This module folds node values
into the boxes of one layout (a group shows the total time, or the worst divergence, of
what it hides) and picks each box's colour, badge and tooltip line, so the canvas, the
exports and the tests all see the same numbers. Qt-free.
"""

from __future__ import annotations

import bisect
import html
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from onnxstudio.layout.scopes import graph_scope_tree
from onnxstudio.layout.types import Layout
from onnxstudio.model.formatting import format_duration
from onnxstudio.model.graph import Graph

if TYPE_CHECKING:
    from onnxstudio.model.cost import ModelCost
    from onnxstudio.runner.compare import Comparison
    from onnxstudio.runner.placement import Placement
    from onnxstudio.runner.profile import ProfileResult

OverlayKind = Literal["profile", "divergence", "stages", "diff", "cost", "placement"]

# Sequential yellow -> dark red (ColorBrewer YlOrRd): hot is dark, like a thermal map.
HEAT = ("#ffffcc", "#ffeda0", "#fed976", "#feb24c", "#fd8d3c", "#fc4e2a", "#e31a1c",
        "#b10026")
# Diverging green -> yellow -> red for "how far past the tolerance".
AGREE = ("#1a9850", "#66bd63", "#a6d96a", "#fee08b", "#fdae61", "#f46d43", "#d73027")
NO_VALUE = "#d9d9d9"  # boxes the run did not time / compare (folded constants, io)
# Pipeline stages: ColorBrewer Set3, light enough for dark text in either theme.
STAGE_FILLS = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
               "#b3de69", "#fccde5", "#ccebc5", "#ffed6f")
MIXED_STAGES = -1.0
# A model diff: one fixed colour per status, readable on light and dark canvases alike.
DIFF_STATUS = ("matched", "changed", "added", "removed")
DIFF_FILLS = ("#d3d7dc", "#f5b324", "#43a047", "#e53935")
DIFF_BADGES = ("", "~", "+", "−")


@dataclass(frozen=True)
class OverlayData:
    """What a run measured, per model node; rebuilt into an Overlay for each layout."""

    kind: OverlayKind
    title: str  # legend heading, e.g. "Time per node (ms)"
    values: Mapping[str, float]  # node id -> value (ms, or multiples of the tolerance)
    tips: Mapping[str, str] = field(default_factory=dict)  # node id -> tooltip line (HTML)
    total: float = 0.0  # profile: one run's time, for shares in groups' tooltips
    unit: str = ""  # cost: "bytes" or "" (a count); "peak": a group shows its largest


@dataclass(frozen=True)
class Overlay:
    """Colours, badges and tooltip lines for the boxes of one layout."""

    data: OverlayData
    fills: dict[str, str]
    badges: dict[str, str]
    tips: dict[str, str]
    legend: tuple[tuple[str, str], ...]  # (colour, caption), low to high
    missing_fill: str = NO_VALUE

    def fill(self, box_id: str) -> str:
        return self.fills.get(box_id, self.missing_fill)


def ramp(colours: tuple[str, ...], t: float) -> str:
    """The colour at ``t`` (0..1) along ``colours``, interpolated in sRGB."""
    t = min(1.0, max(0.0, t if math.isfinite(t) else 1.0))
    pos = t * (len(colours) - 1)
    i = min(int(pos), len(colours) - 2)
    f = pos - i
    a, b = colours[i], colours[i + 1]
    mixed = [round(int(a[k:k + 2], 16) * (1 - f) + int(b[k:k + 2], 16) * f) for k in (1, 3, 5)]
    return "#" + "".join(f"{c:02x}" for c in mixed)


def text_on(fill: str) -> str:
    """Black or white, whichever reads better on ``fill`` (WCAG relative luminance)."""
    def channel(hex2: str) -> float:
        c = int(hex2, 16) / 255.0
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    lum = 0.2126 * channel(fill[1:3]) + 0.7152 * channel(fill[3:5]) + 0.0722 * channel(fill[5:7])
    return "#1a1a1a" if lum > 0.22 else "#ffffff"


def box_values(layout: Layout, graph: Graph, values: Mapping[str, float],
               combine: Callable[[float, float], float]) -> dict[str, float]:
    """Node values folded into the boxes of ``layout``.

    A node drawn as its own box keeps its value; a node hidden in a collapsed group
    counts towards the innermost group that is drawn (``combine``: sum for time, max for
    divergence). Nodes that are not drawn at all (folded constants) are left out.
    """
    drawn = {b.id for b in layout.boxes}
    tree = graph_scope_tree(graph)
    out: dict[str, float] = {}
    for node_id, value in values.items():
        target: str | None = node_id if node_id in drawn else None
        if target is None:
            target = next((g.id for g in tree.ancestors(node_id) if g.id in drawn), None)
        if target is not None:
            out[target] = combine(out[target], value) if target in out else value
    return out


def build_overlay(layout: Layout, graph: Graph, data: OverlayData) -> Overlay:
    """Colours for every box of ``layout`` that a measured node falls in."""
    if data.kind == "profile":
        return _profile(layout, graph, data)
    if data.kind == "stages":
        return _stages(layout, graph, data)
    if data.kind == "diff":
        return _diff(layout, graph, data)
    if data.kind == "cost":
        return _cost(layout, graph, data)
    if data.kind == "placement":
        return _placement(layout, graph, data)
    return _divergence(layout, graph, data)


OUTLIER = 10.0  # the slowest box over this many times the 95th percentile: rank colours


@dataclass(frozen=True)
class HeatScale:
    """Where a time falls on the heat ramp (0..1). Square root of its share of the
    slowest: a node taking 1 % of it still shows a tint (linear washed a CNN out to
    white). When one box dwarfs the rest (over ``OUTLIER`` times the 95th percentile),
    by rank instead: the square root turned 99.99 % of the nodes the same colour."""

    ordered: tuple[float, ...]  # the positive times, ascending
    ranked: bool

    @classmethod
    def of(cls, times: Sequence[float]) -> HeatScale:
        ordered = tuple(sorted(t for t in times if t > 0))
        ranked = len(ordered) >= 20 and \
            ordered[-1] > OUTLIER * ordered[int(0.95 * (len(ordered) - 1))]
        return cls(ordered, ranked)

    def at(self, t: float) -> float:
        if t <= 0 or not self.ordered:
            return 0.0
        if self.ranked:
            return bisect.bisect_left(self.ordered, t) / (len(self.ordered) - 1)
        return math.sqrt(t / self.ordered[-1])

    def legend(self) -> tuple[tuple[str, str], ...]:
        """Four keys: shares of the slowest, or, by rank, the median, 90th and slowest."""
        top = self.ordered[-1] if self.ordered else 1.0
        if self.ranked:
            picks = [0.0] + [self.ordered[round(q * (len(self.ordered) - 1))]
                             for q in (0.5, 0.9, 1.0)]
        else:
            picks = [top * f for f in (0.0, 0.1, 0.5, 1.0)]
        return tuple((ramp(HEAT, self.at(t)), format_duration(t) if t else "0")
                     for t in picks)


def _profile(layout: Layout, graph: Graph, data: OverlayData) -> Overlay:
    per_box = box_values(layout, graph, data.values, lambda a, b: a + b)
    whole = data.total or sum(data.values.values()) or 1.0
    scale = HeatScale.of(list(per_box.values()))
    fills, badges, tips = {}, {}, {}
    for box_id, ms in per_box.items():
        fills[box_id] = ramp(HEAT, scale.at(ms))
        badges[box_id] = format_duration(ms)
        tip = data.tips.get(box_id, "")
        tips[box_id] = (f"Time {ms:.3f} ms per run ({ms / whole * 100:.1f} % of "
                        f"{whole:.3f} ms)" + (f"<br>{tip}" if tip else ""))
    drawn = {b.id for b in layout.boxes}
    for node_id, tip in data.tips.items():  # e.g. nodes fused into another's kernel
        if node_id not in tips and node_id in drawn:
            tips[node_id] = tip
    return Overlay(data, fills, badges, tips, scale.legend())


def _divergence(layout: Layout, graph: Graph, data: OverlayData) -> Overlay:
    per_box = box_values(layout, graph, data.values, max)
    fills, badges, tips = {}, {}, {}
    for box_id, ratio in per_box.items():
        fills[box_id] = ramp(AGREE, _divergence_position(ratio))
        badges[box_id] = "✗" if ratio > 1.0 else "✓"
        tip = data.tips.get(box_id, "")
        tips[box_id] = (f"{ratio:.3g} × tolerance" if math.isfinite(ratio) else
                        "shapes or values differ entirely") + (f"<br>{tip}" if tip else "")
    legend = tuple((ramp(AGREE, _divergence_position(r)), label)
                   for r, label in ((1e-4, "≤ 1e-4 × tol"), (1e-2, "1e-2 × tol"),
                                    (1.0, "= tolerance"), (100.0, "≥ 100 × tol")))
    return Overlay(data, fills, badges, tips, legend)


def _log_position(value: float, low: float, high: float) -> float:
    """Where ``value`` sits between ``low`` and ``high`` on a log scale (0..1)."""
    if value <= 0:
        return 0.0
    if high <= low:
        return 1.0
    return (math.log(max(value, low)) - math.log(low)) / (math.log(high) - math.log(low))


def _cost(layout: Layout, graph: Graph, data: OverlayData) -> Overlay:
    """A cost per box on a log scale from the smallest non-zero box to the largest, so
    a model where one node dominates still shades the rest (linear: all white)."""
    peak = data.unit.startswith("peak")
    per_box = box_values(layout, graph, data.values, max if peak else (lambda a, b: a + b))
    shown = format_cost(data.unit)
    positive = [v for v in per_box.values() if v > 0]
    low, high = (min(positive), max(positive)) if positive else (1.0, 1.0)
    whole = data.total or sum(data.values.values()) or 1.0
    fills, badges, tips = {}, {}, {}
    for box_id, value in per_box.items():
        fills[box_id] = ramp(HEAT, 0.08 + 0.92 * _log_position(value, low, high)) \
            if value > 0 else HEAT[0]
        if value > 0:  # a "0" on every Relu and Reshape would hide the ones that count
            badges[box_id] = shown(value)
        share = "" if peak else f" ({value / whole * 100:.1f} % of {shown(whole)})"
        tip = data.tips.get(box_id, "")
        tips[box_id] = f"{data.title}: {shown(value)}{share}" + (f"<br>{tip}" if tip else "")
    steps = 4
    legend = [(HEAT[0], "0")] + [
        (ramp(HEAT, 0.08 + 0.92 * k / steps), shown(low * (high / low) ** (k / steps)))
        for k in range(steps + 1)] if positive else [(HEAT[0], "0")]
    return Overlay(data, fills, badges, tips, tuple(legend))


def format_cost(unit: str) -> Callable[[float], str]:
    """How a cost reads: bytes as KB/MB, counts as 1.2K/3.4M/5.6B."""
    from onnxstudio.model.formatting import human_bytes, human_count

    if unit.endswith("bytes"):
        return human_bytes
    return lambda v: human_count(round(v))


def _placement(layout: Layout, graph: Graph, data: OverlayData) -> Overlay:
    """Each box in its execution provider's colour (a group spanning several: "mixed");
    nodes onnxruntime folded away (constants) stay grey."""
    run = {k: v for k, v in data.values.items() if v > 0}  # a group's constants do not
    per_box = box_values(layout, graph, run,  # make it "mixed"
                         lambda a, b: a if a == b else MIXED_STAGES)
    idle = box_values(layout, graph, {k: v for k, v in data.values.items() if v <= 0}, max)
    per_box.update({box: 0.0 for box in idle if box not in per_box})
    fills, badges, tips = {}, {}, {}
    for box_id, number in per_box.items():
        if number == MIXED_STAGES:
            badges[box_id] = "mixed"
            tips[box_id] = "runs on several providers: expand it to see which"
            continue
        if number > 0:
            fills[box_id] = stage_fill(int(number))
        badge = data.tips.get(f"badge {box_id}")
        if badge:
            badges[box_id] = badge
        tips[box_id] = data.tips.get(box_id, "")
    count = int(max(data.values.values(), default=0))
    legend = tuple((stage_fill(k), data.tips.get(f"legend {k}", str(k)))
                   for k in range(1, count + 1))
    if any(v == 0 for v in data.values.values()):
        legend += ((NO_VALUE, "not run (folded at load)"),)
    return Overlay(data, fills, badges, tips, legend)


def stage_fill(number: int) -> str:
    return STAGE_FILLS[(number - 1) % len(STAGE_FILLS)]


def _stages(layout: Layout, graph: Graph, data: OverlayData) -> Overlay:
    """Each box in its stage's colour; a collapsed group spanning several says so."""
    per_box = box_values(layout, graph, data.values,
                         lambda a, b: a if a == b else MIXED_STAGES)
    fills, badges, tips = {}, {}, {}
    for box_id, number in per_box.items():
        if number == MIXED_STAGES:
            badges[box_id] = "stages"
            tips[box_id] = "spans several stages: expand it to see the cut"
            continue
        fills[box_id] = stage_fill(int(number))
        badges[box_id] = f"S{int(number)}"
        tips[box_id] = data.tips.get(f"stage {int(number)}", f"Stage {int(number)}")
    count = int(max(data.values.values(), default=0))
    legend = tuple((stage_fill(k), data.tips.get(f"legend {k}", str(k)))
                   for k in range(1, count + 1))
    return Overlay(data, fills, badges, tips, legend)


def stages_overlay(stages: Sequence[tuple[Sequence[str], str, str]], title: str
                   ) -> OverlayData:
    """Stage k's node ids, its legend caption and its tooltip line, as an overlay. A node
    several stages carry (a constant, an LLM's mask lengths) shows the first of them."""
    values: dict[str, float] = {}
    tips: dict[str, str] = {}
    for number, (node_ids, caption, tip) in enumerate(stages, 1):
        for node_id in node_ids:
            values.setdefault(node_id, float(number))
        tips[f"legend {number}"] = caption
        tips[f"stage {number}"] = tip
    return OverlayData("stages", title, values, tips)


def _diff(layout: Layout, graph: Graph, data: OverlayData) -> Overlay:
    """Status colours; a group showing nodes of different statuses counts as changed."""
    per_box = box_values(layout, graph, data.values, lambda a, b: a if a == b else 1.0)
    fills, badges, tips = {}, {}, {}
    for box_id, code in per_box.items():
        i = int(code)
        fills[box_id] = DIFF_FILLS[i]
        if DIFF_BADGES[i]:
            badges[box_id] = DIFF_BADGES[i]
        tip = data.tips.get(box_id, "")
        tips[box_id] = DIFF_STATUS[i] + (f"<br>{tip}" if tip else "")
    legend = tuple(zip(DIFF_FILLS, DIFF_STATUS, strict=True))
    return Overlay(data, fills, badges, tips, legend, missing_fill=DIFF_FILLS[0])


def diff_overlay(title: str, statuses: Mapping[str, str],
                 tips: Mapping[str, str] | None = None) -> OverlayData:
    """Node id -> matched/changed/added/removed as an overlay for one side of a diff."""
    values = {node_id: float(DIFF_STATUS.index(status)) for node_id, status in statuses.items()}
    return OverlayData("diff", title, values, dict(tips or {}))


def _divergence_position(ratio: float) -> float:
    """1e-4 × tolerance or less -> 0 (green); the tolerance -> 2/3; 100 × it -> 1 (red)."""
    if not math.isfinite(ratio):
        return 1.0
    if ratio <= 0:
        return 0.0
    x = math.log10(ratio)
    return (x + 4.0) / 6.0 if x <= 0 else 2 / 3 + min(x, 2.0) / 6.0


def profile_overlay(result: ProfileResult) -> OverlayData:
    """Time per node; nodes fused into another's kernel say so (their time is counted
    there, once, so group totals stay true)."""
    names = {n.index: n.name or n.id for n in result.nodes}
    tips: dict[str, str] = {}
    for n in result.nodes:
        if n.covers:
            tips[n.id] = "one kernel with " + html.escape(
                ", ".join(names.get(c, f"n{c}") for c in n.covers))
    for covered, owner in result.fused_into.items():
        tips.setdefault(f"n{covered}", "fused into the kernel of "
                        + html.escape(names.get(owner, f"n{owner}")) + " (time counted there)")
    return OverlayData("profile", "Time per node", {n.id: n.time_ms for n in result.nodes},
                       tips, result.total_ms)


def divergence_overlay(result: Comparison) -> OverlayData:
    """Worst output of each node, in multiples of the tolerance (over 1 exceeds)."""
    tips: dict[str, str] = {}
    for d in result.intermediates:
        if d.producer is None:
            continue
        line = (f"{html.escape(d.name)}: max abs {d.max_abs:.3g}, max rel {d.max_rel:.3g}, "
                f"cosine {d.cosine:.6f}")
        key = f"n{d.producer}"
        tips[key] = tips[key] + "<br>" + line if key in tips else line
    title = f"{result.a.label} vs {result.b.label} (tolerance {result.tolerance:g})"
    return OverlayData("divergence", title, result.node_ratio(), tips)


# Cost metrics the canvas can be coloured by: key -> (legend title, unit).
COST_METRICS: dict[str, tuple[str, str]] = {
    "macs": ("MACs", ""),
    "params": ("Parameters", ""),
    "output_bytes": ("Output bytes", "bytes"),
    "memory_bytes": ("Memory at that step", "peak bytes"),
}


def cost_overlay(cost: ModelCost, metric: str) -> OverlayData:
    """One column of the cost table per node (log-scaled colours; groups sum, or show
    their largest step for memory)."""
    title, unit = COST_METRICS[metric]
    values = {n.id: float(getattr(n, metric)) for n in cost.nodes}
    tips = {n.id: f"{html.escape(n.op_type)}: {n.macs:,} MACs, {n.element_ops:,} element "
                  f"ops, {n.params:,} parameters" for n in cost.nodes}
    return OverlayData("cost", f"{title} (log scale)", values, tips,
                       float(sum(values.values())), unit)


def short_provider(name: str) -> str:
    return name.removesuffix("ExecutionProvider") or name


def placement_overlay(found: Placement) -> OverlayData:
    """Each node in its provider's colour (numbered in the order providers are listed);
    kernels that absorbed others, nodes folded into them and CPU fallbacks badged."""
    order = [p.name for p in found.providers]
    order += sorted({n.provider for n in found.nodes if n.provider} - set(order))
    counts = found.counts()
    used = [p for p in order if counts.get(p)]
    number = {p: k for k, p in enumerate(used, 1)}
    whole = max(1, len(found.nodes))
    values: dict[str, float] = {}
    tips: dict[str, str] = {}
    fallback = found.requested != "CPUExecutionProvider"
    for n in found.nodes:
        values[n.id] = float(number.get(n.provider, 0)) if n.provider else 0.0
        where = html.escape(n.provider) if n.provider else "not run"
        tips[n.id] = f"{where}: {html.escape(n.kernel)}"
        if n.owner is not None:
            tips[f"badge {n.id}"] = "folded"
        elif n.absorbed or "(" in n.kernel:
            tips[f"badge {n.id}"] = "fused"
        elif fallback and n.provider == "CPUExecutionProvider":
            tips[f"badge {n.id}"] = "CPU"
    for p, k in number.items():
        tips[f"legend {k}"] = f"{short_provider(p)} {100 * counts[p] / whole:.0f} %"
    return OverlayData("placement", f"Where it runs (asked for {short_provider(found.requested)})",
                       values, tips)
