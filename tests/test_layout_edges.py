"""The compound layout's edges found on arrays (edge_arrays.py) and split into unit
pieces counted a unit at once (build.split_edges), and Edge as a tuple made in C."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxstudio.layout import ExpandState, build, build_layout, edge_collect
from onnxstudio.layout.cache_codec import decode_layout, encode_layout
from onnxstudio.layout.state import default_state
from onnxstudio.layout.types import Edge, Layout
from onnxstudio.layout.units import Pieces, Unit
from onnxstudio.model import Model, load_model
from tests.builders import make_model, save
from tests.conftest import ladder_model


def _awkward_model(tmp_path: Path) -> Model:
    """What the walk handles case by case: a node reading one tensor twice, two outputs
    of one node read by the same node, a folded Constant, a weight, an input read by a
    node and drawn straight to an output, an output written by a node, scopes."""
    const = helper.make_node("Constant", [], ["c"], name="/a/Constant",
                             value=numpy_helper.from_array(np.ones(4, np.float32)))
    nodes = [
        const,
        helper.make_node("Add", ["x", "x"], ["d"], name="/a/Double"),
        helper.make_node("Mul", ["d", "c"], ["m"], name="/a/Scale"),
        helper.make_node("Split", ["m"], ["s0", "s1"], name="/b/Split", axis=0,
                         num_outputs=2),
        helper.make_node("Concat", ["s0", "s1", "s0"], ["cat"], name="/b/Concat", axis=0),
        helper.make_node("MatMul", ["cat", "W"], ["y"], name="/c/MatMul"),
        helper.make_node("Sub", ["y", "x"], ["z"], name="/c/Sub"),
        helper.make_node("Concat", ["z", "z", "y", "z"], ["w"], name="/c/Concat", axis=0),
    ]
    f4 = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])]
    graph = helper.make_graph(
        nodes, "awkward", f4,
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("cat", TensorProto.FLOAT, [6]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("cat", TensorProto.FLOAT, [6])],
        [numpy_helper.from_array(np.ones((6, 4), np.float32), "W")])
    return load_model(save(make_model(graph), tmp_path / "awkward.onnx"))


def _both_ways(model: Model, state: ExpandState, direction: str,
               monkeypatch: pytest.MonkeyPatch) -> tuple[Layout, Layout, int]:
    """The layout with the edges found on arrays and found by the walk, and how often
    the arrays answered."""
    real = edge_collect.whole_graph_edges
    calls: list[Any] = []

    def counted(*args: Any) -> Any:
        found = real(*args)
        calls.append(found)
        return found

    monkeypatch.setattr(edge_collect, "whole_graph_edges", counted)
    arrays = build_layout(model, state, direction)  # type: ignore[arg-type]
    monkeypatch.setattr(edge_collect.EdgeCollector, "_on_arrays", lambda self: False)
    walked = build_layout(model, state, direction)  # type: ignore[arg-type]
    return arrays, walked, len(calls)


def _same(a: Layout, b: Layout) -> None:
    assert (a.width, a.height) == (b.width, b.height)
    assert [(x.id, x.x, x.y, x.width, x.height) for x in a.boxes] == [
        (x.id, x.x, x.y, x.width, x.height) for x in b.boxes]
    assert a.edges == b.edges  # same order, ends, tensors, labels, routes


@pytest.mark.parametrize("direction", ["TB", "LR"])
def test_edges_on_arrays_are_the_walks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       direction: str) -> None:
    model = _awkward_model(tmp_path)
    state = ExpandState()
    state.expand_all(model.graph)
    arrays, walked, answered = _both_ways(model, state, direction, monkeypatch)
    assert answered == 1
    _same(arrays, walked)
    drawn = {(e.source, e.target, e.value): e.label for e in arrays.edges}
    ids = {n.name: n.id for n in model.graph.nodes}
    assert (ids["/a/Double"], ids["/a/Scale"], "d") in drawn
    assert sum(k[1] == ids["/b/Concat"] for k in drawn) == 2  # s0 once, s1 once
    assert drawn[("in:x", "out:x", "x")] == "4"
    assert sum(k[1] == ids["/c/Concat"] for k in drawn) == 2  # z once, y once
    assert sum(k[1] == "out:cat" for k in drawn) == 1  # an output listed twice
    assert not any(k[2] in ("c", "W") for k in drawn)  # folded, weight: lines


def test_collapsed_groups_are_still_walked(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    model = _awkward_model(tmp_path)
    state = ExpandState()  # every group collapsed: boxes stand for hidden nodes
    arrays, walked, answered = _both_ways(model, state, "TB", monkeypatch)
    assert answered == 0
    _same(arrays, walked)


def test_a_real_model_on_arrays_is_the_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    model = load_model(ladder_model("bert12.onnx"))
    state = default_state(model.graph)
    arrays, walked, answered = _both_ways(model, state, "TB", monkeypatch)
    assert answered == 1 and len(arrays.edges) > 900
    _same(arrays, walked)


def test_units_count_their_pieces_in_piece_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each unit's edge keys are counted at once; the counts and their order (which the
    unit's layout reads) are those of counting piece after piece."""
    model = _awkward_model(tmp_path)
    state = ExpandState()
    state.expand_all(model.graph)
    seen: list[tuple[Unit, list[Any], dict[Any, int]]] = []
    real = build.split_edges

    def spying(found: Any, units: dict[str, Unit], parent: Any, chain: Any) -> Pieces:
        before = {id(u): dict(u.edges) for u in units.values()}
        pieces = real(found, units, parent, chain)
        for unit in units.values():
            want = dict(before[id(unit)])
            for u, key in zip(pieces.units, pieces.keys, strict=True):
                if u is unit:
                    want[key] = want.get(key, 0) + 1
            seen.append((unit, list(want.items()), dict(unit.edges)))
        assert pieces.nums.tolist() == [u.num for u in pieces.units]
        return pieces

    monkeypatch.setattr(build, "split_edges", spying)
    build_layout(model, state)
    assert any(sum(c.values()) > len(c) for _u, _w, c in seen)  # a key counted twice
    for _unit, want, counted in seen:
        assert list(counted.items()) == want


def test_edges_are_tuples_made_in_c(tmp_path: Path) -> None:
    model = _awkward_model(tmp_path)
    state = ExpandState()
    state.expand_all(model.graph)
    layout = build_layout(model, state)
    edge = layout.edges[0]
    assert isinstance(edge, tuple) and type(edge) is Edge
    assert isinstance(edge.route, bytes) and edge.point_count == len(edge.points) >= 2
    as_list = Edge(edge.source, edge.target, edge.value, edge.label, edge.points, edge.back)
    assert as_list == edge and as_list.packed == edge.packed
    assert [as_list] == [edge] and (as_list != edge) is False  # tuple's != compares routes
    assert edge._replace(label="other") != edge
    assert edge.relabelled("other").route is edge.route
    assert pickle.loads(pickle.dumps(edge, 5)) == edge
    back = decode_layout(memoryview(encode_layout(layout)))
    assert back is not None and back.edges == layout.edges
    with pytest.raises(AttributeError):
        edge.label = "x"  # type: ignore[misc]
