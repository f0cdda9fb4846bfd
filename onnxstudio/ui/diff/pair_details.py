"""Both sides of one node of a diff, side by side, what differs highlighted."""

from __future__ import annotations

import html
import re
from typing import Any

from PySide6.QtGui import QTextOption
from PySide6.QtWidgets import QTextBrowser, QWidget

from onnxstudio.model.diff import NodeDiff
from onnxstudio.model.diff_nodes import Change
from onnxstudio.model.diff_weights import WeightSide
from onnxstudio.model.graph import Node
from onnxstudio.render.overlay import DIFF_FILLS, DIFF_STATUS, text_on

HIGHLIGHT = DIFF_FILLS[1]  # the "changed" amber
# Where a long value may wrap: after a scope's "/", "_", ",", "×" or "[" (never inside a
# number). Without them "float32[N×16×4×4]" and scoped names were unbreakable, the
# table grew past a 220 px pane and the B column (the point of a diff) went off-screen.
_BREAK_AFTER = re.compile(r"([/_,×\[(])(?=\S)")
EMPTY = ("<p style='color:gray'>Click a node on either side, or a row of the list, "
         "to compare its two versions here.</p>")


def _text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.7g}"
    if isinstance(value, list):
        shown = ", ".join(_text(v) for v in value[:16])
        return "[" + shown + (", …" if len(value) > 16 else "") + "]"
    return _BREAK_AFTER.sub("\\1\u200b", html.escape(str(value)))


def _row(label: str, a: Any, b: Any, differs: bool) -> str:
    style = f" style='background:{HIGHLIGHT}; color:{text_on(HIGHLIGHT)}'" if differs else ""
    return (f"<tr{style}><td><b>{_text(label)}</b></td><td>{_text(a)}</td>"
            f"<td>{_text(b)}</td></tr>")


def _weight_rows(change: Change) -> list[str]:
    w = change.weight
    assert w is not None

    def stat(side: WeightSide, field: str) -> Any:
        value = getattr(side, field)
        return f"{value:.5g}" if isinstance(value, float) else value

    rows = [_row(f"weight {change.name}", w.a.describe(), w.b.describe(),
                 w.a.describe() != w.b.describe())]
    for field in ("mean", "std", "digest"):
        a, b = stat(w.a, field), stat(w.b, field)
        rows.append(_row(f"  {'hash' if field == 'digest' else field}", a, b, a != b))
    if w.max_abs is not None:
        rows.append(_row("  max |a − b|", "", f"{w.max_abs:.5g}", w.max_abs > 0))
    return rows


def pair_html(entry: NodeDiff | None, absorbed: Node | None = None) -> str:
    """The page for one diff entry (or the empty-state hint); ``absorbed``: the B node
    that now gives a removed node's result (what it was fused into)."""
    if entry is None:
        return EMPTY
    fill = DIFF_FILLS[DIFF_STATUS.index(entry.status)]
    head = (f"<p><span style='background:{fill}; color:{text_on(fill)}; padding:2px 6px'>"
            f"&nbsp;{entry.status}&nbsp;</span> <b>{html.escape(entry.op_type)}</b></p>")
    if absorbed is not None:
        head += (f"<p>Its result now comes from <b>{html.escape(absorbed.op_type)}</b> "
                 f"{html.escape(absorbed.label)} in B (fused or folded into it).</p>")
    a, b = entry.a, entry.b
    kinds = {c.kind for c in entry.changes}
    attr_changes = {c.name for c in entry.changes if c.kind == "attribute"}
    rows = [_row("name", _label(a), _label(b), False),
            _row("operator", _op(a), _op(b), "op_type" in kinds)]
    # what changes the numbers first: the weights, then attributes, wiring, version
    for change in entry.changes:
        if change.kind == "weight" and change.weight is not None:
            rows.extend(_weight_rows(change))
    values_a = {x.name: x.value for x in a.attributes} if a is not None else {}
    values_b = {x.name: x.value for x in b.attributes} if b is not None else {}
    for name in sorted(values_a.keys() | values_b.keys()):
        rows.append(_row(name, values_a.get(name), values_b.get(name), name in attr_changes))
    inputs = {c.name: c for c in entry.changes if c.kind == "inputs"}
    for slot in range(max(len(a.inputs) if a else 0, len(b.inputs) if b else 0)):
        va = a.inputs[slot] if a is not None and slot < len(a.inputs) else None
        vb = b.inputs[slot] if b is not None and slot < len(b.inputs) else None
        rows.append(_row(f"input {slot}", va, vb, f"input {slot}" in inputs))
    rows.extend(_row(change.name, change.a, change.b, True)
                for change in entry.changes if change.kind == "outputs")
    rows.append(_row("since version", _version(a), _version(b), "version" in kinds))
    table = ("<table cellspacing='0' cellpadding='3' width='100%'>"
             "<tr><th align='left'></th><th align='left'>A</th><th align='left'>B</th></tr>"
             + "".join(rows) + "</table>")
    return head + table


def _label(node: Node | None) -> str | None:
    return node.label if node is not None else None


def _op(node: Node | None) -> str | None:
    if node is None:
        return None
    return f"{node.domain}::{node.op_type}" if node.domain else node.op_type


def _version(node: Node | None) -> int | None:
    return node.schema.since_version if node is not None else None


class PairDetails(QTextBrowser):
    """The Node panel of a diff tab: attribute by attribute, weight statistics, wiring."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        # a narrow pane breaks lines between words, never inside one ("kernel_s hape")
        self.setWordWrapMode(QTextOption.WrapMode.WordWrap)
        self.entry: NodeDiff | None = None
        self.show_entry(None)

    def show_entry(self, entry: NodeDiff | None, absorbed: Node | None = None) -> None:
        self.entry = entry
        self.setHtml(pair_html(entry, absorbed))
