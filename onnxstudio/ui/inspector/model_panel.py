"""Model panel: what the file says about the whole model, from model_summary().

Graph inputs and outputs are links (``jumpToNode("in:x")``); warnings from loading and
shape inference are listed last, in the warning colour, so they are not missed.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QWidget

from onnxstudio.layout.labels import model_dim_abbreviations
from onnxstudio.model.formatting import human_bytes, human_count, shape_list
from onnxstudio.model.graph import Model
from onnxstudio.model.summary import model_summary
from onnxstudio.ui.inspector.property_tree import PropertyTree
from onnxstudio.ui.widgets.empty_state import EmptyStateStack

EMPTY_TEXT = "Open a model to see its properties"
WARNING_COLOR = QColor("#b9770e")


class ModelPanel(QWidget):
    """Dock content: file, producer, opsets, metadata, I/O, operator counts, warnings."""

    jumpToNode = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model: Model | None = None
        # what the tree shows
        self._shown: tuple[Model, dict[str, Any], dict[str, str]] | None = None
        self.tree = PropertyTree()
        self.tree.linkActivated.connect(self._on_link)
        self.stack = EmptyStateStack(self, EMPTY_TEXT, self.tree)
        self.placeholder = self.stack.placeholder

    def set_model(self, model: Model | None) -> None:
        shown = (model, model_summary(model), model_dim_abbreviations(model)) if model else None
        last = self._shown
        if shown is not None and last is not None and shown[0] is last[0] \
                and shown[1:] == last[1:]:
            return  # shapes arrived but changed nothing shown here: no 20 ms refill
        self.model, self._shown = model, shown
        self.tree.clear()
        if model is None:
            self.stack.setCurrentIndex(0)
            return
        self._fill(model_summary(model), model)
        self.tree.fit_name_column()
        self.stack.setCurrentIndex(1)

    def _fill(self, s: dict[str, Any], model: Model) -> None:
        tree = self.tree
        sec = tree.add_section("File")
        tree.add_row(sec, "Name", model.path.name, tooltip=str(model.path),
                     copy=[("Copy path", str(model.path))])
        tree.add_row(sec, "Folder", str(model.path.parent), muted=True)
        size = human_bytes(s["file_size"])
        exact = f"{s['file_size']:,} B" if s["file_size"] >= 1024 else ""
        tree.add_row(sec, "Size", size, exact)
        if s["external_data"]:
            tree.add_row(sec, "External data", "yes: weights in separate file(s)")

        sec = tree.add_section("Model")
        tree.add_row(sec, "IR version", str(s["ir_version"]))
        tree.add_row(sec, "Producer", s["producer_name"] or "—", s["producer_version"])
        tree.add_row(sec, "Domain", s["domain"] or "—")
        tree.add_row(sec, "Model version", str(s["model_version"]))
        if s["doc_string"]:
            tree.add_row(sec, "Description", s["doc_string"].strip())

        sec = tree.add_section("Opset imports", len(s["opset_imports"]))
        for domain, version in s["opset_imports"].items():
            tree.add_row(sec, domain, str(version))

        if s["metadata"]:
            sec = tree.add_section("Metadata", len(s["metadata"]))
            for key, value in s["metadata"].items():
                tree.add_row(sec, key or "(empty key)", value or "(empty)",
                             copy=[("Copy key", key)], edit=f"meta:{key}")

        for title, kind, rows in (("Inputs", "in", s["inputs"]), ("Outputs", "out", s["outputs"])):
            sec = tree.add_section(title, len(rows))
            for io in rows:
                tree.add_row(sec, io["name"], f"{io['dtype'] or '?'} {shape_list(io['shape'])}",
                             link=f"node:{kind}:{io['name']}",
                             copy=[("Copy tensor name", io["name"])],
                             edit=f"dims:{kind}:{io['name']}",
                             edit_name=f"io-name:{kind}:{io['name']}")

        short = model_dim_abbreviations(model)
        if short:  # the canvas writes long symbolic dimensions by their initials
            sec = tree.add_section("Dimension abbreviations", len(short))
            for abbr, full in short.items():
                tree.add_row(sec, abbr, full, "on the canvas",
                             tooltip=f"The canvas shows {full} as {abbr}")

        sec = tree.add_section("Statistics")
        tree.add_row(sec, "Nodes", f"{s['node_count']:,}",
                     f"{s['node_count_total']:,} with bodies"
                     if s["node_count_total"] != s["node_count"] else "")
        if s["subgraphs"]:
            tree.add_row(sec, "Subgraphs", str(s["subgraphs"]), "If/Loop/Scan bodies")
        tree.add_row(sec, "Initializers", f"{s['initializers']:,}")
        tree.add_row(sec, "Parameters", human_count(s["parameters"]),
                     f"{s['parameters']:,}" if s["parameters"] >= 1000 else "")
        tree.add_row(sec, "Weight size", human_bytes(s["weight_bytes"]),
                     f"{s['weight_bytes']:,} B" if s["weight_bytes"] >= 1024 else "")

        ops = s["operators"]
        sec = tree.add_section("Operators", len(ops))
        for op in ops:
            domain = "" if op["domain"] == "ai.onnx" else op["domain"]
            version = f"v{op['since_version']}" if op["since_version"] else "no schema"
            tree.add_row(sec, op["op_type"], f"{op['count']:,}",
                         f"{domain} {version}".strip())

        if s["function_names"]:
            sec = tree.add_section("Functions", len(s["function_names"]))
            for function in model.functions:
                tree.add_row(sec, function.name, f"{len(function.body.nodes)} nodes",
                             function.domain)

        if s["warnings"]:
            sec = tree.add_section("Warnings", len(s["warnings"]))
            sec.setForeground(0, QBrush(WARNING_COLOR))
            for warning in s["warnings"]:
                item = tree.add_row(sec, "⚠", warning, copy=[("Copy warning", warning)])
                item.setForeground(1, QBrush(WARNING_COLOR))

    def _on_link(self, link: str) -> None:
        kind, _, target = link.partition(":")
        if kind == "node":
            self.jumpToNode.emit(target)
