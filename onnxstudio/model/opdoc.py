"""Operator documentation from onnx's schemas, as plain data and as simple HTML.

The node panel shows it in a rich-text widget; keeping the formatting here (Qt-free)
lets the CLI or an HTML export reuse it and lets tests check it without a window.
onnx writes schema docs in Markdown, so a small converter handles the subset it uses.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any

from onnxstudio.model.schemas import display_domain, operator_schema


@dataclass(frozen=True)
class Param:
    """One formal input or output of an operator."""

    name: str
    type_str: str
    description: str
    option: str = ""  # "", "optional" or "variadic"
    differentiable: str = ""


@dataclass(frozen=True)
class AttrDoc:
    name: str
    type: str  # INT, FLOATS, GRAPH...
    description: str
    required: bool
    default: str = ""


@dataclass(frozen=True)
class TypeConstraint:
    param: str
    allowed: list[str]
    description: str


@dataclass(frozen=True)
class OpDoc:
    """What onnx documents of one operator version."""

    op_type: str
    domain: str
    since_version: int
    description: str  # Markdown
    inputs: list[Param] = field(default_factory=list)
    outputs: list[Param] = field(default_factory=list)
    attributes: list[AttrDoc] = field(default_factory=list)
    type_constraints: list[TypeConstraint] = field(default_factory=list)
    min_inputs: int = 0
    max_inputs: int = 0
    min_outputs: int = 0
    max_outputs: int = 0
    deprecated: bool = False


def _option(param: object) -> str:
    name = str(getattr(param, "option", "")).rsplit(".", 1)[-1].lower()
    return "" if name == "single" else name


def _default(attr: object) -> str:
    import onnx  # local: only needed for attributes with defaults
    import onnx.helper

    proto = getattr(attr, "default_value", None)
    raw = getattr(attr, "_default_value", None)  # onnxruntime's schemas: serialised bytes
    if proto is None and isinstance(raw, bytes):
        proto = onnx.AttributeProto.FromString(raw)
    if proto is None or not proto.name:
        return ""

    value = onnx.helper.get_attribute_value(proto)
    if isinstance(value, bytes):
        return repr(value.decode("utf-8", "replace"))
    if isinstance(value, list):
        return "[" + ", ".join(
            repr(v.decode("utf-8", "replace")) if isinstance(v, bytes) else str(v)
            for v in value) + "]"
    return str(value)


def operator_doc(op_type: str, domain: str, opset: int | None) -> OpDoc | None:
    """The documentation of the schema in force at ``opset`` (None: newest); None if unknown."""
    schema = operator_schema(op_type, domain, opset)
    if schema is None:
        return None

    def params(items: list[Any]) -> list[Param]:
        return [
            Param(p.name, getattr(p, "type_str", "") or getattr(p, "typeStr", ""),
                  (p.description or "").strip(), _option(p),
                  str(getattr(p, "differentiation_category", "")).rsplit(".", 1)[-1].lower()
                  .replace("unknown", ""))
            for p in items
        ]

    attrs = [
        AttrDoc(name, str(a.type).rsplit(".", 1)[-1], (a.description or "").strip(),
                bool(a.required), _default(a))
        for name, a in sorted(schema.attributes.items())
    ]
    constraints = [
        TypeConstraint(c.type_param_str, list(c.allowed_type_strs), (c.description or "").strip())
        for c in schema.type_constraints
    ]
    return OpDoc(
        op_type=schema.name, domain=display_domain(schema.domain),
        since_version=schema.since_version, description=(schema.doc or "").strip(),
        inputs=params(list(schema.inputs)), outputs=params(list(schema.outputs)),
        attributes=attrs, type_constraints=constraints,
        min_inputs=schema.min_input, max_inputs=schema.max_input,
        min_outputs=schema.min_output, max_outputs=schema.max_output,
        deprecated=schema.deprecated,
    )


# --- Markdown subset -> HTML -------------------------------------------------------

_INLINE = [
    (re.compile(r"\[([^\]]+)\]\((https?://[^)\s]+)\)"), r'<a href="\2">\1</a>'),
    # onnx's docs link each other relatively ("Broadcasting.md"): point at the repo.
    (re.compile(r"\[([^\]]+)\]\(([\w./-]+\.md(?:#[\w-]+)?)\)"),
     r'<a href="https://github.com/onnx/onnx/blob/main/docs/\2">\1</a>'),
    (re.compile(r"\*\*([^*]+)\*\*"), r"<b>\1</b>"),
    (re.compile(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])"), r"<i>\1</i>"),
]
_CODE_SPAN = re.compile(r"`([^`]+)`")


def _inline(text: str) -> str:
    """Escape, then code spans (kept verbatim), links, bold and italics."""
    parts = _CODE_SPAN.split(text)
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(f"<code>{html.escape(part)}</code>")
        else:
            chunk = html.escape(part, quote=False)
            for pattern, repl in _INLINE:
                chunk = pattern.sub(repl, chunk)
            out.append(chunk)
    return "".join(out)


_BULLET = re.compile(r"^\s*(?:[*+-]|\d+[.)])\s+")


def markdown_to_html(text: str) -> str:
    """The Markdown subset onnx docs use: paragraphs, lists, fenced/indented code, inline."""
    lines = text.replace("\r\n", "\n").split("\n")
    out: list[str] = []
    para: list[str] = []
    items: list[str] = []
    i = 0

    def flush() -> None:
        if para:
            out.append(f"<p>{_inline(' '.join(s.strip() for s in para))}</p>")
            para.clear()
        if items:
            out.append("<ul>" + "".join(f"<li>{_inline(x)}</li>" for x in items) + "</ul>")
            items.clear()

    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("```"):
            flush()
            block = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                block.append(lines[i])
                i += 1
            out.append(f"<pre>{html.escape(chr(10).join(block))}</pre>")
        elif not stripped:
            flush()
        elif stripped.startswith("#"):
            flush()
            out.append(f"<p><b>{_inline(stripped.lstrip('#').strip())}</b></p>")
        elif _BULLET.match(line):
            if para:
                flush()
            items.append(_BULLET.sub("", line).strip())
        elif items and line.startswith((" ", "\t")):
            items[-1] += " " + stripped  # continuation of a list item
        elif line.startswith("    ") and not para:
            block = []
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                block.append(lines[i][4:])
                i += 1
            out.append(f"<pre>{html.escape(chr(10).join(block).rstrip())}</pre>")
            continue
        else:
            if items:
                flush()
            para.append(line)
        i += 1
    flush()
    return "\n".join(out)


def _param_rows(params: list[Param]) -> str:
    rows = []
    for p in params:
        tag = f" <i>({p.option})</i>" if p.option else ""
        rows.append(
            f"<dt><b>{html.escape(p.name)}</b>{tag} : <code>{html.escape(p.type_str)}</code></dt>"
            f"<dd>{markdown_to_html(p.description) or '&nbsp;'}</dd>")
    return "<dl>" + "".join(rows) + "</dl>"


def _range(lo: int, hi: int) -> str:
    hi_text = "∞" if hi >= 2**31 - 1 else str(hi)
    return str(lo) if str(lo) == hi_text else f"{lo} – {hi_text}"


def opdoc_html(doc: OpDoc) -> str:
    """The whole documentation as an HTML fragment (sections: description, attributes,
    inputs, outputs, type constraints), styled only through basic tags Qt renders."""
    head = (f"<h3>{html.escape(doc.op_type)} <small>({html.escape(doc.domain)}, "
            f"version {doc.since_version})</small></h3>")
    parts = [head]
    if doc.deprecated:
        parts.append("<p><b>Deprecated</b> in this version.</p>")
    parts.append(markdown_to_html(doc.description) or "<p><i>No description.</i></p>")
    if doc.attributes:
        rows = []
        for a in doc.attributes:
            extra = " <i>(required)</i>" if a.required else (
                f" <i>(default {html.escape(a.default)})</i>" if a.default else "")
            rows.append(f"<dt><b>{html.escape(a.name)}</b> : <code>{a.type}</code>{extra}</dt>"
                        f"<dd>{markdown_to_html(a.description) or '&nbsp;'}</dd>")
        parts.append("<h4>Attributes</h4><dl>" + "".join(rows) + "</dl>")
    parts.append(f"<h4>Inputs ({_range(doc.min_inputs, doc.max_inputs)})</h4>")
    parts.append(_param_rows(doc.inputs))
    parts.append(f"<h4>Outputs ({_range(doc.min_outputs, doc.max_outputs)})</h4>")
    parts.append(_param_rows(doc.outputs))
    if doc.type_constraints:
        rows = [
            f"<dt><b>{html.escape(c.param)}</b> in "
            f"<code>{html.escape(', '.join(c.allowed))}</code></dt>"
            f"<dd>{markdown_to_html(c.description) or '&nbsp;'}</dd>"
            for c in doc.type_constraints
        ]
        parts.append("<h4>Type constraints</h4><dl>" + "".join(rows) + "</dl>")
    return "\n".join(parts)
