"""DOT export lists every node and edge with its label; Qt-free."""

from __future__ import annotations

import re
from pathlib import Path

from onnxstudio.export.dot import layout_to_dot, quote
from onnxstudio.export.formats import export_layout
from onnxstudio.export.options import ExportOptions
from tests.export_support import chain_layout

NODE_RE = re.compile(r'^\s*("(?:[^"\\]|\\.)*") \[label=')
EDGE_RE = re.compile(r'^\s*("(?:[^"\\]|\\.)*") -> ("(?:[^"\\]|\\.)*")')


def parse(text: str) -> tuple[set[str], set[tuple[str, str]]]:
    nodes, edges = set(), set()
    for line in text.splitlines():
        if m := EDGE_RE.match(line):
            edges.add((m.group(1), m.group(2)))
        elif m := NODE_RE.match(line):
            nodes.add(m.group(1))
    return nodes, edges


def test_dot_lists_every_node_and_edge() -> None:
    layout = chain_layout(5)
    text = layout_to_dot(layout, "net")
    assert text.startswith('digraph "net" {') and text.rstrip().endswith("}")
    nodes, edges = parse(text)
    assert nodes == {quote(b.id) for b in layout.boxes}
    assert edges == {(quote(e.source), quote(e.target)) for e in layout.edges}
    assert 'subgraph "cluster_/block"' in text
    assert "rankdir=TB" in text
    for box in layout.boxes:
        assert quote(box.title)[1:-1] in text


def test_dot_escapes_quotes_and_newlines() -> None:
    assert quote('a "b"\\c\nd') == '"a \\"b\\"\\\\c\\nd"'


def test_dot_file_written_via_dispatcher(tmp_path: Path) -> None:
    out = tmp_path / "g.gv"
    result = export_layout(chain_layout(3, "LR"), None, out, ExportOptions())
    assert result.format == "dot" and out.read_text().count("->") == 4
    assert "rankdir=LR" in out.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.gv"]


def test_dot_selection_keeps_only_selected(tmp_path: Path) -> None:
    out = tmp_path / "sel.dot"
    export_layout(chain_layout(4), None, out, ExportOptions(region="selection",
                                                            selection=["n1", "n2"]))
    nodes, edges = parse(out.read_text())
    assert nodes == {'"n1"', '"n2"'} and edges == {('"n1"', '"n2"')}


def test_dot_title_block_is_the_graph_label(tmp_path: Path) -> None:
    out = tmp_path / "t.dot"
    export_layout(chain_layout(2), None, out, ExportOptions(title_block=True))
    assert "labelloc=t" in out.read_text() and "Date: " in out.read_text()
