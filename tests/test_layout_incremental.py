"""Re-layout after a toggle lays out only the units the toggle changed (layout_dag's memo)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from onnx import TensorProto, helper

from onnxstudio.layout import ExpandState, build_layout, layered
from onnxstudio.model import Model, load_model
from tests.builders import make_model, save


def _nested_model(tmp_path: Path) -> Model:
    """Groups /g0../g5 of different lengths, each with an inner group: no two units alike,
    so the memo can only help by remembering what did not change."""
    nodes = []
    prev = "x"
    for g in range(6):
        for i in range(g + 4):
            name = f"/g{g}/inner/Relu_{i}" if i > 1 else f"/g{g}/Relu_{i}"
            nodes.append(helper.make_node("Relu", [prev], [f"v{g}_{i}"], name=name))
            prev = f"v{g}_{i}"
    graph = helper.make_graph(
        nodes, "nested", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [2, 8])])
    return load_model(save(make_model(graph), tmp_path / "nested.onnx"))


def _placed(layout: Any) -> dict[str, tuple[float, float]]:
    return {b.id: (b.x, b.y) for b in layout.boxes}


def test_a_toggle_lays_out_only_the_chain_of_units_it_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _nested_model(tmp_path)
    state = ExpandState()
    state.expand_all(model.graph)
    assert "/g3/inner" in state.groups
    calls: list[int] = []
    real = layered._layout_dag

    def counted(*args: Any, **kwargs: Any) -> layered.DagResult:
        calls.append(len(args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(layered, "_layout_dag", counted)
    layered._CACHE.clear()
    build_layout(model, state)
    assert len(calls) == 13  # the root, six groups and six inner groups
    calls.clear()
    state.toggle("/g3/inner")  # collapsed: /g3 and the root change, nothing else
    collapsed = build_layout(model, state)
    assert len(calls) == 2
    assert collapsed.box("/g3/inner") is not None
    calls.clear()
    state.toggle("/g3/inner")  # back as it was: every unit is remembered
    again = build_layout(model, state)
    assert calls == []
    layered._CACHE.clear()
    assert _placed(again) == _placed(build_layout(model, state))  # the same as cold
