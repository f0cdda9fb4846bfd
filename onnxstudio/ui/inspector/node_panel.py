"""Node panel: everything the model says about the selected node or graph input/output.

Call ``show_node(model, box_id)`` on selection. Links in the panel do not move the
canvas themselves; they emit ``jumpToNode`` (a box id: node id, "in:x" or "out:y"),
``expandBody`` (the id of an If/Loop/Scan or function-call node whose body to show) and
``openInitializer`` (a weight's name); the main window wires them to the canvas and the
weights panel.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QLabel,
    QSplitter,
    QTextBrowser,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.model.graph import Graph, Model, Node, TensorType
from onnxstudio.model.index import ModelIndex
from onnxstudio.model.nodeinfo import (
    CLASS_HIERARCHY_KEY,
    STACK_TRACE_KEY,
    attributes_json,
    format_attribute,
    parse_class_hierarchy,
    parse_stack_trace,
    short_class,
)
from onnxstudio.model.opdoc import OpDoc, opdoc_html, operator_doc
from onnxstudio.model.schemas import display_domain, normalize_domain, slot_names
from onnxstudio.ui.inspector.property_tree import PropertyTree
from onnxstudio.ui.inspector.selection_summary import (
    fill_summary,
    group_label,
    selected_nodes,
    summary_header,
)
from onnxstudio.ui.widgets.empty_state import EmptyStateStack

MAX_CONSUMER_ROWS = 20
EMPTY_TEXT = "Select a node in the graph"

_BADGE = ('<span style="background-color:{bg}; color:#ffffff;">&nbsp;{text}&nbsp;</span>')


def _badge(text: str, bg: str) -> str:
    return _BADGE.format(bg=bg, text=html.escape(text))


def type_text(vtype: TensorType) -> str:
    """dtype[shape] as the model says it; a plain phrase when nothing is known."""
    if vtype.dtype is None and vtype.shape is None:
        return "type not inferred"
    return vtype.describe()


class NodePanel(QWidget):
    """Dock content: header, property tree (attributes, inputs, outputs, source), docs."""

    jumpToNode = Signal(str)
    expandBody = Signal(str)
    openInitializer = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model: Model | None = None
        self.index: ModelIndex | None = None
        self.box_id: str | None = None

        self.header = QLabel()
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setWordWrap(True)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.header.setContentsMargins(6, 6, 6, 4)
        self.header.linkActivated.connect(self._on_link)

        self.tree = PropertyTree()
        self.tree.linkActivated.connect(self._on_link)
        self.docs = QTextBrowser()
        self.docs.setOpenExternalLinks(True)
        self.docs.document().setDocumentMargin(8)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.tree)
        splitter.addWidget(self.docs)
        splitter.setStretchFactor(0, 5)  # properties first: Outputs stay above the fold
        splitter.setStretchFactor(1, 2)
        splitter.setChildrenCollapsible(True)
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.header)
        layout.addWidget(splitter, 1)

        self.stack = EmptyStateStack(self, EMPTY_TEXT, content)
        self.placeholder = self.stack.placeholder

    # --- API -------------------------------------------------------------------

    def set_model(self, model: Model | None) -> None:
        """Forget the previous model; show the empty state."""
        self.model = model
        self.index = ModelIndex.of(model) if model is not None else None
        self.clear()

    def clear(self) -> None:
        self.box_id = None
        self.tree.clear()
        self.docs.clear()
        self.header.clear()
        self.stack.setCurrentIndex(0)

    def show_selection(self, box_ids: list[str]) -> None:
        """Slot for GraphView.selectionChanged: one node, or a summary of several boxes
        (or of a collapsed group)."""
        if self.model is None or not box_ids:
            self.clear()
        elif len(box_ids) > 1 or group_label(self.model, box_ids[0]) is not None:
            self.show_summary(self.model, box_ids)
        else:
            self.show_node(self.model, box_ids[0])

    def show_summary(self, model: Model, box_ids: list[str]) -> None:
        """Operators by type, tensors in and out, members: for a multi-selection or a
        group (what a node shown before a collapse now lives in)."""
        if model is not self.model:
            self.set_model(model)
        assert self.index is not None
        nodes = selected_nodes(model, self.index, box_ids)
        self.tree.clear()
        self.docs.clear()
        self.box_id = box_ids[0] if len(box_ids) == 1 else None
        self.header.setText(summary_header(model, box_ids, nodes))
        self.docs.hide()  # no operator to document: the summary takes the whole panel
        fill_summary(self.tree, model, nodes)
        self.tree.fit_name_column()
        self.stack.setCurrentIndex(1)

    def show_node(self, model: Model, box_id: str) -> None:
        """Show a node (by Node.id) or a main-graph input/output ("in:x" / "out:y")."""
        if model is not self.model:
            self.set_model(model)
        assert self.index is not None
        self.tree.clear()
        self.box_id = box_id
        if box_id.startswith(("in:", "out:")):
            kind, _, name = box_id.partition(":")
            self._show_graph_io(model, name, kind == "in")
        else:
            node = self.index.node(box_id)
            if node is None:
                self.clear()
                return
            self._show_node(model, node)
        self.tree.fit_name_column()
        self.stack.setCurrentIndex(1)

    # --- node ------------------------------------------------------------------

    def _opset_for(self, node: Node) -> int | None:
        assert self.model is not None
        return self.model.opset_imports.get(normalize_domain(node.domain))

    def _show_node(self, model: Model, node: Node) -> None:
        assert self.index is not None
        graph = self.index.graph_of(node.id)
        assert graph is not None
        schema = node.schema
        function = model.function(node.function) if node.function else None
        # onnx's schema, or onnxruntime's for contrib domains (schema.known is onnx's)
        doc = operator_doc(node.op_type, node.domain, self._opset_for(node))
        self.header.setText(self._header_html(node, function is not None))
        self.docs.show()

        tree = self.tree
        info = tree.add_section("Node")
        tree.add_row(info, "Name", node.name or "(unnamed)", copy=[("Copy node name", node.name)],
                     edit=f"node-name:{node.id}")
        tree.add_row(info, "Type", node.op_type, copy=[("Copy operator type", node.op_type)])
        tree.add_row(info, "Domain", display_domain(node.domain))
        if schema.known:
            tree.add_row(info, "Version in force",
                         str(schema.since_version) if schema.since_version else "none",
                         f"opset {self._opset_for(node)}",
                         tooltip="The operator version that applies under the model's "
                                 "opset import")
            tree.add_row(info, "Newest version", str(schema.latest_version), "onnx")
        if function is not None:
            tree.add_row(info, "Function", f"{function.domain}::{function.name}", "local",
                         link=f"body:{node.id}", tooltip="Show the function body")
        if graph is not model.graph:
            tree.add_row(info, "Inside", graph.name or graph.id_prefix.rstrip("/"), muted=True)
        tree.add_row(info, "Id", node.id, muted=True)
        if node.doc_string:
            tree.add_row(info, "Doc", node.doc_string.strip())

        self._attributes(node, doc)
        self._inputs(graph, node, doc, function.inputs if function else None)
        self._outputs(graph, node, doc, function.outputs if function else None)
        self._provenance(node)
        self.docs.setHtml(self._docs_html(node, doc, function))

    def _header_html(self, node: Node, is_function: bool) -> str:
        schema = node.schema
        parts = [f'<span style="font-size:15pt; font-weight:600;">{html.escape(node.op_type)}'
                 "</span>"]
        if node.name:
            parts.append(f"<br><span>{html.escape(node.name)}</span>")
        line = html.escape(display_domain(node.domain))
        if schema.known and schema.since_version:
            line += f" · v{schema.since_version}"
            if schema.latest_version and schema.latest_version != schema.since_version:
                line += f" (newest v{schema.latest_version})"
        parts.append(f'<br><span style="color:gray;">{line}</span>')
        badges = []
        if schema.deprecated:
            badges.append(_badge("deprecated", "#c0392b"))
        if is_function:
            badges.append('<a href="body:' + html.escape(node.id) + '">'
                          + _badge("local function ▸ body", "#7d3c98") + "</a>")
        elif not schema.known:
            badges.append(_badge("no onnx schema", "#d35400"))
        if schema.custom_domain:
            badges.append(_badge(f"custom domain {node.domain}", "#2471a3"))
        if schema.known and schema.since_version is None:
            badges.append(_badge("newer than the model's opset", "#c0392b"))
        if node.subgraphs:
            badges.append('<a href="body:' + html.escape(node.id) + '">'
                          + _badge(f"{len(node.subgraphs)} bod"
                                   + ("y" if len(node.subgraphs) == 1 else "ies") + " ▸",
                                   "#117a65") + "</a>")
        if badges:
            parts.append("<br>" + " ".join(badges))
        return "".join(parts)

    def _attributes(self, node: Node, doc: OpDoc | None) -> None:
        tree = self.tree
        defaults = [a for a in (doc.attributes if doc else [])
                    if node.attribute(a.name) is None and a.default]
        if not node.attributes and not defaults:
            return
        section = tree.add_section("Attributes", len(node.attributes))
        as_json = attributes_json(node)
        for attr in node.attributes:
            link = f"body:{node.id}" if attr.type in ("GRAPH", "GRAPHS") else None
            tree.add_row(section, attr.name, format_attribute(attr), attr.type, link=link,
                         copy=[("Copy attributes as JSON", as_json)],
                         edit=None if link else f"attr:{node.id}:{attr.name}")
        for a in defaults:
            tree.add_row(section, a.name, f"{a.default} (default)", a.type, muted=True,
                         tooltip=f"Not set on this node; the schema's default is {a.default}",
                         edit=f"attr:{node.id}:{a.name}")

    def _io_row(self, parent: QTreeWidgetItem, graph: Graph, slot: str, name: str,
                incoming: bool) -> QTreeWidgetItem:
        assert self.index is not None
        tree = self.tree
        if not name:
            return tree.add_row(parent, slot, "(omitted)", muted=True)
        ref = self.index.value(graph, name)
        copy = [("Copy tensor name", name)]
        if ref is None:
            return tree.add_row(parent, slot, f"{name}\n?", copy=copy)
        vtype = type_text(ref.value.type)
        if ref.initializer is not None:
            return tree.add_row(parent, slot, f"{name}\n{vtype}", "weight", link=f"init:{name}",
                                copy=copy, tooltip=f"{name}\nInitializer {vtype}: "
                                "click to see its values")
        if incoming:
            target = ref.producer
            label = self._box_label(target) if target else "outside this graph"
            return tree.add_row(parent, slot, f"{name}\n{vtype}",
                                link=f"node:{target}" if target else None, copy=copy,
                                tooltip=f"{name}\n{vtype}\nfrom {label}")
        consumers = ref.consumers
        item = tree.add_row(parent, slot, f"{name}\n{vtype}",
                            link=f"node:{consumers[0]}" if consumers else None, copy=copy,
                            tooltip=f"{name}\n{vtype}\n"
                            + (f"read by {len(consumers)}" if consumers else "unused"))
        if len(consumers) > 1:
            for target in consumers[:MAX_CONSUMER_ROWS]:
                tree.add_row(item, "→", self._box_label(target), link=f"node:{target}",
                             muted=False)
            if len(consumers) > MAX_CONSUMER_ROWS:
                tree.add_row(item, "", f"… {len(consumers) - MAX_CONSUMER_ROWS} more",
                             muted=True)
            item.setExpanded(len(consumers) <= 4)
        return item

    def _box_label(self, box_id: str) -> str:
        assert self.index is not None
        if box_id.startswith("in:"):
            return f"graph input {box_id[3:]}"
        if box_id.startswith("out:"):
            return f"graph output {box_id[4:]}"
        node = self.index.node(box_id)
        return f"{node.op_type} {node.name}".strip() if node else box_id

    def _inputs(self, graph: Graph, node: Node, doc: OpDoc | None,
                 formal: list[str] | None = None) -> None:
        if not node.inputs:
            return
        names = [p.name for p in doc.inputs] if doc else (formal or [])
        variadic = bool(doc and doc.inputs and doc.inputs[-1].option == "variadic")
        slots = slot_names(names, len(node.inputs), variadic) if names else \
            [f"input {i}" for i in range(len(node.inputs))]
        section = self.tree.add_section("Inputs", len(node.inputs))
        for slot, name in zip(slots, node.inputs, strict=True):
            self._io_row(section, graph, slot, name, incoming=True)

    def _outputs(self, graph: Graph, node: Node, doc: OpDoc | None,
                 formal: list[str] | None = None) -> None:
        if not node.outputs:
            return
        names = [p.name for p in doc.outputs] if doc else (formal or [])
        variadic = bool(doc and doc.outputs and doc.outputs[-1].option == "variadic")
        slots = slot_names(names, len(node.outputs), variadic) if names else \
            [f"output {i}" for i in range(len(node.outputs))]
        section = self.tree.add_section("Outputs", len(node.outputs))
        for slot, name in zip(slots, node.outputs, strict=True):
            self._io_row(section, graph, slot, name, incoming=False)

    def _provenance(self, node: Node) -> None:
        """Exporter metadata: module path and source line first, then the other props."""
        tree = self.tree
        meta = node.metadata
        hierarchy = parse_class_hierarchy(meta[CLASS_HIERARCHY_KEY]) \
            if CLASS_HIERARCHY_KEY in meta else []
        frames = parse_stack_trace(meta[STACK_TRACE_KEY]) if STACK_TRACE_KEY in meta else []
        if hierarchy or frames:
            section = tree.add_section("Source")
            if hierarchy:
                chain = " › ".join(short_class(c) for c in hierarchy)
                item = tree.add_row(section, "Module", chain,
                                    tooltip="\n".join(hierarchy),
                                    copy=[("Copy module path", "\n".join(hierarchy))])
                for depth, cls in enumerate(hierarchy):
                    tree.add_row(item, str(depth), cls, muted=True)
                item.setExpanded(False)
            if frames:
                last = frames[-1]
                short = f"{last.file.rsplit('/', 1)[-1]}:{last.line}"
                item = tree.add_row(section, "Location", short, last.function,
                                    tooltip=last.location,
                                    copy=[("Copy location", last.location)])
                if last.code:
                    tree.add_row(section, "Code", last.code)
                if len(frames) > 1:
                    stack = tree.add_row(section, "Call stack", f"{len(frames)} frames",
                                         copy=[("Copy stack trace", meta[STACK_TRACE_KEY])])
                    for frame in frames:
                        tree.add_row(stack, frame.function,
                                     f"{frame.file.rsplit('/', 1)[-1]}:{frame.line}",
                                     tooltip=f"{frame.location}\n{frame.code}")
                    stack.setExpanded(False)
        rest = {k: v for k, v in meta.items() if k not in (STACK_TRACE_KEY, CLASS_HIERARCHY_KEY)}
        if rest:
            section = tree.add_section("Metadata", len(rest))
            for key, value in rest.items():
                tree.add_row(section, key.removeprefix("pkg.torch.onnx."),
                             " ".join(value.split()), tooltip=f"{key}\n{value}",
                             copy=[("Copy key", key)])

    def _docs_html(self, node: Node, doc: OpDoc | None, function: object) -> str:
        if doc is not None:
            return opdoc_html(doc)
        from onnxstudio.model.graph import Function

        if isinstance(function, Function):
            body = html.escape(function.doc_string) or "<i>No description.</i>"
            return (f"<h3>{html.escape(function.name)} <small>(local function, "
                    f"{html.escape(function.domain)})</small></h3><p>{body}</p>"
                    f"<p><b>Inputs:</b> {html.escape(', '.join(function.inputs))}<br>"
                    f"<b>Outputs:</b> {html.escape(', '.join(function.outputs))}</p>")
        where = display_domain(node.domain)
        return (f"<h3>{html.escape(node.op_type)} <small>({html.escape(where)})</small></h3>"
                f"<p><i>onnx has no schema for this operator, so there is no documentation. "
                f"It is provided by the runtime that registers the domain "
                f"'{html.escape(where)}'.</i></p>")

    # --- graph inputs/outputs ------------------------------------------------------

    def _show_graph_io(self, model: Model, name: str, is_input: bool) -> None:
        assert self.index is not None
        ref = self.index.value(model.graph, name)
        what = "Graph input" if is_input else "Graph output"
        self.header.setText(
            f'<span style="font-size:15pt; font-weight:600;">{html.escape(name)}</span>'
            f'<br><span style="color:gray;">{what}</span>')
        tree = self.tree
        section = tree.add_section("Tensor")
        side = "in" if is_input else "out"
        tree.add_row(section, "Name", name, copy=[("Copy tensor name", name)],
                     edit=f"io-name:{side}:{name}")
        if ref is not None:
            vtype = ref.value.type
            tree.add_row(section, "Type", vtype.dtype or "?", vtype.kind)
            tree.add_row(section, "Shape", "unknown rank" if vtype.shape is None else
                         "[" + ", ".join("?" if d is None else str(d) for d in vtype.shape) + "]",
                         edit=f"dims:{side}:{name}")
            if is_input:
                users = [c for c in ref.consumers if not c.startswith("out:")]
                sec = tree.add_section("Consumers", len(users))
                for target in users[:MAX_CONSUMER_ROWS]:
                    tree.add_row(sec, "→", self._box_label(target), link=f"node:{target}")
            elif ref.producer:
                sec = tree.add_section("Producer")
                tree.add_row(sec, "←", self._box_label(ref.producer),
                             link=f"node:{ref.producer}")
        self.docs.setHtml(f"<p>{what} <b>{html.escape(name)}</b> of the model's main graph.</p>")

    # --- links -------------------------------------------------------------------

    def _on_link(self, link: str) -> None:
        kind, _, target = link.partition(":")
        if kind == "node" and target:
            self.jumpToNode.emit(target)
        elif kind == "body":
            self.expandBody.emit(target)
        elif kind == "init":
            self.openInitializer.emit(target)
