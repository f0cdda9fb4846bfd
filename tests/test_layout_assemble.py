"""The compound layout's edges: pieces in flat lists, polylines joined on one array
(assemble.py), node box lines kept per graph across re-layouts (build.py)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper

from onnxstudio.layout import ExpandState, build, build_layout, labels, unit_place
from onnxstudio.layout.assemble import Routes, _kept
from onnxstudio.layout.types import Point
from onnxstudio.layout.units import Pieces, Unit
from onnxstudio.model import Model, load_model
from tests.builders import make_model, save
from tests.conftest import ladder_model


def _crossing_model(tmp_path: Path) -> Model:
    """Groups /g0../g4, each with an inner group, whose nodes also read a value from
    two groups back: edges leave and enter nested groups (several pieces each)."""
    nodes = []
    prev = ["x", "x"]
    for g in range(5):
        for i in range(4):
            name = f"/g{g}/inner/Add_{i}" if i >= 2 else f"/g{g}/Add_{i}"
            nodes.append(helper.make_node("Add", [prev[-1], prev[-2 if i else -1]],
                                          [f"v{g}_{i}"], name=name))
            prev.append(f"v{g}_{i}")
        if g >= 2:
            nodes.append(helper.make_node("Mul", [f"v{g}_3", f"v{g - 2}_2"], [f"m{g}"],
                                          name=f"/g{g}/inner/Mul"))
            prev.append(f"m{g}")
    graph = helper.make_graph(
        nodes, "crossing", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info(prev[-1], TensorProto.FLOAT, [2, 8])])
    return load_model(save(make_model(graph), tmp_path / "crossing.onnx"))


def _walk(pieces: Pieces, origin: dict[str, Point]) -> list[tuple[list[Point], bool]]:
    """Each edge's polyline as the join did it point by point before it ran on arrays."""
    out = []
    for e in range(len(pieces.sources)):
        pts: list[Point] = []
        back = False
        for i in range(pieces.starts[e], pieces.starts[e + 1]):
            unit, key = pieces.units[i], pieces.keys[i]
            ox, oy = origin[unit.id]
            res = unit.result
            assert res is not None
            if res.reversed[unit.edge_at[key]] and key[0][0] != "\x00" \
                    and key[1][0] != "\x00":
                back = True
            for px, py in unit_place.route(unit, key):
                x, y = ox + px, oy + py
                if not pts or abs(pts[-1][0] - x) > 0.01 or abs(pts[-1][1] - y) > 0.01:
                    pts.append((x, y))
        out.append((pts, back))
    return out


def _build_walked(model: Model, state: ExpandState, direction: str,
                  monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[Any], dict[str, Any]]:
    """The layout, the point-by-point polylines of its edges and facts about its pieces,
    taken while the build still holds them (it empties them when done)."""
    walked: list[Any] = []
    seen: dict[str, Any] = {}
    real = build.join_routes

    def spying(pieces: Pieces, all_units: list[Unit], origin: dict[str, Point]) -> Routes:
        walked.extend(_walk(pieces, origin))
        units = {id(u): u for u in pieces.units}
        seen["pieces"] = len(pieces.keys)
        seen["starts"] = list(pieces.starts)
        seen["counted"] = sum(sum(u.edges.values()) for u in units.values())
        seen["keys_in_units"] = all(k in u.edges for u, k in zip(pieces.units, pieces.keys,
                                                                   strict=True))
        return real(pieces, all_units, origin)

    monkeypatch.setattr(build, "SIDE_SOURCES", False)  # routes as joined, none moved
    monkeypatch.setattr(build, "join_routes", spying)
    layout = build_layout(model, state, direction)  # type: ignore[arg-type]
    return layout, walked, seen


@pytest.mark.parametrize("direction", ["TB", "LR"])
def test_joined_polylines_are_the_walk_point_by_point(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, direction: str) -> None:
    model = _crossing_model(tmp_path)
    state = ExpandState()
    state.expand_all(model.graph)
    layout, walked, seen = _build_walked(model, state, direction, monkeypatch)
    assert len(layout.edges) == len(walked)
    assert seen["pieces"] > len(layout.edges)  # edges crossing groups have several pieces
    for edge, (pts, back) in zip(layout.edges, walked, strict=True):
        want = [(y, x) for x, y in pts] if direction == "LR" else pts
        assert edge.points == want
        assert edge.back == back


def test_pieces_are_flat_lists_and_routes_packed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _crossing_model(tmp_path)
    state = ExpandState()
    state.expand_all(model.graph)
    layout, _walked, seen = _build_walked(model, state, "TB", monkeypatch)
    starts = seen["starts"]
    assert len(starts) == len(layout.edges) + 1 and starts[-1] == seen["pieces"]
    assert all(b > a for a, b in itertools.pairwise(starts))  # a piece or more
    assert seen["keys_in_units"] and seen["counted"] == seen["pieces"]
    # no list of point tuples per edge: every route is one bytes object of x, y pairs
    assert all(isinstance(e.route, bytes) for e in layout.edges)
    assert sum(e.point_count for e in layout.edges) > 2 * len(layout.edges)


def test_points_drifting_apart_keep_the_walks_answer() -> None:
    """Each point within 0.01 of the previous one, but the third is 0.018 from the first
    kept: the walk keeps it; comparing neighbours alone would not."""
    flat = np.array([[0.0, 0.0], [0.009, 0.0], [0.018, 0.0], [0.027, 0.0], [5.0, 5.0],
                     [5.0, 5.005]])
    edge = np.array([0, 0, 0, 0, 1, 1])
    assert _kept(flat, edge).tolist() == [True, False, True, False, True, False]


def test_a_relayout_reuses_the_node_boxes_lines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _crossing_model(tmp_path)
    state = ExpandState()
    state.expand_all(model.graph)
    first = build_layout(model, state)
    calls: list[str] = []
    real = labels.folded_input_lines
    real_attributes = labels.attribute_lines

    def counted(node: Any, graph: Any, constants: dict[str, str]) -> list[str]:
        calls.append(node.id)
        return real(node, graph, constants)

    def counted_attributes(node: Any) -> list[str]:
        calls.append(node.id)
        return real_attributes(node)

    monkeypatch.setattr(labels, "folded_input_lines", counted)
    monkeypatch.setattr(labels, "attribute_lines", counted_attributes)
    state.toggle("/g3/inner")
    toggled = build_layout(model, state)
    assert calls == []  # every node's lines were kept from the first layout
    before = {b.id: b for b in first.boxes}
    shown = [b for b in toggled.boxes if b.kind == "node"]
    assert shown and all(before[b.id].details == b.details for b in shown)
    assert len(shown) < len(first.boxes)  # /g3/inner is one box now


@pytest.mark.parametrize("name", ["bert12.onnx"])
def test_side_moves_of_a_real_model_are_the_same_told_what_is_outside(name: str) -> None:
    model = load_model(ladder_model(name))
    state = ExpandState()
    state.expand_all(model.graph)
    layout = build_layout(model, state)
    members = {m for g in layout.groups for m in g.members}
    outside = {b.id for b in layout.boxes if b.id not in members} | {
        g.id for g in layout.groups if g.id not in members}
    sources = [e.source for e in layout.edges]
    targets = [e.target for e in layout.edges]
    from onnxstudio.layout.sides import side_moves

    told = side_moves(layout.boxes, layout.groups, sources, targets, outside)
    found = side_moves(layout.boxes, layout.groups, sources, targets)
    assert told == found
