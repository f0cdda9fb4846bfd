"""The status bar's permanent right side: background progress, node counts, opsets."""

from __future__ import annotations

from collections import Counter

from PySide6.QtWidgets import QLabel, QProgressBar, QStatusBar

from onnxstudio.model import Model
from onnxstudio.model.formatting import plural
from onnxstudio.model.schemas import display_domain
from onnxstudio.ui.widgets.status import ElidedLabel


class StatusLine:
    """Owns three permanent widgets of a status bar; fed by the window."""

    def __init__(self, bar: QStatusBar) -> None:
        self.nodes = QLabel()
        self.opsets = ElidedLabel()  # a model importing many domains stays one line
        self.opsets.setMaximumWidth(360)  # and leaves the message its room
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(180)
        self.progress.setRange(0, 100)
        self.progress.hide()
        for widget in (self.progress, self.nodes, self.opsets):
            bar.addPermanentWidget(widget)

    def show_model(self, model: Model | None, kinds: Counter[str] | None = None,
                   hidden: int = 0) -> None:
        """``kinds``: the shown boxes by kind (``ModelTab.shown_kinds``); ``hidden``: the
        nodes View → Hide Nodes leaves out."""
        if model is None:
            self.nodes.setText("")
            self.opsets.setText("")
            return
        # not the summary: the status shows with the graph, before the panels' views
        total = model.memo("node_count_total", model.graph.node_count_total)
        kinds = kinds or Counter()
        folded = f", {plural(kinds['group'], 'group')} collapsed" if kinds["group"] else ""
        folded += f", {hidden:,} hidden" if hidden else ""
        self.nodes.setText(f"{plural(total, 'node')} ({kinds['node']:,} shown{folded})")
        self.opsets.setText("  ".join(
            f"{display_domain(d)} v{v}" for d, v in sorted(model.opset_imports.items())))

    def set_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)

    def set_progress(self, stage: str, fraction: float) -> None:
        self.progress.setValue(int(fraction * 100))
        self.progress.setFormat(f"{stage} %p%")
